//! kluis-sim: a simulator of the business-administration service's `webservice_v2` REST API,
//! written from `shared/service-api.md` alone (it shares no code with the client it tests), with
//! a switch for every fault a real server may show.
//!
//! Parts, in the order a backup flows through them:
//! - [`config`]: accounts (api_key → allowed endpoints, username, password), token lifetime,
//!   payload size, and [`Faults`], the switches a test may flip while the simulator runs.
//! - [`api`]: the service origin, `{base_url}` = `https://127.0.0.1:PORT/webservice_v2`:
//!   `GET /authenticate` → token; `GET /util/environment`; `POST /backup/owner` → 202 and a
//!   background job; `GET /webhook?id=` → `{data:{url}}`; `/openapi.json` and `/swagger`.
//! - [`callback`]: the job calls the client's `webhook_url?id=<secret uuid>` (with delays,
//!   duplicates, retries, or not at all, as the faults say).
//! - [`files`]: a second origin that serves the backup file with `Range`/`If-Range`, streamed
//!   from [`payload`] (a deterministic pattern of any size, never held in memory), and that
//!   counts every request which wrongly carries the service token.
//! - `error_body`: the error answer both origins give (`api`, `openapi` and `files` import
//!   it; `api` imports `openapi`, never the other way round).
//! - `webhook_site`: a fake of webhook.site's API on the file origin (`/webhook-site`), for
//!   the webhook.site transport's offline tests ([`Sim::webhook_site_url`]).
//! - [`monitor`]: a stand-in for an outside monitor (healthchecks style) on the file origin,
//!   recording the pings it hears ([`Sim::monitor_url`], [`Sim::pings`]).
//! - [`smtp`]: a stand-in for an office's mail server on loopback (STARTTLS, a login), which
//!   records the mails Kluis sends; apart from the service, started on its own.
//! - `notifications` (Linux): a stand-in for the desktop's notification service on the D-Bus
//!   session bus, recording what Kluis shows; apart from the service, started on its own.
//! - [`Sim`] (this file) starts both HTTPS listeners with a fresh CA from kluis-https and hands
//!   tests the CA PEM, the switches and counters.
//!
//! Where the document is silent the simulator makes the choices a real REST server usually does:
//! 401 for wrong credentials or an unknown/expired token, 403 when the api_key may not use the
//! endpoint, 400 for a missing field or a non-https `webhook_url`, 404 for an unknown webhook id,
//! 403 for a download link that expired ([`Sim::expire_download_links`]; the webhook asked again
//! gives a new one, as a host of signed links would); error bodies are `{"error": {"status", "message"}}` (a client must not rely on that shape).

pub mod api;
pub mod callback;
pub mod config;
mod error_body;
pub mod files;
pub mod monitor;
#[cfg(target_os = "linux")]
pub mod notifications;
pub mod openapi;
pub mod payload;
pub mod proxy;
pub mod smtp;
mod state;
mod webhook_site;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use url::Url;

pub use config::{Account, Endpoint, Faults, SimConfig};
use state::Shared;
pub use state::StatsSnapshot;

/// Path segment of the simulated API's base address, as on the real service.
pub const BASE_PATH: &str = "/webservice_v2";

/// A running simulator. Dropping it stops both listeners.
pub struct Sim {
    base_url: Url,
    files_origin: Url,
    ca_pem: String,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
}

/// Why the simulator could not start.
#[derive(Debug)]
pub struct StartError(pub String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the simulator could not start: {}", self.0)
    }
}

impl std::error::Error for StartError {}

impl Sim {
    /// Starts the service and file origins on 127.0.0.1 (ports chosen by the OS).
    pub async fn start(config: SimConfig) -> Result<Sim, StartError> {
        Self::start_on(
            config,
            "127.0.0.1:0".parse().unwrap(),
            "127.0.0.1:0".parse().unwrap(),
        )
        .await
    }

    /// Starts the service origin on `api_addr` and the file origin on `files_addr`.
    pub async fn start_on(
        config: SimConfig,
        api_addr: SocketAddr,
        files_addr: SocketAddr,
    ) -> Result<Sim, StartError> {
        let err = |e: &dyn std::fmt::Display| StartError(e.to_string());
        let ca = kluis_https::LocalCa::generate("kluis-sim local CA").map_err(|e| err(&e))?;
        let tls = ca
            .server_config(&["localhost", "127.0.0.1"])
            .map_err(|e| err(&e))?;
        let api_listener = TcpListener::bind(api_addr).await.map_err(|e| err(&e))?;
        let files_listener = TcpListener::bind(files_addr).await.map_err(|e| err(&e))?;
        let api_port = api_listener.local_addr().map_err(|e| err(&e))?.port();
        let files_port = files_listener.local_addr().map_err(|e| err(&e))?.port();
        let base_url = Url::parse(&format!("https://127.0.0.1:{api_port}{BASE_PATH}")).unwrap();
        let files_origin = Url::parse(&format!("https://127.0.0.1:{files_port}")).unwrap();

        let shared = Arc::new(Shared::new(config, files_origin.clone()).map_err(|e| err(&e))?);
        let (stop, stopped) = watch::channel(false);
        let until_stopped = |mut rx: watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        let limits = kluis_https::ServeLimits::default();
        tokio::spawn(kluis_https::serve_tls(
            api_listener,
            tls.clone(),
            api::router(shared.clone()),
            limits,
            until_stopped(stopped.clone()),
        ));
        tokio::spawn(kluis_https::serve_tls(
            files_listener,
            tls,
            files::router(shared.clone()),
            limits,
            until_stopped(stopped),
        ));
        Ok(Sim {
            base_url,
            files_origin,
            ca_pem: ca.ca_pem(),
            shared,
            stop,
        })
    }

    /// `{base_url}`: `https://127.0.0.1:PORT/webservice_v2`.
    pub fn base_url(&self) -> &Url {
        &self.base_url
    }

    /// The origin the backup files are downloaded from (a different port, so a different origin).
    pub fn files_origin(&self) -> &Url {
        &self.files_origin
    }

    /// PEM of the CA that issued both origins' certificates.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// Changes fault switches while the simulator runs (holding callbacks, sign-ins or
    /// downloads too: those waiting are let go when their switch is turned off).
    pub fn set_faults(&self, change: impl FnOnce(&mut Faults)) {
        let mut faults = self.shared.faults.lock().unwrap();
        change(&mut faults);
        self.shared
            .callbacks_held
            .send_replace(faults.hold_callbacks);
        self.shared.sign_ins_held.send_replace(faults.hold_sign_ins);
        self.shared
            .downloads_held
            .send_replace(faults.hold_downloads);
    }

    /// Lets the callbacks held by `Faults::hold_callbacks` (those waiting and those to come)
    /// go out.
    pub fn release_callbacks(&self) {
        self.set_faults(|f| f.hold_callbacks = false);
    }

    /// Lets the downloads held by `Faults::hold_downloads` (those waiting and those to come)
    /// be answered.
    pub fn release_downloads(&self) {
        self.set_faults(|f| f.hold_downloads = false);
    }

    /// Lets the sign-ins held by `Faults::hold_sign_ins` be answered.
    pub fn release_sign_ins(&self) {
        self.set_faults(|f| f.hold_sign_ins = false);
    }

    /// Counters of what the simulator has seen.
    pub fn stats(&self) -> StatsSnapshot {
        self.shared.stats.snapshot()
    }

    /// Time from the last callback the simulator sent to the first download request after it:
    /// how quickly a client turns a callback into a download (benchmarks).
    pub fn callback_to_download(&self) -> Option<std::time::Duration> {
        let timeline = self.shared.timeline.lock().unwrap();
        Some(timeline.download_started? - timeline.callback_sent?)
    }

    /// Makes every token issued so far invalid, as if the server had restarted or they aged out.
    pub fn expire_all_tokens(&self) {
        self.shared.tokens.lock().unwrap().clear();
    }

    /// Makes every download link given so far answer 403, as signed links do once their time
    /// is up; asking the webhook again for a backup gives a new link to the same file.
    pub fn expire_download_links(&self) {
        for file in self.shared.files.lock().unwrap().values_mut() {
            file.expired = true;
        }
    }

    /// A download URL for a file of `size` bytes on the file origin, without the backup flow:
    /// for benchmarks that compare Kluis's download with curl's.
    pub fn file_url(&self, size: u64) -> Url {
        self.shared.add_file(size, None)
    }

    /// Base URL of the fake webhook.site API.
    pub fn webhook_site_url(&self) -> Url {
        self.files_origin.join("/webhook-site").expect("valid path")
    }

    /// The stand-in monitor's ping URL for check `check` (`…/fail` reports a failure).
    pub fn monitor_url(&self, check: &str) -> Url {
        self.files_origin
            .join(&format!("/monitor/{check}"))
            .expect("valid path")
    }

    /// The pings the stand-in monitor has heard, in order.
    pub fn pings(&self) -> Vec<monitor::Ping> {
        self.shared.pings.lock().unwrap().clone()
    }

    /// Stops both listeners (also done on drop).
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.stop();
    }
}
