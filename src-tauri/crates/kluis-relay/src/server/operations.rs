//! What operators and load balancers ask: is the process up, may it take traffic, and the
//! metrics.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::Relay;

pub async fn healthz() -> &'static str {
    "ok"
}

/// Ready when the database answers and the instance is not stopping.
pub async fn readyz(State(relay): State<Arc<Relay>>) -> Response {
    if relay.is_stopping() {
        return (StatusCode::SERVICE_UNAVAILABLE, "stopping").into_response();
    }
    match relay.store.ping().await {
        Ok(()) => "ready".into_response(),
        Err(e) => {
            tracing::warn!(%e, "not ready");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable").into_response()
        }
    }
}

pub async fn metrics(State(relay): State<Arc<Relay>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        relay.metrics.render(),
    )
        .into_response()
}
