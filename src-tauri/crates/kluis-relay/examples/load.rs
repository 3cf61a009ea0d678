//! Load benchmark of kluis-relay (not a test): starts the release `kluis-relay` binary on
//! 127.0.0.1, parks 1,000 long-polls (one per inbox), sends 200 callbacks a second for 15 s to
//! random inboxes, and reports the delivery latency (callback sent → long-poll answered), the
//! callbacks the relay refused, and the relay's peak RSS.
//!
//!   cargo build --release --bin kluis-relay && cargo run --release -p kluis-relay --example load

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;

const POLLERS: usize = 1000;
const RATE: u64 = 200;
const SECONDS: u64 = 15;
const SECRET: &str = "load-test-secret-0123456789abcdef";

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let bin = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("kluis-relay");
    let data = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(&bin)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--data"])
        .arg(data.path())
        .env("KLUIS_RELAY_SECRET", SECRET)
        .env("KLUIS_LOG", "warn")
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e} (build it first)", bin.display()));
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(2000)
        .build()
        .unwrap();
    while client.get(format!("{base}/healthz")).send().await.is_err() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // 1,000 inboxes, each with a long-poll loop that records when each callback arrives.
    let mut paths = Vec::new();
    let arrivals: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    for _ in 0..POLLERS {
        let created = api(client.post(format!("{base}/api/inboxes"))).await;
        let inbox = created["inbox"].as_str().unwrap().to_string();
        paths.push(created["callback_path"].as_str().unwrap().to_string());
        let (client, base, arrivals) = (client.clone(), base.clone(), arrivals.clone());
        tokio::spawn(async move {
            let mut after = 0i64;
            loop {
                let url = format!("{base}/api/inboxes/{inbox}/events?after={after}&wait=30");
                let Ok(response) = client.get(url).bearer_auth(SECRET).send().await else {
                    continue;
                };
                let Ok(body) = response.json::<serde_json::Value>().await else {
                    continue;
                };
                let now = Instant::now();
                for event in body["events"].as_array().into_iter().flatten() {
                    arrivals
                        .lock()
                        .await
                        .push((event["query"].as_str().unwrap_or("").to_string(), now));
                }
                after = body["next"].as_i64().unwrap_or(after);
            }
        });
    }
    // Let every poll park.
    loop {
        let stats = api(client.get(format!("{base}/api/stats"))).await;
        if stats["polls_waiting"].as_u64() == Some(POLLERS as u64) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "{POLLERS} long-polls parked; relay RSS {} MiB",
        rss_kib(child.id()) / 1024
    );

    // 200 callbacks a second, each with a unique query to match its arrival.
    let sent: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let refused = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / RATE));
    for n in 0..RATE * SECONDS {
        ticker.tick().await;
        let path = paths[(n as usize * 7919) % POLLERS].clone();
        let (client, base, sent, refused) =
            (client.clone(), base.clone(), sent.clone(), refused.clone());
        tokio::spawn(async move {
            let query = format!("id=cb-{n}");
            let started = Instant::now();
            match client.get(format!("{base}{path}?{query}")).send().await {
                Ok(r) if r.status().is_success() => sent.lock().await.push((query, started)),
                _ => {
                    refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        });
    }
    tokio::time::sleep(Duration::from_secs(2)).await;

    let arrivals = arrivals.lock().await;
    let arrived: std::collections::HashMap<&str, Instant> =
        arrivals.iter().map(|(q, t)| (q.as_str(), *t)).collect();
    let mut latencies: Vec<f64> = sent
        .lock()
        .await
        .iter()
        .filter_map(|(q, started)| {
            arrived
                .get(q.as_str())
                .map(|t| t.duration_since(*started).as_secs_f64() * 1000.0)
        })
        .collect();
    latencies.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!("callbacks sent            {}", RATE * SECONDS);
    println!("delivered to long-polls   {}", latencies.len());
    println!(
        "refused by the relay      {}",
        refused.load(std::sync::atomic::Ordering::Relaxed)
    );
    println!(
        "delivery latency p50      {:.1} ms   (target ≤ 100)",
        pct(0.5)
    );
    println!("delivery latency p95      {:.1} ms", pct(0.95));
    println!(
        "delivery latency max      {:.1} ms",
        latencies.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "relay peak RSS            {} MiB",
        rss_kib(child.id()) / 1024
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// An inbox-API call with the relay's secret, answered with JSON.
async fn api(request: reqwest::RequestBuilder) -> serde_json::Value {
    request
        .bearer_auth(SECRET)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}
