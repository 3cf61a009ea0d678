//! The relay's HTTP API.
//!
//! Public (what the service calls): `GET /cb/<inbox>/<token>?…` stores the request (method,
//! query, time) and answers 200 at once; anything that is not a live inbox and token gets 404
//! (`callback`). A path that is no id the relay makes is refused before any query, and a path
//! the relay did not make (its token is not the inbox's HMAC, `capability`) spends the shared
//! budget for junk before the store is asked; the store checks the capability as it stores
//! (one round trip). So a flood of junk costs neither the database nor a real callback its
//! answer: junk shares one budget, each inbox that took a callback has its own (429 beyond
//! either). An inbox holds at most `max_events_per_inbox` unacknowledged
//! events, the database at most `max_db_bytes`, and a tenant what its quota allows (507
//! beyond, so the service may retry later).
//!
//! Private (`inboxes`; `Authorization: Bearer <tenant key>` or the shared
//! `KLUIS_RELAY_SECRET`, checked in `auth`):
//! - `POST /api/inboxes` → `{inbox, callback_path}`: a new inbox with a 128-bit id and a
//!   128-bit token in its callback path;
//! - `GET /api/inboxes/<inbox>/events?after=N&wait=S` → `{events, next}`: events after the
//!   cursor, waiting up to S (≤ 30) seconds for one to arrive (long-poll);
//! - `POST /api/inboxes/<inbox>/ack {up_to}`: forget delivered events;
//! - `DELETE /api/inboxes/<inbox>`;
//! - `GET /api/stats` → `{polls_waiting}`.
//!
//! A key sees only its tenant's inboxes: another tenant's inbox is answered 404, exactly as
//! one that does not exist. Refusals carry `{code, message}`. A PC's key (the office hub) acts
//! for its tenant there too, and alone may use `/api/office/…` (`office`): a klant's turn
//! across the office's PCs, and the office's PCs.
//!
//! Operations (`operations`): `/healthz` (the process answers), `/readyz` (the database
//! answers and the instance is not stopping), `/metrics` on the separate metrics listener.
//! [`Relay::shut_down`] answers parked long-polls 503 with `Retry-After`, so their clients poll
//! again — at another instance or this one restarted — from the same cursor.
//!
//! Delivery is at least once: events stay until acknowledged (or expire), so a client that
//! was away gets what arrived meanwhile by polling from its last cursor.

mod auth;
mod callback;
mod capability;
mod inboxes;
mod office;
mod operations;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::json;
use tokio::sync::Notify;

use crate::metrics::Metrics;
use crate::storage::Storage;

/// Limits and lifetimes.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The shared secret of the single-office mode (`KLUIS_RELAY_SECRET`); empty: tenant keys
    /// only.
    pub secret: String,
    /// Longest long-poll.
    pub max_wait: Duration,
    /// A parked long-poll looks at the database again this often even without a wake-up, in
    /// case one was missed (another instance stored the callback and its notice got lost).
    pub recheck: Duration,
    /// Callbacks kept at most this long unacknowledged.
    pub event_ttl: Duration,
    /// Inboxes unused this long are removed.
    pub inbox_ttl: Duration,
    /// Public requests a second for paths that are no live inbox (with an equal burst).
    pub callbacks_per_sec: f64,
    /// Callbacks a second one inbox takes (with a burst of 4×).
    pub inbox_callbacks_per_sec: f64,
    /// Unacknowledged events one inbox holds; beyond, callbacks get 507.
    pub max_events_per_inbox: u64,
    /// Size of the database beyond which callbacks get 507.
    pub max_db_bytes: u64,
    /// Private API requests a second, all tenants together (with a burst of 2×), counted
    /// after each request's key and its tenant's quota are checked.
    pub api_per_sec: f64,
    /// Private API requests a second that fail authentication or name a key id the relay's
    /// key directory does not hold (each a database read), all together (with a burst of
    /// 2×): guessing keys is slow, and costs the offices nothing (their key ids are in the
    /// directory, which does not spend this budget).
    pub unauthenticated_per_sec: f64,
    /// Longest query string stored.
    pub max_query: usize,
    /// How long a tenant key read from the database is trusted before it is read again (so a
    /// revocation reaches an instance within this).
    pub key_ttl: Duration,
    /// Most events returned by one poll.
    pub max_batch: usize,
    /// The clock the rate budgets and the key rows' time to live read: the system's, or one a
    /// test holds still so that what a budget admits does not depend on the machine's speed.
    pub clock: kluis_https::Clock,
}

impl RelayConfig {
    /// A budget of `per_sec` with `burst`, by this relay's clock.
    fn rate(&self, per_sec: f64, burst: f64) -> kluis_https::RateLimit {
        kluis_https::RateLimit::with_clock(per_sec, burst, self.clock.clone())
    }

    pub fn new(secret: String) -> Self {
        Self {
            secret,
            max_wait: Duration::from_secs(30),
            recheck: Duration::from_secs(15),
            event_ttl: Duration::from_secs(7 * 24 * 3600),
            inbox_ttl: Duration::from_secs(30 * 24 * 3600),
            callbacks_per_sec: 500.0,
            inbox_callbacks_per_sec: 10.0,
            max_events_per_inbox: 1000,
            max_db_bytes: 1024 * 1024 * 1024,
            api_per_sec: 2000.0,
            unauthenticated_per_sec: 50.0,
            max_query: 2048,
            key_ttl: Duration::from_secs(5),
            max_batch: 100,
            clock: kluis_https::Clock::system(),
        }
    }
}

pub struct Relay {
    store: Box<dyn Storage>,
    config: RelayConfig,
    waiters: Mutex<HashMap<String, Arc<Notify>>>,
    /// For requests that match no live inbox.
    rate: kluis_https::RateLimit,
    /// One budget per inbox that received callbacks lately.
    inbox_rates: Mutex<HashMap<String, Arc<kluis_https::RateLimit>>>,
    api_rate: kluis_https::RateLimit,
    /// For private API requests that are not (yet) known to carry a working key.
    unauthenticated_rate: kluis_https::RateLimit,
    /// The callback tokens' key (`capability`), read from the database at first need.
    callback_key: tokio::sync::OnceCell<[u8; 32]>,
    /// One budget per tenant with a requests-per-second quota, with the rate it was made for.
    tenant_rates: Mutex<HashMap<String, (f64, Arc<kluis_https::RateLimit>)>>,
    metrics: Metrics,
    keys: crate::key_directory::KeyDirectory,
    stopping: tokio::sync::watch::Sender<bool>,
    /// Passes on other instances' callbacks (a shared database); stopped with the relay.
    watcher: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(watcher) = self.watcher.get_mut().unwrap().take() {
            watcher.abort();
        }
    }
}

impl Relay {
    pub fn new(store: impl Storage, config: RelayConfig) -> Arc<Self> {
        Self::with_store(Box::new(store), config)
    }

    /// The relay on an engine chosen at run time; an engine shared with other instances starts
    /// passing on their callbacks to this one's long-polls.
    pub fn with_store(store: Box<dyn Storage>, config: RelayConfig) -> Arc<Self> {
        let rate = config.rate(config.callbacks_per_sec, config.callbacks_per_sec);
        let api_rate = config.rate(config.api_per_sec, 2.0 * config.api_per_sec);
        let unauthenticated_rate = config.rate(
            config.unauthenticated_per_sec,
            2.0 * config.unauthenticated_per_sec,
        );
        let keys = crate::key_directory::KeyDirectory::new(config.key_ttl, config.clock.clone());
        let relay = Arc::new(Self {
            store,
            config,
            waiters: Mutex::default(),
            rate,
            inbox_rates: Mutex::default(),
            api_rate,
            unauthenticated_rate,
            callback_key: tokio::sync::OnceCell::new(),
            tenant_rates: Mutex::default(),
            metrics: Metrics::default(),
            keys,
            stopping: tokio::sync::watch::Sender::new(false),
            watcher: Mutex::default(),
        });
        let weak = Arc::downgrade(&relay);
        let watcher = relay
            .store
            .watch(Box::new(move |inbox| match weak.upgrade() {
                Some(relay) => {
                    match inbox {
                        Some(inbox) => relay.wake(inbox),
                        None => relay.wake_all(),
                    }
                    true
                }
                None => false,
            }));
        *relay.watcher.lock().unwrap() = watcher;
        relay
    }

    pub fn store(&self) -> &dyn Storage {
        &*self.store
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The key callback tokens are made with: the database's, made there on first need.
    async fn callback_key(&self) -> Result<[u8; 32], crate::storage::StoreError> {
        let key = self.callback_key.get_or_try_init(|| {
            // 244 random bits from the OS (two version-4 UUIDs).
            let mut fresh = [0u8; 32];
            fresh[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
            fresh[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
            self.store.callback_key(fresh)
        });
        key.await.copied()
    }

    /// Stops taking long-polls: parked ones are answered 503 with `Retry-After` at once, new
    /// ones too, and `/readyz` says not ready, so a load balancer moves clients elsewhere.
    pub fn shut_down(&self) {
        self.stopping.send_replace(true);
    }

    fn is_stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Wakes long-polls on `inbox` (a callback was stored for it, here or at another instance).
    pub fn wake(&self, inbox: &str) {
        if let Some(notify) = self.waiters.lock().unwrap().get(inbox) {
            notify.notify_waiters();
        }
    }

    /// Wakes every parked long-poll (wake-ups may have been missed); each looks again.
    pub fn wake_all(&self) {
        for notify in self.waiters.lock().unwrap().values() {
            notify.notify_waiters();
        }
    }

    fn waiter(&self, inbox: &str) -> Arc<Notify> {
        self.waiters
            .lock()
            .unwrap()
            .entry(inbox.to_string())
            .or_default()
            .clone()
    }

    /// A budget from `map` for `key`, made by `make` (the map is emptied past 100,000 keys: a
    /// full budget for each is the worst that costs).
    fn budget<V: Clone>(
        map: &Mutex<HashMap<String, V>>,
        key: &str,
        fresh: impl Fn(&V) -> bool,
        make: impl FnOnce() -> V,
    ) -> V {
        let mut map = map.lock().unwrap();
        if map.len() > 100_000 {
            map.clear();
        }
        match map.get(key) {
            Some(v) if fresh(v) => v.clone(),
            _ => {
                let v = make();
                map.insert(key.to_string(), v.clone());
                v
            }
        }
    }

    /// Removes expired events and inboxes; run periodically.
    pub async fn expire(&self) {
        // Wake-up handles nobody waits on any more (their inbox expired or was forgotten).
        self.waiters
            .lock()
            .unwrap()
            .retain(|_, notify| Arc::strong_count(notify) > 1);
        let now = crate::storage::now_ms();
        match self
            .store
            .expire(
                now - self.config.event_ttl.as_millis() as i64,
                now - self.config.inbox_ttl.as_millis() as i64,
            )
            .await
        {
            Ok((events, inboxes)) if events + inboxes > 0 => {
                tracing::info!(events, inboxes, "expired")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(%e, "expiry failed"),
        }
    }
}

/// The public listener: callbacks, the inbox API and health checks (not `/metrics`).
pub fn router(relay: Arc<Relay>) -> Router {
    Router::new()
        .route("/cb/{inbox}/{token}", any(callback::callback))
        .route("/api/inboxes", post(inboxes::create))
        .route("/api/inboxes/{inbox}/events", get(inboxes::events))
        .route("/api/inboxes/{inbox}/ack", post(inboxes::ack))
        .route(
            "/api/inboxes/{inbox}",
            axum::routing::delete(inboxes::delete),
        )
        .route("/api/stats", get(inboxes::stats))
        .route(
            "/api/office/turns/{klant}",
            post(office::take).delete(office::end),
        )
        .route("/api/office/pcs", get(office::pcs))
        .route(
            "/api/office/turns/{klant}/done",
            axum::routing::put(office::done),
        )
        .route("/api/office/me", get(office::me))
        .route(
            "/api/office/key-check",
            axum::routing::put(office::check_key),
        )
        .route(
            "/api/office/report",
            axum::routing::put(office::put_report).layer(axum::extract::DefaultBodyLimit::max(
                crate::storage::office::MAX_REPORT_BYTES + 1,
            )),
        )
        .route("/api/office/invites", post(office::invite))
        .route("/api/office/enrol", post(office::enrol))
        .route("/api/office/reports", get(office::reports))
        .route(
            "/api/office/pcs/{name}",
            axum::routing::delete(office::revoke),
        )
        .route("/healthz", get(operations::healthz))
        .route("/readyz", get(operations::readyz))
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(relay)
}

/// The metrics listener (`--metrics-listen`): `/metrics` and the health checks.
pub fn metrics_router(relay: Arc<Relay>) -> Router {
    Router::new()
        .route("/metrics", get(operations::metrics))
        .route("/healthz", get(operations::healthz))
        .route("/readyz", get(operations::readyz))
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(relay)
}

/// A refusal the client can branch on: `{code, message}`, with `Retry-After` where waiting
/// helps.
fn refusal(status: StatusCode, code: &str, message: &str, retry_after: Option<u32>) -> Response {
    let mut response = (status, Json(json!({ "code": code, "message": message }))).into_response();
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert("retry-after", HeaderValue::from(seconds));
    }
    response
}

fn internal(e: impl std::fmt::Display) -> Response {
    tracing::error!(%e, "store error");
    refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "store_unavailable",
        "the relay's database did not answer; try again",
        Some(1),
    )
}

/// The first characters of an inbox id: enough to follow one in the logs, too few to use.
fn short(inbox: &str) -> &str {
    &inbox[..inbox.char_indices().nth(6).map_or(inbox.len(), |(i, _)| i)]
}
