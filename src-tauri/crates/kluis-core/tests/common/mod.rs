//! A test harness: the simulator over real TLS on 127.0.0.1 and a client wired to it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kluis_core::http::RetryPolicy;
use kluis_core::{
    BackupJob, BackupRequest, CallbackTransport, Destination, DownloadOptions, Downloader, History,
    JobEvent, ListenerTransport, Result, Saved, Secret, ServiceClient, ServiceConfig, Session,
};
use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, DEMO_USERNAME, RESTRICTED_API_KEY};
use kluis_sim::{Sim, SimConfig};

pub const FAST_RETRY: RetryPolicy = RetryPolicy {
    attempts: 4,
    first_delay: Duration::from_millis(10),
    max_delay: Duration::from_millis(50),
};

pub struct Harness {
    pub sim: Sim,
    pub config: ServiceConfig,
    pub session: Session,
    pub downloader: Downloader,
    pub transport: Arc<dyn CallbackTransport>,
    pub history: History,
    pub out: tempfile::TempDir,
}

pub async fn sim(configure: impl FnOnce(&mut SimConfig)) -> Sim {
    let mut config = SimConfig::default();
    config.faults.callback_delay = Duration::from_millis(30);
    config.faults.callback_retry_interval = Duration::from_millis(20);
    configure(&mut config);
    Sim::start(config).await.expect("simulator starts")
}

pub fn service_config(sim: &Sim, api_key: &str, password: &str) -> ServiceConfig {
    let mut config = ServiceConfig::new(
        sim.base_url().as_str(),
        Secret::new(api_key),
        DEMO_USERNAME.into(),
        Secret::new(password),
        false,
    )
    .expect("valid settings");
    config.extra_ca_pem = Some(sim.ca_pem().to_string());
    config
}

pub fn demo_config(sim: &Sim) -> ServiceConfig {
    service_config(sim, &DEMO_API_KEY.to_string(), DEMO_PASSWORD)
}

pub fn restricted_config(sim: &Sim) -> ServiceConfig {
    service_config(sim, &RESTRICTED_API_KEY.to_string(), DEMO_PASSWORD)
}

pub fn session(config: ServiceConfig) -> Session {
    Session::new(
        ServiceClient::new(config)
            .expect("client builds")
            .with_retry(FAST_RETRY),
    )
}

impl Harness {
    pub async fn new(configure: impl FnOnce(&mut SimConfig)) -> Harness {
        let sim = sim(configure).await;
        let config = demo_config(&sim);
        Harness::with(
            sim,
            config,
            DownloadOptions {
                retry: FAST_RETRY,
                ..DownloadOptions::default()
            },
        )
        .await
    }

    pub async fn with(sim: Sim, config: ServiceConfig, options: DownloadOptions) -> Harness {
        let transport: Arc<dyn CallbackTransport> = Arc::new(
            ListenerTransport::loopback()
                .await
                .expect("listener starts"),
        );
        Harness {
            session: session(config.clone()),
            downloader: Downloader::new(&config, options).expect("downloader builds"),
            config,
            sim,
            transport,
            history: History::in_memory().expect("history opens"),
            out: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn request(&self) -> BackupRequest {
        self.request_to(self.out.path())
    }

    pub fn request_to(&self, out: &Path) -> BackupRequest {
        BackupRequest {
            id: uuid::Uuid::new_v4(),
            profile: kluis_core::KlantKey::profile("test"),
            owner: kluis_core::Owner::Cli,
            destination: Destination::from_out(out).expect("destination"),
            // Long: a test that waits for a callback does not fail on a slow machine (a
            // loaded one took seconds to redeem a hundred junk ids before the real one); the
            // tests of the timeout itself set their own.
            callback_timeout: Duration::from_secs(60),
        }
    }

    pub fn job(&self) -> BackupJob<'_> {
        BackupJob {
            session: &self.session,
            transport: &*self.transport,
            downloader: &self.downloader,
            history: &self.history,
            cancel: None,
            download_turns: None,
        }
    }

    /// Runs a backup into the harness's temp dir, collecting the events.
    pub async fn backup(&self) -> (Result<Saved>, Vec<JobEvent>) {
        self.backup_with(self.request()).await
    }

    pub async fn backup_with(&self, request: BackupRequest) -> (Result<Saved>, Vec<JobEvent>) {
        let mut events = Vec::new();
        let outcome = self.job().run(&request, &mut |e| events.push(e)).await;
        (outcome, events)
    }

    /// Every entry of the output folder, hidden ones included.
    pub fn out_entries(&self) -> Vec<PathBuf> {
        entries(self.out.path())
    }
}

pub fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    all.sort();
    all
}

/// SHA-256 (hex) of a file on disk, computed independently of the code under test.
pub fn sha256_of(path: &Path) -> String {
    use sha2::Digest;
    let bytes = std::fs::read(path).unwrap();
    hex::encode(sha2::Sha256::digest(&bytes))
}

/// SHA-256 (hex) the simulator serves for a payload of `size` bytes.
pub fn expected_sha(size: u64) -> String {
    hex::encode(kluis_sim::payload::sha256(size))
}

/// A TLS-terminating forwarder to `target`: the office's reverse proxy, a tunnel's edge.
pub async fn tls_front(target: std::net::SocketAddr, name: &str) -> (u16, String) {
    kluis_sim::proxy::tls_front(target, name)
        .await
        .expect("the TLS front starts")
}

pub const RELAY_SECRET: &str = "relay-secret-for-tests-0123456789";

/// Starts a kluis-relay over TLS on 127.0.0.1 (secret [`RELAY_SECRET`]); returns its URL, its
/// CA and a handle that keeps it alive.
pub async fn relay() -> (String, String, tokio::sync::watch::Sender<bool>) {
    use kluis_relay::{router, Relay, RelayConfig, SqliteStore};
    let ca = kluis_https::LocalCa::generate("relay test CA").unwrap();
    let tls = ca.server_config(&["127.0.0.1"]).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    let relay = Relay::new(
        SqliteStore::in_memory().unwrap(),
        RelayConfig::new(RELAY_SECRET.into()),
    );
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(kluis_https::serve_tls(
        listener,
        tls,
        router(relay),
        Default::default(),
        async move {
            let _ = stopped.wait_for(|s| *s).await;
        },
    ));
    (url, ca.ca_pem(), stop)
}
