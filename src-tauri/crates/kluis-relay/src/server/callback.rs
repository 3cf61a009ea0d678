//! `/cb/<inbox>/<token>`: what the service calls. Answered at once; never logs the query,
//! which carries the service's secret id. Junk is told apart before the database where it
//! can be (see `capability`).

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{capability, internal, refusal, short, Relay};
use crate::storage::{Limits, Recorded};

pub async fn callback(
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
    let well_formed = method == Method::GET
        && !has_body
        && query.len() <= relay.config.max_query
        && capability::is_id(&inbox)
        && capability::is_id(&token);
    let junk = || match relay.rate.admit() {
        // One shared budget for everything that is no live inbox.
        true => StatusCode::NOT_FOUND.into_response(),
        false => StatusCode::TOO_MANY_REQUESTS.into_response(),
    };
    if !well_formed {
        // Before any query: no id the relay makes has a NUL or is this long.
        return junk();
    }
    // An inbox that took a callback before has a budget of its own, charged before the store
    // is asked; whether the inbox exists with this token is learnt from storing the callback
    // itself — one round trip to the database, not two. (Only its tenant and the service know
    // an inbox's id, so nobody else can spend its budget.)
    let budget = relay.inbox_rates.lock().unwrap().get(&inbox).cloned();
    if budget.as_ref().is_some_and(|budget| !budget.admit()) {
        return StatusCode::TOO_MANY_REQUESTS.into_response();
    }
    // A path the relay did not make (a guess, or an inbox made before tokens were minted)
    // spends the junk budget before the database is touched.
    let minted = match budget {
        Some(_) => true,
        None => match relay.callback_key().await {
            Ok(key) => capability::is_minted(&key, &inbox, &token),
            Err(e) => return internal(e),
        },
    };
    if !minted && !relay.rate.admit() {
        return StatusCode::TOO_MANY_REQUESTS.into_response();
    }
    let limits = Limits {
        max_events_per_inbox: relay.config.max_events_per_inbox,
        max_db_bytes: relay.config.max_db_bytes,
    };
    match relay
        .store
        .record(&inbox, &token, method.as_str(), &query, limits)
        .await
    {
        Ok(Recorded::Refused { tenant, why }) => {
            tracing::warn!(inbox = short(&inbox), %tenant, code = why.code(), "callback refused");
            if why.is_quota() {
                relay
                    .metrics
                    .refused(&tenant, why.code().trim_start_matches("quota_"));
            }
            refusal(
                StatusCode::INSUFFICIENT_STORAGE,
                why.code(),
                &why.to_string(),
                Some(60),
            )
        }
        Ok(Recorded::Stored { tenant, seq }) => {
            tracing::info!(inbox = short(&inbox), %tenant, seq, "callback stored");
            relay.metrics.callbacks_stored.inc();
            relay.wake(&inbox);
            if budget.is_none() {
                // Its first callback: from now on the inbox has a budget of its own, this
                // callback charged to it.
                let per_sec = relay.config.inbox_callbacks_per_sec;
                Relay::budget(
                    &relay.inbox_rates,
                    &inbox,
                    |_| true,
                    || Arc::new(relay.config.rate(per_sec, 4.0 * per_sec)),
                )
                .admit();
            }
            (StatusCode::OK, "ok").into_response()
        }
        // A minted path whose inbox is gone (deleted, expired) spends the junk budget now; any
        // other has spent it already.
        Ok(Recorded::NoInbox) if minted => junk(),
        Ok(Recorded::NoInbox) => StatusCode::NOT_FOUND.into_response(),
        Err(e) => internal(e),
    }
}
