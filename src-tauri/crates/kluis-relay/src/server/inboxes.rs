//! The inbox API of a tenant: create, long-poll from a cursor, acknowledge, delete. Each call
//! names its tenant to the store, which answers "no such inbox" for another tenant's.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::auth::Authorized;
use super::{internal, refusal, short, Relay};
use crate::storage::{now_ms, Event};

fn random_hex() -> String {
    uuid::Uuid::new_v4().simple().to_string() + &uuid::Uuid::new_v4().simple().to_string()[..8]
}

fn no_inbox() -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "no_inbox",
        "no such inbox for this key (deleted, expired, or never made with it)",
        None,
    )
}

/// Parked long-polls are answered this when the instance stops: poll again, elsewhere.
fn stopping() -> Response {
    refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "stopping",
        "this relay instance is stopping; poll again from the same cursor",
        Some(1),
    )
}

pub async fn create(State(relay): State<Arc<Relay>>, Authorized(tenant): Authorized) -> Response {
    let key = match relay.callback_key().await {
        Ok(key) => key,
        Err(e) => return internal(e),
    };
    let inbox = random_hex();
    let token = super::capability::token_for(&key, &inbox);
    match relay
        .store
        .create_inbox(&tenant.name, &tenant.quota, &inbox, &token)
        .await
    {
        Ok(Ok(())) => (
            StatusCode::CREATED,
            Json(json!({ "inbox": inbox, "callback_path": format!("/cb/{inbox}/{token}") })),
        )
            .into_response(),
        Ok(Err(crate::storage::Refusal::Revoked)) => refusal(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this key's tenant is revoked",
            None,
        ),
        Ok(Err(why)) => {
            relay.metrics.refused(&tenant.name, "inboxes");
            refusal(
                StatusCode::INSUFFICIENT_STORAGE,
                why.code(),
                &why.to_string(),
                None,
            )
        }
        Err(e) => internal(e),
    }
}

#[derive(Deserialize)]
pub struct PollQuery {
    #[serde(default)]
    after: i64,
    #[serde(default)]
    wait: u64,
}

/// Counts a parked long-poll for as long as it lives.
struct Parked<'a>(&'a prometheus_client::metrics::gauge::Gauge);

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

pub async fn events(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Path(inbox): Path<String>,
    Query(q): Query<PollQuery>,
) -> Response {
    // Before any query: no id the relay makes has a NUL (which PostgreSQL refuses) or is this
    // long.
    if !super::capability::is_id(&inbox) {
        return no_inbox();
    }
    let mut stop = relay.stopping.subscribe();
    let wait = Duration::from_secs(q.wait).min(relay.config.max_wait);
    let deadline = tokio::time::Instant::now() + wait;
    let notify = relay.waiter(&inbox);
    let mut _parked = None;
    loop {
        if *stop.borrow_and_update() {
            return stopping();
        }
        // Register for a wake-up before looking, so an event stored in between is not missed.
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let found = match relay
            .store
            .events_after(&tenant.name, &inbox, q.after, relay.config.max_batch)
            .await
        {
            Ok(Some(found)) => found,
            Ok(None) => return no_inbox(),
            Err(e) => return internal(e),
        };
        let now = tokio::time::Instant::now();
        if !found.is_empty() || now >= deadline {
            return delivered(&relay, q.after, found);
        }
        if _parked.is_none() {
            relay.metrics.polls_parked.inc();
            _parked = Some(Parked(&relay.metrics.polls_parked));
        }
        // Woken, or time to look again in case a wake-up was missed, or the deadline (the
        // next round answers empty), or the instance stops.
        let look_again = deadline.min(now + spread(relay.config.recheck));
        tokio::select! {
            _ = tokio::time::timeout_at(look_again, notified) => {}
            _ = stop.changed() => {}
        }
    }
}

/// Somewhere between half of `recheck` and all of it: polls parked together (after a restart,
/// or a fail-over) must not all look again in the same instant.
fn spread(recheck: Duration) -> Duration {
    let fraction = (uuid::Uuid::new_v4().as_u128() % 1000) as f64 / 1000.0;
    recheck.mul_f64(0.5 + 0.5 * fraction)
}

/// The answer of a poll, counting each event's delivery latency.
fn delivered(relay: &Relay, after: i64, found: Vec<Event>) -> Response {
    let now = now_ms();
    for event in &found {
        let ms = (now - event.received_ms).max(0);
        relay.metrics.delivery_latency.observe(ms as f64 / 1000.0);
    }
    let next = found.last().map_or(after, |e| e.seq);
    Json(json!({ "events": found, "next": next })).into_response()
}

pub async fn stats(State(relay): State<Arc<Relay>>, _: Authorized) -> Response {
    Json(json!({ "polls_waiting": relay.metrics.polls_parked.get() })).into_response()
}

#[derive(Deserialize)]
pub struct AckBody {
    up_to: i64,
}

pub async fn ack(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Path(inbox): Path<String>,
    Json(body): Json<AckBody>,
) -> Response {
    if !super::capability::is_id(&inbox) {
        return no_inbox();
    }
    match relay.store.ack(&tenant.name, &inbox, body.up_to).await {
        Ok(Some(removed)) => Json(json!({ "removed": removed })).into_response(),
        Ok(None) => no_inbox(),
        Err(e) => internal(e),
    }
}

pub async fn delete(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Path(inbox): Path<String>,
) -> Response {
    if !super::capability::is_id(&inbox) {
        return no_inbox();
    }
    match relay.store.delete_inbox(&tenant.name, &inbox).await {
        Ok(true) => {
            relay.waiters.lock().unwrap().remove(&inbox);
            relay.inbox_rates.lock().unwrap().remove(&inbox);
            tracing::info!(inbox = short(&inbox), tenant = %tenant.name, "inbox deleted");
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(false) => no_inbox(),
        Err(e) => internal(e),
    }
}
