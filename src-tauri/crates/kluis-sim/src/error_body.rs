//! The simulator's error body, `{"error": {"status", "message"}}`, shared by both origins.
//! The real service's shape is not documented; a client must not rely on this one.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({ "error": { "status": status.as_u16(), "message": message } });
    (status, Json(body)).into_response()
}
