//! A fake of webhook.site's small API, on the file origin under `/webhook-site`, so the
//! webhook.site transport is tested offline:
//! - `POST /webhook-site/token` → `{uuid}`: a new catcher URL `/webhook-site/<uuid>`;
//! - any request to `/webhook-site/<uuid>…` is stored (method, query) and answered 200;
//! - `GET /webhook-site/token/<uuid>/requests` → `{data: [{uuid, method, query: {…}}]}`,
//!   newest first, as the real API lists them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, RawQuery, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use uuid::Uuid;

#[derive(Default)]
pub(crate) struct Catchers {
    requests: Mutex<HashMap<Uuid, Vec<Value>>>,
}

pub(crate) fn router() -> Router {
    let catchers = Arc::new(Catchers::default());
    Router::new()
        .route("/webhook-site/token", post(create))
        .route("/webhook-site/token/{token}/requests", get(list))
        .route("/webhook-site/{token}", any(catch))
        .with_state(catchers)
}

async fn create(State(c): State<Arc<Catchers>>) -> Json<Value> {
    let token = Uuid::new_v4();
    c.requests.lock().unwrap().insert(token, Vec::new());
    Json(json!({ "uuid": token }))
}

async fn catch(
    State(c): State<Arc<Catchers>>,
    Path(token): Path<Uuid>,
    method: Method,
    RawQuery(query): RawQuery,
) -> Response {
    let mut all = c.requests.lock().unwrap();
    let Some(requests) = all.get_mut(&token) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let query: HashMap<String, String> =
        url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    requests.push(json!({ "uuid": Uuid::new_v4(), "method": method.as_str(), "query": query }));
    (
        StatusCode::OK,
        "This URL has no default content configured.",
    )
        .into_response()
}

async fn list(State(c): State<Arc<Catchers>>, Path(token): Path<Uuid>) -> Response {
    match c.requests.lock().unwrap().get(&token) {
        Some(requests) => Json(
            json!({ "data": requests.iter().rev().collect::<Vec<_>>(), "total": requests.len() }),
        )
        .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
