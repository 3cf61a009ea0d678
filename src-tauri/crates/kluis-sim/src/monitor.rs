//! A stand-in for an outside monitor in the healthchecks.io style, on the file origin
//! (`/monitor/<check>` and `/monitor/<check>/fail`): it records every ping it is sent, so tests
//! see which klant's monitor heard of what. ([`crate::Sim::monitor_url`], [`crate::Sim::pings`].)

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::routing::any;
use axum::Router;

pub use crate::state::Ping;
use crate::state::Shared;

/// Monitors keep what a ping sends as its log, cut to this many bytes.
const MAX_BODY: usize = 10 * 1024;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/monitor/{*path}", any(heard))
        .with_state(shared)
}

async fn heard(
    State(shared): State<Arc<Shared>>,
    Path(path): Path<String>,
    body: String,
) -> &'static str {
    let mut body = body;
    if body.len() > MAX_BODY {
        let mut end = MAX_BODY;
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        body.truncate(end);
    }
    shared.pings.lock().unwrap().push(Ping { path, body });
    "OK"
}
