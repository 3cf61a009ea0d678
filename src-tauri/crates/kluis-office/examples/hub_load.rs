//! Load benchmark of the office hub (not a test: tests/bench/hub.sh starts one kluis-relay on a
//! throw-away PostgreSQL, serving TLS, and runs this against it).
//!
//! Many offices' PCs at once, as issue 46 sizes them: `--offices` (1,000) × `--pcs` (10) PCs
//! with `--klanten` (200) klanten each — a PC's klanten overlap its neighbour's by a tenth, so
//! every office has klanten planned on two PCs. Each PC's key is added straight to the
//! database (as `kluis-relay tenant pc-key add` does, without 10,000 processes), each office
//! gets its own office key, and every PC puts its sealed report (what `kluis` sends) at the
//! hub. Then for `--seconds`: klanten's turns at `--rate` a second from random PCs (a "yours"
//! held for a simulated backup of up to two seconds, then ended; a klant two PCs plan asked for
//! by both, so "held" and "done" are answered too), reports put again as an hourly rhythm
//! sped up tenfold, and once a second a random office's view read and opened as a PC reads it
//! ([`OfficeView::read`]: every PC's report fetched, opened with the office key, put together).
//!
//! Reports the latency of a turn (p50/p99/max, asked → answered), of ending one, of putting a
//! report and of reading the view, refusals by status, and the hub's RSS; exits 1 when a
//! request was refused or failed, or p99 of a turn > 50 ms, or p99 of the view > 200 ms.
//!
//!   KLUIS_RELAY_DATABASE_URL=postgres://… cargo run --release -p kluis-office --example \
//!     hub_load -- --url https://127.0.0.1:PORT --ca CA.pem --pid PID [--offices N] [--pcs N]
//!     [--klanten N] [--rate R] [--seconds S]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use kluis_core::Secret;
use kluis_office::{KlantId, KlantReport, Membership, OfficeKey, OfficeView, PcReport};
use kluis_relay::storage::office::OfficeStore;
use kluis_relay::{PgStore, Quota, Storage};

#[derive(Parser)]
struct Args {
    /// The hub's address (https).
    #[arg(long)]
    url: String,
    /// The CA the hub's certificate is signed by (PEM).
    #[arg(long)]
    ca: std::path::PathBuf,
    /// The hub's process id (for its RSS).
    #[arg(long)]
    pid: u32,
    /// The hub's database, from the environment (a password never goes in arguments).
    #[arg(long, env = "KLUIS_RELAY_DATABASE_URL", hide_env_values = true)]
    database_url: String,
    #[arg(long, default_value_t = 1000)]
    offices: usize,
    #[arg(long, default_value_t = 10)]
    pcs: usize,
    /// Klanten on each PC.
    #[arg(long, default_value_t = 200)]
    klanten: usize,
    /// Turns asked for a second, across all offices.
    #[arg(long, default_value_t = 500)]
    rate: u64,
    #[arg(long, default_value_t = 60)]
    seconds: u64,
}

/// The service every simulated klant is at (only its id reaches the hub).
const SERVICE: &str = "https://api.example.nl/webservice_v2";
/// A PC's klanten start this far after its neighbour's: the last tenth of each PC's overlaps
/// the next PC's first.
fn stride(klanten: usize) -> usize {
    klanten - klanten / 10
}

struct Pc {
    name: String,
    key: String,
}

struct Office {
    name: String,
    key: OfficeKey,
    pcs: Vec<Pc>,
}

/// Latencies of one kind of request, and what went wrong with them.
#[derive(Default)]
struct Measured {
    micros: Mutex<Vec<u64>>,
    trouble: Mutex<Vec<String>>,
}

impl Measured {
    fn took(&self, since: Instant) {
        let micros = since.elapsed().as_micros() as u64;
        self.micros.lock().unwrap().push(micros);
    }

    fn failed(&self, what: String) {
        self.trouble.lock().unwrap().push(what);
    }

    /// "n, p50, p99, max" in ms; p99 in ms returned.
    fn summary(&self, what: &str) -> f64 {
        let mut all = self.micros.lock().unwrap().clone();
        all.sort_unstable();
        let at = |q: f64| match all.len() {
            0 => 0.0,
            n => all[((n as f64 * q).ceil() as usize).clamp(1, n) - 1] as f64 / 1000.0,
        };
        let p99 = at(0.99);
        println!(
            "{what:<22} {:>7}   p50 {:>7.1} ms   p99 {:>7.1} ms   max {:>7.1} ms",
            all.len(),
            at(0.50),
            p99,
            at(1.0)
        );
        let trouble = self.trouble.lock().unwrap();
        if !trouble.is_empty() {
            let mut counted = std::collections::BTreeMap::<&str, usize>::new();
            for t in trouble.iter() {
                *counted.entry(t.as_str()).or_default() += 1;
            }
            println!("{:<22} refused or failed: {counted:?}", "");
        }
        p99
    }

    /// Forgets what was measured (the first reports, apart from those under load).
    fn reset(&self) {
        self.micros.lock().unwrap().clear();
    }

    fn troubled(&self) -> bool {
        !self.trouble.lock().unwrap().is_empty()
    }
}

/// A small random number source per task (xorshift): the load needs spread, not secrecy.
struct Dice(u64);

impl Dice {
    fn new() -> Self {
        static SEED: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
        Dice(SEED.fetch_add(0x6A09_E667_F3BC_C909, Ordering::Relaxed) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
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

/// Every office as a tenant with its PCs' keys, straight into the hub's database.
async fn add_offices(args: &Args) -> Vec<Office> {
    let store = PgStore::connect(&args.database_url, 8)
        .await
        .expect("the hub's database");
    let mut offices = Vec::with_capacity(args.offices);
    for o in 0..args.offices {
        let name = format!("office-{o:04}");
        let tenant_key = kluis_relay::tenants::new_key();
        let added = (store.add_tenant(&name, Quota::UNLIMITED, &tenant_key.id, tenant_key.hash))
            .await
            .expect("a tenant added");
        assert!(added, "{name} is new (a fresh database)");
        let mut pcs = Vec::with_capacity(args.pcs);
        for p in 0..args.pcs {
            let pc = format!("PC-{p:02}");
            let key = kluis_relay::tenants::new_key();
            let added = (store.add_pc(&name, &pc, &key.id, key.hash))
                .await
                .expect("a PC added");
            assert!(added, "{name}'s {pc} is new");
            pcs.push(Pc {
                name: pc,
                key: key.text,
            });
        }
        offices.push(Office {
            name,
            key: OfficeKey::generate().expect("an office key"),
            pcs,
        });
    }
    offices
}

/// Klant `k` of `office`'s username (unique across offices).
fn username(office: &Office, k: usize) -> String {
    format!("{}-klant-{k:05}", office.name)
}

/// PC `p`'s report of its klanten, sealed with its office's key, as `kluis` sends it.
fn sealed_report(office: &Office, p: usize, klanten: usize) -> Vec<u8> {
    let now = kluis_core::clock::now_ms();
    let first = p * stride(klanten);
    let report = PcReport {
        version: kluis_office::REPORT_VERSION,
        pc: office.pcs[p].name.clone(),
        sent_ms: now,
        klanten: (first..first + klanten)
            .map(|k| {
                let username = username(office, k);
                KlantReport {
                    klant: KlantId::of(&office.key, SERVICE, &username)
                        .expect("a klant id")
                        .as_str()
                        .to_string(),
                    name: format!("Klant {k:05} B.V."),
                    service: SERVICE.into(),
                    username,
                    plan: Some("every day at 02:00".into()),
                    last_backup_ms: Some(now - 3 * 3_600_000),
                    backed_up_elsewhere: None,
                    last_error: (k % 50 == 0).then(|| "The service answered 503".into()),
                    overdue: false,
                    next_due_ms: Some(now + 21 * 3_600_000),
                    copies: Some((1, 1)),
                    restore_test_failed: false,
                    restore_test_overdue: false,
                }
            })
            .collect(),
    };
    let plain = serde_json::to_vec(&report).expect("a report serialises");
    kluis_office::sealed::seal(&office.key, &office.pcs[p].name, &plain).expect("sealed")
}

struct Load {
    args: Args,
    client: reqwest::Client,
    offices: Vec<Office>,
    turns: Measured,
    ends: Measured,
    reports: Measured,
    views: Measured,
    answers: Mutex<std::collections::BTreeMap<String, u64>>,
}

impl Load {
    async fn put_report(&self, o: usize, p: usize) {
        let (office, pc) = (&self.offices[o], &self.offices[o].pcs[p]);
        let sealed = sealed_report(office, p, self.args.klanten);
        let started = Instant::now();
        let sent = (self
            .client
            .put(format!("{}/api/office/report", self.args.url)))
        .bearer_auth(&pc.key)
        .body(sealed)
        .send()
        .await;
        match sent {
            Ok(r) if r.status().is_success() => self.reports.took(started),
            Ok(r) => self
                .reports
                .failed(format!("report {}", r.status().as_u16())),
            Err(_) => self.reports.failed("report error".into()),
        }
    }

    /// PC `p` of office `o` asks for klant `k`'s turn; a turn it gets is held for a simulated
    /// backup of up to two seconds, then ended as backed up.
    async fn turn(&self, o: usize, p: usize, k: usize, backup: Duration) {
        let (office, pc) = (&self.offices[o], &self.offices[o].pcs[p]);
        let klant = KlantId::of(&office.key, SERVICE, &username(office, k)).expect("a klant id");
        let url = format!("{}/api/office/turns/{}", self.args.url, klant.as_str());
        let started = Instant::now();
        let asked = (self.client.post(&url))
            .bearer_auth(&pc.key)
            .json(&serde_json::json!({"hold_ms": 600_000, "slot_age_ms": 20 * 3_600_000}))
            .send()
            .await;
        let answer = match asked {
            Ok(r) if r.status().is_success() => r.json::<serde_json::Value>().await,
            Ok(r) => return self.turns.failed(format!("turn {}", r.status().as_u16())),
            Err(_) => return self.turns.failed("turn error".into()),
        };
        self.turns.took(started);
        let turn = answer
            .ok()
            .and_then(|a| Some(a["turn"].as_str()?.to_string()));
        let turn = turn.unwrap_or_else(|| "unreadable".into());
        *self
            .answers
            .lock()
            .unwrap()
            .entry(turn.clone())
            .or_default() += 1;
        if turn != "yours" {
            return;
        }
        tokio::time::sleep(backup).await;
        let started = Instant::now();
        let ended = (self.client.delete(format!("{url}?backed_up=true")))
            .bearer_auth(&pc.key)
            .send()
            .await;
        match ended {
            Ok(r) if r.status().is_success() => self.ends.took(started),
            Ok(r) => self.ends.failed(format!("end {}", r.status().as_u16())),
            Err(_) => self.ends.failed("end error".into()),
        }
    }

    /// Office `o`'s view, read by its first PC as `kluis office status` reads it.
    async fn view(&self, o: usize) {
        let office = &self.offices[o];
        let membership = Membership {
            hub: self.args.url.clone(),
            pc: office.pcs[0].name.clone(),
            hub_ca_pem: std::fs::read_to_string(&self.args.ca).ok(),
            joined_ms: 0,
        };
        let hub = kluis_office::Hub::new(&membership, Secret::new(office.pcs[0].key.clone()))
            .expect("a hub");
        let started = Instant::now();
        match OfficeView::read(&hub, &office.key).await {
            Ok(view) => {
                self.views.took(started);
                let distinct = (self.args.pcs - 1) * stride(self.args.klanten) + self.args.klanten;
                if view.klanten.len() != distinct || view.pcs.len() != self.args.pcs {
                    self.views.failed(format!(
                        "view of {} PCs and {} klanten",
                        view.pcs.len(),
                        view.klanten.len()
                    ));
                }
            }
            Err(e) => self.views.failed(format!("view {}", e.code())),
        }
    }
}

/// Runs `each` on `items` with at most `at_once` at a time.
async fn each_at_once<T: Send + 'static>(
    items: Vec<T>,
    at_once: usize,
    each: impl Fn(T) -> tokio::task::JoinHandle<()>,
) {
    let mut running = tokio::task::JoinSet::new();
    for item in items {
        if running.len() >= at_once {
            running.join_next().await;
        }
        let handle = each(item);
        running.spawn(async move { handle.await.ok() });
    }
    while running.join_next().await.is_some() {}
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let ca = std::fs::read(&args.ca).expect("the hub's CA");
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("a PEM CA"))
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a client");

    let started = Instant::now();
    let offices = add_offices(&args).await;
    println!(
        "added {} offices with {} PCs each in {:.1} s",
        offices.len(),
        args.pcs,
        started.elapsed().as_secs_f64()
    );
    let load = Arc::new(Load {
        args,
        client,
        offices,
        turns: Measured::default(),
        ends: Measured::default(),
        reports: Measured::default(),
        views: Measured::default(),
        answers: Mutex::default(),
    });
    let (offices, pcs) = (load.args.offices, load.args.pcs);

    // Every PC's first report (its office's view is whole from the start).
    let started = Instant::now();
    let every_pc: Vec<(usize, usize)> = (0..offices)
        .flat_map(|o| (0..pcs).map(move |p| (o, p)))
        .collect();
    let first = Arc::clone(&load);
    each_at_once(every_pc, 32, |(o, p)| {
        let load = Arc::clone(&first);
        tokio::spawn(async move { load.put_report(o, p).await })
    })
    .await;
    println!(
        "every PC's first report put in {:.1} s (hub RSS {} MiB)",
        started.elapsed().as_secs_f64(),
        rss_mib(load.args.pid, "VmRSS:")
    );
    let first_reports = load.reports.summary("first reports");
    load.reports.reset();

    // The load: turns at a steady rate, reports hourly ×10, a view a second.
    println!(
        "turns at {}/s, reports at {:.0}/s and a view a second, for {} s",
        load.args.rate,
        (offices * pcs) as f64 * 10.0 / 3600.0,
        load.args.seconds
    );
    let until = Instant::now() + Duration::from_secs(load.args.seconds);
    let mut tasks = tokio::task::JoinSet::new();
    let turns = Arc::clone(&load);
    tasks.spawn(async move {
        let load = turns;
        let mut dice = Dice::new();
        let mut tick = tokio::time::interval(Duration::from_secs(1) / load.args.rate as u32);
        let (stride, klanten) = (stride(load.args.klanten), load.args.klanten);
        let distinct = (pcs - 1) * stride + klanten;
        let mut running = tokio::task::JoinSet::new();
        while Instant::now() < until {
            tick.tick().await;
            let (o, k) = (dice.below(offices), dice.below(distinct));
            let p = (k / stride).min(pcs - 1);
            let backup = Duration::from_millis(dice.below(2000) as u64);
            let load_ = Arc::clone(&load);
            running.spawn(async move { load_.turn(o, p, k, backup).await });
            // A klant the previous PC plans too: that PC asks within the second.
            if p > 0 && k < p * stride + klanten / 10 && k >= p * stride {
                let load_ = Arc::clone(&load);
                let later = Duration::from_millis(dice.below(1000) as u64);
                running.spawn(async move {
                    tokio::time::sleep(later).await;
                    load_.turn(o, p - 1, k, backup).await
                });
            }
            while running.try_join_next().is_some() {}
        }
        while running.join_next().await.is_some() {}
    });
    let reports = Arc::clone(&load);
    tasks.spawn(async move {
        let load = reports;
        let mut dice = Dice::new();
        let per_sec = ((offices * pcs) as f64 * 10.0 / 3600.0).max(1.0);
        let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / per_sec));
        let mut running = tokio::task::JoinSet::new();
        while Instant::now() < until {
            tick.tick().await;
            let (o, p) = (dice.below(offices), dice.below(pcs));
            let load_ = Arc::clone(&load);
            running.spawn(async move { load_.put_report(o, p).await });
            while running.try_join_next().is_some() {}
        }
        while running.join_next().await.is_some() {}
    });
    let views = Arc::clone(&load);
    tasks.spawn(async move {
        let load = views;
        let mut dice = Dice::new();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        while Instant::now() < until {
            tick.tick().await;
            load.view(dice.below(offices)).await;
        }
    });
    while tasks.join_next().await.is_some() {}

    println!();
    let turn_p99 = load.turns.summary("turn asked");
    load.ends.summary("turn ended");
    load.reports.summary("reports (hourly ×10)");
    let view_p99 = load.views.summary("office view");
    println!("answers: {:?}", load.answers.lock().unwrap());
    println!(
        "hub RSS {} MiB (peak {} MiB); first reports' p99 {first_reports:.1} ms",
        rss_mib(load.args.pid, "VmRSS:"),
        rss_mib(load.args.pid, "VmHWM:")
    );
    let troubled = [&load.turns, &load.ends, &load.reports, &load.views]
        .iter()
        .any(|m| m.troubled());
    let mut missed = Vec::new();
    if troubled {
        missed.push("a request was refused or failed".to_string());
    }
    if turn_p99 > 50.0 {
        missed.push(format!("p99 of a turn {turn_p99:.1} ms > 50 ms"));
    }
    if view_p99 > 200.0 {
        missed.push(format!("p99 of the view {view_p99:.1} ms > 200 ms"));
    }
    match missed.is_empty() {
        true => std::process::ExitCode::SUCCESS,
        false => {
            println!("MISSED: {}", missed.join("; "));
            std::process::ExitCode::FAILURE
        }
    }
}
