//! The service origin: authentication, environment, backup and webhook endpoints.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use url::Url;
use uuid::Uuid;

use crate::config::{Account, Endpoint};
use crate::error_body::error;
use crate::state::{Shared, Stats, TokenInfo};
use crate::{callback, openapi, BASE_PATH};

type Params = Query<HashMap<String, String>>;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .route("/authenticate", get(authenticate))
        .route("/util/environment", get(environment))
        .route("/backup/owner", post(backup_owner))
        .route("/webhook", get(webhook))
        .route("/openapi.json", get(openapi::document))
        .route("/swagger", get(openapi::test_page))
        .fallback(unknown_path)
        .with_state(shared.clone());
    Router::new()
        .nest(BASE_PATH, api)
        .fallback(unknown_path)
        .with_state(shared)
}

/// Any path the document does not name: 404, counted (a client's liveness check lands here).
async fn unknown_path(State(shared): State<Arc<Shared>>) -> Response {
    Stats::bump(&shared.stats.unknown_paths);
    error(StatusCode::NOT_FOUND, "no such endpoint")
}

async fn authenticate(
    State(shared): State<Arc<Shared>>,
    uri: axum::http::Uri,
    Query(q): Params,
) -> Response {
    Stats::bump(&shared.stats.authenticate);
    let delay = shared.faults().authenticate_delay;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    crate::state::pass(&shared.sign_ins_held).await;
    if let Some(status) = shared.faults().echo_authenticate {
        return echo_request(status, &uri, &q);
    }
    let (Some(api_key), Some(org), Some(username), Some(password)) = (
        q.get("api_key"),
        q.get("organization_name"),
        q.get("username"),
        q.get("password"),
    ) else {
        return error(
            StatusCode::BAD_REQUEST,
            "api_key, organization_name, username and password are required",
        );
    };
    if !org.is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            "organization_name must be sent empty",
        );
    }
    // One third party's key serves many klanten: the key and the klant's username together
    // name the account.
    let mut with_key = shared.config.accounts_with_key(api_key).peekable();
    if with_key.peek().is_none() {
        return error(StatusCode::UNAUTHORIZED, "unknown api_key");
    }
    let Some((account, _)) =
        with_key.find(|(_, a)| a.username == *username && a.password == *password)
    else {
        return error(StatusCode::UNAUTHORIZED, "wrong username or password");
    };
    let token = Uuid::new_v4();
    let expires = Instant::now() + shared.config.token_lifetime;
    shared
        .tokens
        .lock()
        .unwrap()
        .insert(token, TokenInfo { account, expires });
    Json(json!({ "token": token })).into_response()
}

/// An error page that quotes the request, in the forms a careless proxy shows it.
fn echo_request(status: u16, uri: &axum::http::Uri, q: &HashMap<String, String>) -> Response {
    use base64::Engine;
    let decoded: Vec<String> = q.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    let page = format!(
        "<html><body><h1>Request rejected</h1><pre>GET {uri}</pre><p>{}</p><p>{}</p><p>{}</p></body></html>",
        decoded.join("; "),
        serde_json::to_string(q).unwrap_or_default(),
        base64::engine::general_purpose::STANDARD.encode(uri.to_string()),
    );
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, [("content-type", "text/html")], page).into_response()
}

/// Why a request was refused: its status and message.
type Refusal = (StatusCode, &'static str);

/// Checks the `token` header and the api_key's permission for `endpoint`.
fn authorize<'a>(
    shared: &'a Shared,
    headers: &HeaderMap,
    endpoint: Endpoint,
) -> Result<(usize, &'a Account), Refusal> {
    let unauthorized = || {
        (
            StatusCode::UNAUTHORIZED,
            "missing, unknown or expired token",
        )
    };
    let token = headers
        .get("token")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| Uuid::parse_str(v).ok())
        .ok_or_else(unauthorized)?;
    let index = {
        let mut tokens = shared.tokens.lock().unwrap();
        match tokens.get(&token) {
            Some(info) if info.expires > Instant::now() => info.account,
            Some(_) => {
                tokens.remove(&token);
                return Err(unauthorized());
            }
            None => return Err(unauthorized()),
        }
    };
    let account = shared.config.accounts.get(index).ok_or_else(unauthorized)?;
    if !account.allowed.contains(&endpoint) {
        return Err((
            StatusCode::FORBIDDEN,
            "this api_key may not use this endpoint",
        ));
    }
    Ok((index, account))
}

async fn environment(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(q): Params,
) -> Response {
    Stats::bump(&shared.stats.environment);
    let account = match authorize(&shared, &headers, Endpoint::Environment) {
        Ok((_, account)) => account,
        Err((status, message)) => return error(status, message),
    };
    let Some(username) = q.get("username") else {
        return error(StatusCode::BAD_REQUEST, "username is required");
    };
    Json(json!({
        "username": username,
        "klant": { "name": "Demo Administratie B.V.", "number": 4711, "signed_in_as": account.username },
        "environment": "production",
        "version": { "api": "webservice_v2", "build": "2.41.7" },
        "modules": ["administration", "payroll", "documents"],
        "limits": { "token_minutes": shared.config.token_lifetime.as_secs() / 60 },
    }))
    .into_response()
}

async fn backup_owner(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let account = match authorize(&shared, &headers, Endpoint::BackupOwner) {
        Ok((index, _)) => index,
        Err((status, message)) => return error(status, message),
    };
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "the body must be a JSON object");
    };
    let Some(webhook_url) = body.get("webhook_url").and_then(Value::as_str) else {
        return error(StatusCode::BAD_REQUEST, "webhook_url is required");
    };
    let webhook_url = match Url::parse(webhook_url) {
        Ok(url) if url.scheme() == "https" && url.host().is_some() => url,
        _ => return error(StatusCode::BAD_REQUEST, "webhook_url must be an https URL"),
    };
    Stats::bump(&shared.stats.backups_started);
    let faults = shared.faults();
    let file_url = shared.add_file(shared.config.payload_size, None);
    let job = callback::Job {
        account,
        webhook_url,
        file_url,
    };
    if faults.callback_before_accept {
        callback::finish(shared.clone(), job, faults.clone()).await;
    } else {
        tokio::spawn(callback::run_after_delay(
            shared.clone(),
            job,
            faults.clone(),
        ));
    }
    let fail_anyway = {
        let mut f = shared.faults.lock().unwrap();
        let fail = f.backup_failures_after_start > 0;
        f.backup_failures_after_start = f.backup_failures_after_start.saturating_sub(1);
        fail
    };
    if fail_anyway {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "internal error");
    }
    (
        StatusCode::ACCEPTED,
        Json(json!({ "successCode": 202, "message": "Backup request accepted" })),
    )
        .into_response()
}

async fn webhook(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(q): Params,
) -> Response {
    Stats::bump(&shared.stats.webhook);
    let account = match authorize(&shared, &headers, Endpoint::Webhook) {
        Ok((index, _)) => index,
        Err((status, message)) => return error(status, message),
    };
    {
        let mut f = shared.faults.lock().unwrap();
        if f.webhook_failures > 0 {
            f.webhook_failures -= 1;
            return error(StatusCode::SERVICE_UNAVAILABLE, "temporarily unavailable");
        }
    }
    let Some(id) = q.get("id").and_then(|id| Uuid::parse_str(id).ok()) else {
        return error(StatusCode::BAD_REQUEST, "id must be a UUID");
    };
    let unknown = StatusCode::from_u16(shared.faults().unknown_webhook_status)
        .unwrap_or(StatusCode::NOT_FOUND);
    let mut results = shared.results.lock().unwrap();
    match results.get_mut(&id) {
        Some(result) if result.account == account => {
            result.file_url = shared.renewed_file_url(&result.file_url);
            Json(json!({
                "data": { "url": result.file_url.as_str(), "kind": "backup/owner" },
                "successCode": 200,
            }))
            .into_response()
        }
        _ => error(unknown, "unknown webhook id"),
    }
}
