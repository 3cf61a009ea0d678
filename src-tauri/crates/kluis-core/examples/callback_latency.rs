//! Benchmark: how long from the service's callback to the start of the download, with the
//! relay transport — callback → relay (TLS) → long-poll answer → `GET /webhook` → download
//! request. Everything runs on 127.0.0.1 over TLS: the simulator, an in-process kluis-relay,
//! and the backup job. The simulator timestamps its callback and the first download request
//! after it.
//!
//! `cargo run --release -p kluis-core --example callback_latency -- [RUNS]` (default 50).

use std::time::Duration;

use kluis_core::callback::RelayTransport;
use kluis_core::{
    BackupJob, BackupRequest, Destination, DownloadOptions, Downloader, History, Secret,
    ServiceClient, ServiceConfig, Session,
};
use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, DEMO_USERNAME};
use kluis_sim::{Sim, SimConfig};

const SECRET: &str = "benchmark-relay-secret-0123456789";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    kluis_https::install_crypto_provider();
    let mut sim_config = SimConfig {
        payload_size: 64 * 1024,
        ..SimConfig::default()
    };
    sim_config.faults.callback_delay = Duration::from_millis(200);
    let sim = Sim::start(sim_config).await.expect("simulator starts");

    let relay = kluis_relay::Relay::new(
        kluis_relay::SqliteStore::in_memory().expect("store"),
        kluis_relay::RelayConfig::new(SECRET.into()),
    );
    let ca = kluis_https::LocalCa::generate("relay CA").expect("CA");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("port");
    let relay_url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(kluis_https::serve_tls(
        listener,
        ca.server_config(&["127.0.0.1"]).expect("certificate"),
        kluis_relay::router(relay),
        Default::default(),
        std::future::pending(),
    ));

    let mut config = ServiceConfig::new(
        sim.base_url().as_str(),
        Secret::new(DEMO_API_KEY.to_string()),
        DEMO_USERNAME.into(),
        Secret::new(DEMO_PASSWORD),
        false,
    )
    .expect("settings");
    config.extra_ca_pem = Some(format!("{}{}", sim.ca_pem(), ca.ca_pem()));
    let transport =
        RelayTransport::new(&relay_url, Secret::new(SECRET), &config, None).expect("relay");
    let session = Session::new(ServiceClient::new(config.clone()).expect("client"));
    let downloader = Downloader::new(&config, DownloadOptions::default()).expect("downloader");
    let history = History::in_memory().expect("history");
    let out = tempfile::tempdir().expect("temp dir");
    let job = BackupJob {
        session: &session,
        transport: &transport,
        downloader: &downloader,
        history: &history,
        cancel: None,
        download_turns: None,
    };

    let mut latencies = Vec::with_capacity(runs);
    for _ in 0..runs {
        let request = BackupRequest {
            id: uuid::Uuid::new_v4(),
            profile: kluis_core::KlantKey::profile("bench"),
            owner: kluis_core::Owner::Cli,
            destination: Destination::Folder(out.path().to_path_buf()),
            callback_timeout: Duration::from_secs(30),
        };
        let saved = job.run(&request, &mut |_| {}).await.expect("backup");
        std::fs::remove_file(saved.path).expect("clean up");
        latencies.push(sim.callback_to_download().expect("timed"));
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    println!(
        "callback → download start via the relay, {runs} backups: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        ms(at(0.5)),
        ms(at(0.95)),
        ms(*latencies.last().unwrap())
    );
}
