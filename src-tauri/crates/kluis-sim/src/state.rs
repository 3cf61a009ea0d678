//! The simulator's shared state: tokens, finished jobs, files, fault switches and counters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use url::Url;
use uuid::Uuid;

use crate::config::{Faults, SimConfig};

pub(crate) struct TokenInfo {
    /// The account's index in the configuration.
    pub account: usize,
    pub expires: Instant,
}

/// A finished backup, known by the secret webhook id.
pub(crate) struct JobResult {
    pub account: usize,
    pub file_url: Url,
}

pub(crate) struct FileInfo {
    pub size: u64,
    pub name: String,
    /// Refused from now on (403), as a signed link is once its time is up; the webhook then
    /// gives the backup a new one ([`Shared::renewed_file_url`]).
    pub expired: bool,
}

/// One ping the stand-in monitor (`monitor`) heard: the path below `/monitor/` and the body.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ping {
    pub path: String,
    pub body: String,
}

pub(crate) struct Shared {
    pub config: SimConfig,
    pub faults: Mutex<Faults>,
    pub tokens: Mutex<HashMap<Uuid, TokenInfo>>,
    pub results: Mutex<HashMap<Uuid, JobResult>>,
    pub files: Mutex<HashMap<String, FileInfo>>,
    pub stats: Arc<Stats>,
    pub timeline: Mutex<Timeline>,
    /// What the stand-in monitor heard.
    pub pings: Mutex<Vec<Ping>>,
    pub files_origin: Url,
    /// Calls back to public https URLs with full certificate checks.
    pub callback_client: reqwest::Client,
    /// Calls back to loopback URLs: a receiver there has a self-made certificate the simulator
    /// cannot know (the real service could not reach loopback at all).
    pub loopback_callback_client: reqwest::Client,
    /// Whether callbacks wait (`Faults::hold_callbacks`) and sign-ins (`hold_sign_ins`).
    pub callbacks_held: tokio::sync::watch::Sender<bool>,
    pub sign_ins_held: tokio::sync::watch::Sender<bool>,
    pub downloads_held: tokio::sync::watch::Sender<bool>,
}

/// Waits while `gate` says held.
pub(crate) async fn pass(gate: &tokio::sync::watch::Sender<bool>) {
    let _ = gate.subscribe().wait_for(|held| !*held).await;
}

impl Shared {
    pub fn new(config: SimConfig, files_origin: Url) -> Result<Self, reqwest::Error> {
        let timeout = std::time::Duration::from_secs(10);
        let callback_client = reqwest::Client::builder().timeout(timeout).build()?;
        let loopback_callback_client = reqwest::Client::builder()
            .timeout(timeout)
            .danger_accept_invalid_certs(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            callbacks_held: tokio::sync::watch::Sender::new(config.faults.hold_callbacks),
            sign_ins_held: tokio::sync::watch::Sender::new(config.faults.hold_sign_ins),
            downloads_held: tokio::sync::watch::Sender::new(config.faults.hold_downloads),
            faults: Mutex::new(config.faults.clone()),
            config,
            tokens: Mutex::default(),
            results: Mutex::default(),
            files: Mutex::default(),
            stats: Arc::default(),
            timeline: Mutex::default(),
            pings: Mutex::default(),
            files_origin,
            callback_client,
            loopback_callback_client,
        })
    }

    pub fn faults(&self) -> Faults {
        self.faults.lock().unwrap().clone()
    }

    /// Registers a file of `size` bytes and returns its unguessable download URL.
    pub fn add_file(&self, size: u64, name: Option<String>) -> Url {
        let key = Uuid::new_v4().simple().to_string();
        let name = name.unwrap_or_else(|| "owner-backup.zip".into());
        let url = self
            .files_origin
            .join(&format!("/download/{key}"))
            .expect("valid path");
        self.files.lock().unwrap().insert(
            key,
            FileInfo {
                size,
                name,
                expired: false,
            },
        );
        url
    }

    /// `url` itself while its file's link holds; once it expired, a new link to the same file.
    pub fn renewed_file_url(&self, url: &Url) -> Url {
        let key = url.path_segments().and_then(|mut s| s.next_back());
        let expired = key.and_then(|key| {
            let files = self.files.lock().unwrap();
            let file = files.get(key).filter(|file| file.expired)?;
            Some((file.size, file.name.clone()))
        });
        match expired {
            Some((size, name)) => self.add_file(size, Some(name)),
            None => url.clone(),
        }
    }
}

/// When the last callback went out, and when the first download after it began: the
/// client's callback-to-download latency, for benchmarks.
#[derive(Default)]
pub(crate) struct Timeline {
    pub callback_sent: Option<std::time::Instant>,
    pub download_started: Option<std::time::Instant>,
}

impl Timeline {
    pub fn callback(&mut self) {
        self.callback_sent = Some(std::time::Instant::now());
        self.download_started = None;
    }

    pub fn download(&mut self) {
        self.download_started
            .get_or_insert_with(std::time::Instant::now);
    }
}

/// Counters, readable by tests.
#[derive(Default)]
pub(crate) struct Stats {
    pub authenticate: AtomicU64,
    pub environment: AtomicU64,
    pub backups_started: AtomicU64,
    pub webhook: AtomicU64,
    pub callbacks_sent: AtomicU64,
    pub downloads: AtomicU64,
    pub partial_downloads: AtomicU64,
    pub token_on_file_origin: AtomicU64,
    pub unknown_paths: AtomicU64,
    /// Downloads being answered now (held ones too), and the most at one moment.
    pub downloading: AtomicU64,
    pub downloads_at_once_max: AtomicU64,
}

/// A download being answered (see [`Stats::downloading`]).
pub(crate) struct Downloading(Arc<Stats>);

impl Drop for Downloading {
    fn drop(&mut self) {
        self.0.downloading.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Successful and failed `GET /authenticate` calls.
    pub authenticate: u64,
    pub environment: u64,
    /// Backups started by `POST /backup/owner` (a 202, or a 500 after starting).
    pub backups_started: u64,
    pub webhook: u64,
    /// Callback attempts made to webhook URLs (including retries and duplicates).
    pub callbacks_sent: u64,
    /// Requests to the file origin.
    pub downloads: u64,
    /// Of those, the ones answered with a range (206): resumed downloads.
    pub partial_downloads: u64,
    /// Requests to the file origin that carried a `token` header: must stay 0.
    pub token_on_file_origin: u64,
    /// Requests to the service's origin for a path the document does not name (404).
    pub unknown_paths: u64,
    /// The most downloads that were being answered at one moment.
    pub downloads_at_once_max: u64,
}

impl Stats {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a download as being answered until the guard is dropped (its body ended).
    pub fn downloading(self: &Arc<Self>) -> Downloading {
        let now = self.downloading.fetch_add(1, Ordering::SeqCst) + 1;
        self.downloads_at_once_max.fetch_max(now, Ordering::SeqCst);
        Downloading(self.clone())
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StatsSnapshot {
            authenticate: get(&self.authenticate),
            environment: get(&self.environment),
            backups_started: get(&self.backups_started),
            webhook: get(&self.webhook),
            callbacks_sent: get(&self.callbacks_sent),
            downloads: get(&self.downloads),
            partial_downloads: get(&self.partial_downloads),
            token_on_file_origin: get(&self.token_on_file_origin),
            unknown_paths: get(&self.unknown_paths),
            downloads_at_once_max: get(&self.downloads_at_once_max),
        }
    }
}
