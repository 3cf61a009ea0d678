//! Load benchmark of kluis-relay (not a test; tests/bench/relay.sh starts the relays and runs
//! it): many offices' long-polls parked at once, callbacks at a steady rate to random inboxes,
//! optionally one relay instance killed (`kill -9`) in the middle. Reports callbacks lost and
//! redelivered, the delivery latency (callback sent → long-poll answered), and each instance's
//! RSS with every poll parked; exits 1 when a callback was lost or a latency target missed.
//!
//!   cargo run --release -p kluis-relay --example load -- --url URL --keys FILE [--pollers N]
//!     [--rate R] [--seconds S] [--metrics URL]... [--pid PID]... [--kill PID --kill-after S]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;

#[derive(Parser)]
struct Args {
    /// Where clients and the service reach the relay (nginx in front of instances, or one).
    #[arg(long)]
    url: String,
    /// Tenant keys, one a line; the inboxes are shared out among them.
    #[arg(long)]
    keys: std::path::PathBuf,
    #[arg(long, default_value_t = 10_000)]
    pollers: usize,
    /// Callbacks a second.
    #[arg(long, default_value_t = 1000)]
    rate: u64,
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Each instance's metrics URL (to know when every poll is parked).
    #[arg(long)]
    metrics: Vec<String>,
    /// Each instance's process id (for its RSS).
    #[arg(long)]
    pid: Vec<u32>,
    /// An instance to kill (SIGKILL) after --kill-after seconds of callbacks.
    #[arg(long, requires = "kill_after")]
    kill: Option<u32>,
    #[arg(long)]
    kill_after: Option<u64>,
}

fn rss_mib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0)
        / 1024
}

/// Long-polls parked at the instance whose metrics are at `url`.
async fn parked(client: &reqwest::Client, url: &str) -> u64 {
    let Ok(response) = client.get(url).send().await else {
        return 0;
    };
    let text = response.text().await.unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("kluis_relay_long_polls_parked "))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0)
}

/// Refusals and failures seen, by what and status ("poll 503", "send error", …).
static TROUBLE: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn trouble(what: &str, response: Option<&reqwest::Response>) {
    let status = response.map_or("error".to_string(), |r| r.status().as_u16().to_string());
    TROUBLE.lock().unwrap().push(format!("{what} {status}"));
}

/// Waits out a refusal: its Retry-After, or a moment.
async fn back_off(response: Option<&reqwest::Response>) {
    let seconds = response
        .and_then(|r| r.headers().get("retry-after")?.to_str().ok()?.parse().ok())
        .unwrap_or(0u64);
    tokio::time::sleep(Duration::from_millis(100 + 1000 * seconds.min(2))).await;
}

struct Inbox {
    key: String,
    id: String,
    path: String,
}

async fn create(client: &reqwest::Client, url: &str, key: &str) -> Inbox {
    loop {
        let response = client
            .post(format!("{url}/api/inboxes"))
            .bearer_auth(key)
            .send()
            .await;
        match response {
            Ok(r) if r.status().is_success() => {
                let body: serde_json::Value = r.json().await.unwrap();
                return Inbox {
                    key: key.to_string(),
                    id: body["inbox"].as_str().unwrap().into(),
                    path: body["callback_path"].as_str().unwrap().into(),
                };
            }
            Ok(r) => back_off(Some(&r)).await,
            Err(_) => back_off(None).await,
        }
    }
}

/// Long-polls `inbox` forever from its cursor, recording each delivery and acknowledging it.
async fn poll(
    client: reqwest::Client,
    url: String,
    inbox: Arc<Inbox>,
    deliveries: Arc<Mutex<Vec<(u64, Instant)>>>,
) {
    let mut after = 0i64;
    loop {
        let events = format!(
            "{url}/api/inboxes/{}/events?after={after}&wait=25",
            inbox.id
        );
        let response = match client.get(events).bearer_auth(&inbox.key).send().await {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => {
                trouble("poll", Some(&r));
                back_off(Some(&r)).await;
                continue;
            }
            Err(_) => {
                trouble("poll", None);
                back_off(None).await;
                continue;
            }
        };
        let Ok(body) = response.json::<serde_json::Value>().await else {
            continue;
        };
        let now = Instant::now();
        let batch: Vec<u64> = body["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["query"].as_str()?.strip_prefix("id=")?.parse().ok())
            .collect();
        if batch.is_empty() {
            continue;
        }
        deliveries
            .lock()
            .unwrap()
            .extend(batch.into_iter().map(|id| (id, now)));
        after = body["next"].as_i64().unwrap_or(after);
        let _ = client
            .post(format!("{url}/api/inboxes/{}/ack", inbox.id))
            .bearer_auth(&inbox.key)
            .json(&serde_json::json!({ "up_to": after }))
            .send()
            .await;
    }
}

/// Sends callback `id` to `path` as the service would, retrying a refusal a few times.
async fn send(client: reqwest::Client, url: String, path: String, id: u64) -> bool {
    for _ in 0..5 {
        match client.get(format!("{url}{path}?id={id}")).send().await {
            Ok(r) if r.status().is_success() => return true,
            Ok(r) => {
                trouble("callback", Some(&r));
                back_off(Some(&r)).await
            }
            Err(_) => {
                trouble("callback", None);
                back_off(None).await
            }
        }
    }
    false
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let keys: Vec<String> = std::fs::read_to_string(&args.keys)
        .expect("the keys file")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    assert!(
        !keys.is_empty(),
        "no tenant keys in {}",
        args.keys.display()
    );
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.pollers + 1000)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();

    let started = Instant::now();
    let mut made = tokio::task::JoinSet::new();
    let gate = Arc::new(tokio::sync::Semaphore::new(64));
    for i in 0..args.pollers {
        let (client, url, key, gate) = (
            client.clone(),
            args.url.clone(),
            keys[i % keys.len()].clone(),
            gate.clone(),
        );
        made.spawn(async move {
            let _permit = gate.acquire().await.unwrap();
            create(&client, &url, &key).await
        });
    }
    let inboxes: Vec<Arc<Inbox>> = made.join_all().await.into_iter().map(Arc::new).collect();
    println!(
        "{} inboxes of {} tenants made in {:.1} s",
        inboxes.len(),
        keys.len(),
        started.elapsed().as_secs_f64()
    );

    let deliveries: Arc<Mutex<Vec<(u64, Instant)>>> = Arc::default();
    for inbox in &inboxes {
        tokio::spawn(poll(
            client.clone(),
            args.url.clone(),
            inbox.clone(),
            deliveries.clone(),
        ));
    }
    let metrics = reqwest::Client::new();
    let parked_at = Instant::now();
    loop {
        let mut total = 0;
        for url in &args.metrics {
            total += parked(&metrics, url).await;
        }
        if total >= args.pollers as u64 || parked_at.elapsed() > Duration::from_secs(120) {
            println!("{total} long-polls parked");
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for (i, pid) in args.pid.iter().enumerate() {
        let at = args.metrics.get(i).map(String::as_str).unwrap_or("");
        println!(
            "instance {pid}: {} long-polls parked, RSS {} MiB",
            parked(&metrics, at).await,
            rss_mib(*pid, "VmRSS")
        );
    }

    let sent_at: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let refused = Arc::new(AtomicU64::new(0));
    let mut senders = tokio::task::JoinSet::new();
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / args.rate));
    let total = args.rate * args.seconds;
    let kill_at = args.kill_after.map(|s| s * args.rate);
    for id in 0..total {
        ticker.tick().await;
        if Some(id) == kill_at {
            let pid = args.kill.unwrap();
            // SAFETY: kill(2) with a pid the caller named.
            #[cfg(unix)]
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL)
            };
            println!("killed instance {pid} (SIGKILL) after {} callbacks", id);
        }
        let pick = (uuid::Uuid::new_v4().as_u128() % inboxes.len() as u128) as usize;
        let (client, url, path) = (client.clone(), args.url.clone(), inboxes[pick].path.clone());
        let (sent_at, refused) = (sent_at.clone(), refused.clone());
        senders.spawn(async move {
            let at = Instant::now();
            if send(client, url, path, id).await {
                sent_at.lock().unwrap().insert(id, at);
            } else {
                refused.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    senders.join_all().await;
    let stored = sent_at.lock().unwrap().len();
    // Let the last deliveries arrive.
    let waited = Instant::now();
    while waited.elapsed() < Duration::from_secs(30) {
        let delivered: std::collections::HashSet<u64> = deliveries
            .lock()
            .unwrap()
            .iter()
            .map(|(id, _)| *id)
            .collect();
        if delivered.len() >= stored {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let deliveries = deliveries.lock().unwrap();
    let mut first: HashMap<u64, Instant> = HashMap::new();
    for (id, at) in deliveries.iter() {
        first.entry(*id).or_insert(*at);
    }
    let sent_at = sent_at.lock().unwrap();
    let lost = sent_at.keys().filter(|id| !first.contains_key(id)).count();
    // Latency of the callbacks sent before the kill (or all), and of those sent after it.
    let killed = kill_at.unwrap_or(u64::MAX);
    let latencies = |keep: &dyn Fn(u64) -> bool| {
        let mut ms: Vec<f64> = sent_at
            .iter()
            .filter(|(id, _)| keep(**id))
            .filter_map(|(id, sent)| Some(first.get(id)?.duration_since(*sent).as_secs_f64() * 1e3))
            .collect();
        ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
        ms
    };
    let pct = |ms: &[f64], p: f64| {
        ms.get(((ms.len() as f64 * p) as usize).min(ms.len().saturating_sub(1)))
            .copied()
            .unwrap_or(f64::NAN)
    };
    let steady = latencies(&|id| id < killed);
    let after = latencies(&|id| id >= killed);
    let all = latencies(&|_| true);
    let (p50, p99) = (pct(&steady, 0.50), pct(&steady, 0.99));
    println!("callbacks sent              {total}");
    println!("stored (200)                {stored}");
    println!(
        "refused after 5 tries       {}",
        refused.load(Ordering::Relaxed)
    );
    println!("lost (stored, never delivered) {lost}");
    println!(
        "redelivered (at least once) {}",
        deliveries.len() - first.len()
    );
    let before = if kill_at.is_some() {
        " before the kill"
    } else {
        ""
    };
    println!("delivery latency p50{before}  {p50:.1} ms   (target ≤ 10)");
    println!("delivery latency p99{before}  {p99:.1} ms   (target ≤ 100)");
    println!(
        "delivery latency max{before}  {:.1} ms",
        steady.last().copied().unwrap_or(f64::NAN)
    );
    if kill_at.is_some() {
        println!(
            "after the kill: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; whole run p99 {:.1} ms",
            pct(&after, 0.50),
            pct(&after, 0.99),
            after.last().copied().unwrap_or(f64::NAN),
            pct(&all, 0.99)
        );
        let slow = after.iter().filter(|ms| **ms > 100.0).count();
        println!(
            "after the kill: {slow} of {} callbacks slower than 100 ms",
            after.len()
        );
    }
    // When the slow deliveries were sent: a burst (a fail-over, a wave of polls looking again
    // or timing out together) shows as a few busy seconds.
    let mut slow_by_second: std::collections::BTreeMap<u64, usize> = Default::default();
    for (id, sent) in sent_at.iter() {
        if first
            .get(id)
            .is_some_and(|at| at.duration_since(*sent) > Duration::from_millis(100))
        {
            *slow_by_second.entry(id / args.rate).or_default() += 1;
        }
    }
    let busy: Vec<String> = slow_by_second
        .iter()
        .filter(|(_, n)| **n >= 5)
        .map(|(second, n)| format!("{second}s:{n}"))
        .collect();
    println!("slower than 100 ms, by second sent: {}", busy.join(" "));
    for pid in &args.pid {
        println!("instance {pid}: peak RSS {} MiB", rss_mib(*pid, "VmHWM"));
    }
    let mut seen: HashMap<String, u64> = HashMap::new();
    for what in TROUBLE.lock().unwrap().iter() {
        *seen.entry(what.clone()).or_default() += 1;
    }
    let mut seen: Vec<_> = seen.into_iter().collect();
    seen.sort();
    for (what, n) in seen {
        println!("answered {what:<20} {n} times (then retried)");
    }
    let ok = lost == 0 && p50 <= 10.0 && p99 <= 100.0;
    std::process::exit(if ok { 0 } else { 1 });
}
