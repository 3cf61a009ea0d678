//! The relay's HTTP API.
//!
//! Public (what the service calls): `GET /cb/<inbox>/<token>?…` stores the request (method,
//! query, time) and answers 200 at once; anything that is not a live inbox and token gets 404.
//! Rate limits come after the capability check, so a flood of junk cannot cost a real
//! callback its answer: requests for no live inbox share one budget, each inbox has its own
//! (429 beyond either). An inbox holds at most `max_events_per_inbox` unacknowledged events
//! and the database at most `max_db_bytes` (507 beyond, so the service may retry later).
//!
//! Private (needs `Authorization: Bearer <KLUIS_RELAY_SECRET>`):
//! - `POST /api/inboxes` → `{inbox, callback_path}`: a new inbox with a 128-bit id and a
//!   128-bit token in its callback path;
//! - `GET /api/inboxes/<inbox>/events?after=N&wait=S` → `{events, next}`: events after the
//!   cursor, waiting up to S (≤ 30) seconds for one to arrive (long-poll);
//! - `POST /api/inboxes/<inbox>/ack {up_to}`: forget delivered events;
//! - `DELETE /api/inboxes/<inbox>`;
//! - `GET /api/stats` → `{polls_waiting}`.
//!
//! The private API has a rate limit of its own (429), checked before the secret.
//!
//! Delivery is at least once: events stay until acknowledged (or expire), so a client that
//! was away gets what arrived meanwhile by polling from its last cursor.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Notify;

use crate::store::{constant_time_eq, Store};

/// Limits and lifetimes.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The shared secret of clients (`KLUIS_RELAY_SECRET`).
    pub secret: String,
    /// Longest long-poll.
    pub max_wait: Duration,
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
    /// Private API requests a second (with a burst of 2×).
    pub api_per_sec: f64,
    /// Longest query string stored.
    pub max_query: usize,
    /// Most events returned by one poll.
    pub max_batch: usize,
}

impl RelayConfig {
    pub fn new(secret: String) -> Self {
        Self {
            secret,
            max_wait: Duration::from_secs(30),
            event_ttl: Duration::from_secs(7 * 24 * 3600),
            inbox_ttl: Duration::from_secs(30 * 24 * 3600),
            callbacks_per_sec: 500.0,
            inbox_callbacks_per_sec: 10.0,
            max_events_per_inbox: 1000,
            max_db_bytes: 1024 * 1024 * 1024,
            api_per_sec: 2000.0,
            max_query: 2048,
            max_batch: 100,
        }
    }
}

pub struct Relay {
    pub store: Store,
    config: RelayConfig,
    waiters: Mutex<HashMap<String, Arc<Notify>>>,
    /// For requests that match no live inbox.
    rate: kluis_https::RateLimit,
    /// One budget per inbox that received callbacks lately.
    inbox_rates: Mutex<HashMap<String, Arc<kluis_https::RateLimit>>>,
    api_rate: kluis_https::RateLimit,
    /// Long-polls parked right now (reported by `/api/stats`).
    parked: std::sync::atomic::AtomicUsize,
}

/// Counts a parked long-poll for as long as it lives.
struct Parked<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Relay {
    pub fn new(store: Store, config: RelayConfig) -> Arc<Self> {
        let rate = kluis_https::RateLimit::new(config.callbacks_per_sec, config.callbacks_per_sec);
        let api_rate = kluis_https::RateLimit::new(config.api_per_sec, 2.0 * config.api_per_sec);
        Arc::new(Self {
            store,
            config,
            waiters: Mutex::default(),
            rate,
            inbox_rates: Mutex::default(),
            api_rate,
            parked: Default::default(),
        })
    }

    /// The rate budget of a live inbox.
    fn inbox_rate(&self, inbox: &str) -> Arc<kluis_https::RateLimit> {
        let per_sec = self.config.inbox_callbacks_per_sec;
        let mut rates = self.inbox_rates.lock().unwrap();
        if rates.len() > 100_000 {
            rates.clear(); // a full budget for each is the worst this costs
        }
        rates
            .entry(inbox.to_string())
            .or_insert_with(|| Arc::new(kluis_https::RateLimit::new(per_sec, 4.0 * per_sec)))
            .clone()
    }

    fn waiter(&self, inbox: &str) -> Arc<Notify> {
        self.waiters
            .lock()
            .unwrap()
            .entry(inbox.to_string())
            .or_default()
            .clone()
    }

    /// Removes expired events and inboxes; run periodically.
    pub fn expire(&self) {
        let now = crate::store::now_ms();
        match self.store.expire(
            now,
            self.config.event_ttl.as_millis() as i64,
            self.config.inbox_ttl.as_millis() as i64,
        ) {
            Ok((events, inboxes)) if events + inboxes > 0 => {
                tracing::info!(events, inboxes, "expired")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(%e, "expiry failed"),
        }
    }
}

pub fn router(relay: Arc<Relay>) -> Router {
    Router::new()
        .route("/cb/{inbox}/{token}", any(callback))
        .route("/api/inboxes", post(create_inbox))
        .route("/api/inboxes/{inbox}/events", get(events))
        .route("/api/inboxes/{inbox}/ack", post(ack))
        .route("/api/inboxes/{inbox}", axum::routing::delete(delete_inbox))
        .route("/api/stats", get(stats))
        .route("/healthz", get(|| async { "ok" }))
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(relay)
}

fn random_hex() -> String {
    uuid::Uuid::new_v4().simple().to_string() + &uuid::Uuid::new_v4().simple().to_string()[..8]
}

/// Proof that a request carries the relay's secret; any other is answered 401 before the
/// handler runs.
struct Authorized;

impl axum::extract::FromRequestParts<Arc<Relay>> for Authorized {
    type Rejection = StatusCode;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        relay: &Arc<Relay>,
    ) -> Result<Self, StatusCode> {
        if !relay.api_rate.admit() {
            return Err(StatusCode::TOO_MANY_REQUESTS);
        }
        if authorized(relay, &parts.headers) {
            Ok(Authorized)
        } else {
            Err(StatusCode::UNAUTHORIZED)
        }
    }
}

fn authorized(relay: &Relay, headers: &HeaderMap) -> bool {
    let given = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    constant_time_eq(given.as_bytes(), relay.config.secret.as_bytes())
}

fn internal(e: impl std::fmt::Display) -> Response {
    tracing::error!(%e, "store error");
    (StatusCode::INTERNAL_SERVER_ERROR, "store error").into_response()
}

async fn callback(
    State(relay): State<Arc<Relay>>,
    method: Method,
    Path((inbox, token)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let query = query.unwrap_or_default();
    let has_body = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() != b"0")
        || headers.contains_key(axum::http::header::TRANSFER_ENCODING);
    let well_formed = method == Method::GET && !has_body && query.len() <= relay.config.max_query;
    let live = well_formed && matches!(relay.store.is_live(&inbox, &token), Ok(true));
    if !live {
        // One shared budget for everything that is no live inbox.
        return match relay.rate.admit() {
            true => StatusCode::NOT_FOUND.into_response(),
            false => StatusCode::TOO_MANY_REQUESTS.into_response(),
        };
    }
    if !relay.inbox_rate(&inbox).admit() {
        return StatusCode::TOO_MANY_REQUESTS.into_response();
    }
    let limits = crate::store::Limits {
        max_events_per_inbox: relay.config.max_events_per_inbox,
        max_db_bytes: relay.config.max_db_bytes,
    };
    match relay
        .store
        .record(&inbox, &token, method.as_str(), &query, limits)
    {
        Ok(Err(full)) => {
            tracing::warn!(inbox = &inbox[..6.min(inbox.len())], %full, "callback refused");
            (StatusCode::INSUFFICIENT_STORAGE, full.to_string()).into_response()
        }
        Ok(Ok(Some(_))) => {
            // Logged without the query: it carries the service's secret id.
            tracing::info!(inbox = &inbox[..6.min(inbox.len())], "callback stored");
            relay.waiter(&inbox).notify_waiters();
            (StatusCode::OK, "ok").into_response()
        }
        Ok(Ok(None)) => StatusCode::NOT_FOUND.into_response(),
        Err(e) => internal(e),
    }
}

async fn create_inbox(State(relay): State<Arc<Relay>>, _: Authorized) -> Response {
    let (inbox, token) = (random_hex(), random_hex());
    match relay.store.create_inbox(&inbox, &token) {
        Ok(()) => (
            StatusCode::CREATED,
            Json(json!({ "inbox": inbox, "callback_path": format!("/cb/{inbox}/{token}") })),
        )
            .into_response(),
        Err(e) => internal(e),
    }
}

#[derive(Deserialize)]
struct PollQuery {
    #[serde(default)]
    after: i64,
    #[serde(default)]
    wait: u64,
}

async fn events(
    State(relay): State<Arc<Relay>>,
    _: Authorized,
    Path(inbox): Path<String>,
    Query(q): Query<PollQuery>,
) -> Response {
    match relay.store.inbox_exists(&inbox) {
        Ok(true) => {}
        Ok(false) => return StatusCode::NOT_FOUND.into_response(),
        Err(e) => return internal(e),
    }
    let wait = Duration::from_secs(q.wait).min(relay.config.max_wait);
    let deadline = tokio::time::Instant::now() + wait;
    let notify = relay.waiter(&inbox);
    loop {
        // Register for a wake-up before looking, so an event stored in between is not missed.
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let found = match relay
            .store
            .events_after(&inbox, q.after, relay.config.max_batch)
        {
            Ok(found) => found,
            Err(e) => return internal(e),
        };
        if !found.is_empty() || tokio::time::Instant::now() >= deadline {
            let next = found.last().map_or(q.after, |e| e.seq);
            return Json(json!({ "events": found, "next": next })).into_response();
        }
        relay
            .parked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _parked = Parked(&relay.parked);
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return Json(json!({ "events": [], "next": q.after })).into_response();
        }
    }
}

async fn stats(State(relay): State<Arc<Relay>>, _: Authorized) -> Response {
    Json(json!({ "polls_waiting": relay.parked.load(std::sync::atomic::Ordering::Relaxed) }))
        .into_response()
}

#[derive(Deserialize)]
struct AckBody {
    up_to: i64,
}

async fn ack(
    State(relay): State<Arc<Relay>>,
    _: Authorized,
    Path(inbox): Path<String>,
    Json(body): Json<AckBody>,
) -> Response {
    match relay.store.ack(&inbox, body.up_to) {
        Ok(removed) => Json(json!({ "removed": removed })).into_response(),
        Err(e) => internal(e),
    }
}

async fn delete_inbox(
    State(relay): State<Arc<Relay>>,
    _: Authorized,
    Path(inbox): Path<String>,
) -> Response {
    relay.waiters.lock().unwrap().remove(&inbox);
    relay.inbox_rates.lock().unwrap().remove(&inbox);
    match relay.store.delete_inbox(&inbox) {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => StatusCode::NOT_FOUND.into_response(),
        Err(e) => internal(e),
    }
}
