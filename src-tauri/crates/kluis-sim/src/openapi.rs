//! The published interface description (filtered by api_key) and its Swagger-style test page.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};

use crate::config::Endpoint;
use crate::error_body::error;
use crate::state::Shared;

fn path_of(endpoint: Endpoint) -> (&'static str, Value) {
    let token = json!({ "name": "token", "in": "header", "required": true, "schema": { "type": "string", "format": "uuid" } });
    match endpoint {
        Endpoint::Environment => (
            "/util/environment",
            json!({ "get": {
            "summary": "Environment information",
            "parameters": [token, { "name": "username", "in": "query", "required": true, "schema": { "type": "string" } }],
            "responses": { "200": { "description": "Environment" } } } }),
        ),
        Endpoint::BackupOwner => (
            "/backup/owner",
            json!({ "post": {
            "summary": "Back up the owner's data (webhook flow)",
            "parameters": [token],
            "requestBody": { "content": { "application/json": { "schema": { "type": "object",
                "properties": { "webhook_url": { "type": "string", "format": "uri" } }, "required": ["webhook_url"] } } } },
            "responses": { "202": { "description": "Accepted; the webhook is called when done" } } } }),
        ),
        Endpoint::Webhook => (
            "/webhook",
            json!({ "get": {
            "summary": "Result of a finished long-running call",
            "parameters": [token, { "name": "id", "in": "query", "required": true, "schema": { "type": "string", "format": "uuid" } }],
            "responses": { "200": { "description": "{ data: { url } }" } } } }),
        ),
    }
}

/// `GET /openapi.json?api_key=…`: only the paths that key may use.
pub(crate) async fn document(
    State(shared): State<Arc<Shared>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(account) = q
        .get("api_key")
        .and_then(|key| shared.config.accounts_with_key(key).next().map(|(_, a)| a))
    else {
        return error(StatusCode::UNAUTHORIZED, "a valid api_key is required");
    };
    let mut paths = Map::new();
    paths.insert(
        "/authenticate".into(),
        json!({ "get": { "summary": "Obtain a session token",
        "responses": { "200": { "description": "{ token }" } } } }),
    );
    for endpoint in Endpoint::ALL
        .into_iter()
        .filter(|e| account.allowed.contains(e))
    {
        let (path, item) = path_of(endpoint);
        paths.insert(path.into(), item);
    }
    Json(json!({
        "openapi": "3.0.1",
        "info": { "title": "webservice_v2 (simulated)", "version": "2" },
        "paths": paths,
    }))
    .into_response()
}

/// `GET /swagger`: a test page whose first link is the description for the key filled in.
pub(crate) async fn test_page() -> impl IntoResponse {
    Html(
        "<!doctype html><html><head><meta charset=utf-8><title>webservice_v2 test page</title></head>\
         <body><h1>webservice_v2 (simulated)</h1>\
         <form action=\"openapi.json\" method=get><label>api_key <input name=api_key></label>\
         <button>Show description</button></form></body></html>",
    )
}
