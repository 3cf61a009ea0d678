//! [`ServiceClient`]: one method per endpoint of the service, without token management (that
//! is [`crate::session`]'s job). Each method checks the answer's shape and turns every failure
//! into an [`Error`] whose message is safe to show.

use reqwest::{Method, StatusCode};
use serde_json::Value;
use url::Url;

use crate::callback::CallbackId;
use crate::config::{check_url, ServiceConfig};
use crate::error::{Error, Peer, Result};
use crate::http::{
    self, body_excerpt, is_transient, is_transient_status, read_json, RedirectRule, RetryPolicy,
};
use crate::secret::Secret;

/// How a call with a token failed, so the session can decide whether a new token may help.
#[derive(Debug)]
pub enum CallError {
    /// 401: the token was not accepted.
    Unauthorized,
    /// 403: the api_key may not use the endpoint — or, on some servers, a stale token.
    Forbidden,
    /// Any other error status (after retries, for idempotent calls).
    Status {
        status: StatusCode,
        excerpt: String,
    },
    Other(Error),
}

impl From<Error> for CallError {
    fn from(e: Error) -> Self {
        CallError::Other(e)
    }
}

/// The result of a finished long-running call, from `GET /webhook`.
#[derive(Debug, Clone)]
pub struct WebhookPayload {
    /// `data.url`, checked to be https (or loopback http with the opt-in).
    pub url: Url,
    /// The whole `data` object, other fields included.
    pub data: Value,
}

/// Longest wait for a liveness check's answer.
const LIVENESS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The endpoints of the service.
pub struct ServiceClient {
    config: ServiceConfig,
    http: reqwest::Client,
    retry: RetryPolicy,
}

impl ServiceClient {
    pub fn new(config: ServiceConfig) -> Result<Self> {
        let http = http::build_client(&config, RedirectRule::SameOrigin)?;
        Ok(Self {
            config,
            http,
            retry: RetryPolicy::default(),
        })
    }

    /// Replaces the retry policy (tests use short delays).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    pub fn config(&self) -> &ServiceConfig {
        &self.config
    }

    /// Whether the service answers at all: a plain `GET {base_url}` without token or
    /// credentials, where any HTTP answer (a 404 too) counts. The document names no health
    /// endpoint, so this asks the one thing every web server does — answer — and nothing the
    /// api key might not allow. Used while a job waits, at most once a minute.
    pub async fn is_answering(&self) -> bool {
        let request = self
            .http
            .get(self.config.base_url.clone())
            .timeout(LIVENESS_TIMEOUT);
        match request.send().await {
            Ok(_) => true,
            Err(e) => {
                tracing::info!(error = %e.without_url(), "the service did not answer a liveness check");
                false
            }
        }
    }

    /// `GET /authenticate` → a fresh token. A certificate failure names the certificate the
    /// server sent (subject, issuer, fingerprint), so it can be compared before it is trusted.
    pub async fn authenticate(&self) -> Result<Secret> {
        match self.request_token().await {
            Err(Error::Certificate { message, .. }) => {
                let presented = crate::presented::presented_by(&self.config.base_url).await;
                Err(Error::Certificate {
                    message: match &presented {
                        Some(presented) => format!("{message} {presented}"),
                        None => message,
                    },
                    presented: presented.map(Box::new),
                })
            }
            outcome => outcome,
        }
    }

    async fn request_token(&self) -> Result<Secret> {
        let c = &self.config;
        let query = [
            ("api_key", c.api_key.expose()),
            ("organization_name", ""), // must be present and empty (section 2 of the document)
            ("username", c.username.as_str()),
            ("password", c.password.expose()),
        ];
        let url = c.endpoint(&["authenticate"]);
        let response = match self.send(Method::GET, &url, None, |r| r.query(&query), true, "signing in").await {
            Ok(response) => response,
            Err(CallError::Unauthorized | CallError::Forbidden) => {
                return Err(Error::AuthFailed(
                    "The service refused the api key, username or password. Check them in the profile and sign in again.".into(),
                ))
            }
            Err(e) => return Err(finish_error(e, "signing in")),
        };
        token_from(&read_json(response, "signing in").await?)
    }

    /// `GET /util/environment?username=` → the answer as it came.
    pub async fn environment(&self, token: &Secret) -> Result<Value, CallError> {
        let url = self.config.endpoint(&["util", "environment"]);
        let username = self.config.username.as_str();
        let response = self
            .send(
                Method::GET,
                &url,
                Some(token),
                |r| r.query(&[("username", username)]).header("accept", "*/*"),
                true,
                "the environment request",
            )
            .await?;
        Ok(read_json(response, "the environment request").await?)
    }

    /// The service's OpenAPI description at `url`, as its test page loads it (the api key as a
    /// parameter — so only on the base URL's origin). `None` when it is not served (any error
    /// status): what the key allows is then learnt from the service's 403s.
    pub async fn description(&self, url: &str) -> Result<Option<Value>> {
        let mut url = self.config.openapi_url(url)?;
        url.query_pairs_mut()
            .append_pair("api_key", self.config.api_key.expose());
        let response = self.http.get(url).send().await.map_err(|e| {
            Error::Network(format!(
                "Could not load the service's description ({}).",
                e.without_url()
            ))
        })?;
        if !response.status().is_success() {
            return Ok(None);
        }
        Ok(Some(read_json(response, "the description request").await?))
    }

    /// `POST /backup/owner {webhook_url}`: must be 202 with `successCode` 202.
    ///
    /// Never re-sent once it may have reached the server, because a second POST starts a second
    /// backup: only a failure to connect (the request was provably never sent) is retried.
    pub async fn backup_owner(
        &self,
        token: &Secret,
        webhook_url: &Url,
    ) -> Result<Value, CallError> {
        let url = self.config.endpoint(&["backup", "owner"]);
        let body = serde_json::json!({ "webhook_url": webhook_url.as_str() });
        let response = self
            .send(
                Method::POST,
                &url,
                Some(token),
                |r| r.json(&body),
                false,
                "the backup request",
            )
            .await?;
        let status = response.status();
        if status != StatusCode::ACCEPTED {
            let excerpt = body_excerpt(response).await;
            return Err(CallError::Other(Error::ServiceError(format!(
                "The service answered {status} instead of 202 Accepted to the backup request: \"{excerpt}\". Check in the service whether a backup was started before trying again."
            ))));
        }
        let body = read_json(response, "the backup request").await?;
        if body.get("successCode").and_then(Value::as_f64) != Some(202.0) {
            return Err(CallError::Other(Error::BadResponse(
                "The service accepted the backup request but its answer lacked successCode 202. Check in the service whether a backup was started.".into(),
            )));
        }
        Ok(body)
    }

    /// `GET /webhook?id=` → `data.url` and the rest of `data`.
    pub async fn webhook(
        &self,
        token: &Secret,
        id: &CallbackId,
    ) -> Result<WebhookPayload, CallError> {
        let url = self.config.endpoint(&["webhook"]);
        let id = id.expose();
        let response = self
            .send(
                Method::GET,
                &url,
                Some(token),
                |r| r.query(&[("id", id.expose())]),
                true,
                "the result request",
            )
            .await?;
        let body = read_json(response, "the result request").await?;
        Ok(payload_from(&body, self.config.allow_http_loopback)?)
    }

    /// Sends one request, retrying as its kind allows, and sorts the answer's status.
    async fn send(
        &self,
        method: Method,
        url: &Url,
        token: Option<&Secret>,
        build: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
        idempotent: bool,
        what: &str,
    ) -> Result<reqwest::Response, CallError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = build(self.http.request(method.clone(), url.clone()));
            if let Some(token) = token {
                // Only ever sent to the base URL's origin: `url` is built from it, and the
                // client refuses redirects to other origins.
                request = request.header("token", token.expose());
            }
            let retry_left = attempt < self.retry.attempts;
            match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    if idempotent && retry_left && is_transient_status(status) {
                        tracing::info!(%status, what, attempt, "transient error status; retrying");
                    } else {
                        return classify(response).await;
                    }
                }
                Err(err) => {
                    let may_retry = if idempotent {
                        is_transient(&err)
                    } else {
                        err.is_connect()
                    };
                    if !(may_retry && retry_left) {
                        return Err(CallError::Other(Error::unreachable(Peer::Service, err)));
                    }
                    tracing::info!(what, attempt, "network error; retrying");
                }
            }
            tokio::time::sleep(self.retry.delay(attempt)).await;
        }
    }
}

/// The token of `/authenticate`'s answer: a non-empty string that can be sent as a header.
pub(crate) fn token_from(body: &Value) -> Result<Secret> {
    let token = body
        .get("token")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if token.is_empty()
        || token.len() > 256
        || reqwest::header::HeaderValue::from_str(token).is_err()
    {
        return Err(Error::BadResponse("The service's answer to signing in held no usable token. Check that the base URL points at webservice_v2.".into()));
    }
    Ok(Secret::new(token))
}

/// `data.url` (https, or loopback http with the opt-in) and the rest of `data` from
/// `GET /webhook`'s answer.
pub(crate) fn payload_from(body: &Value, allow_http_loopback: bool) -> Result<WebhookPayload> {
    let data = body.get("data").cloned().unwrap_or(Value::Null);
    let bad = |why: &str| {
        Error::BadResponse(format!("The service's result {why}. The backup may have failed on the service's side; try again."))
    };
    let text = data
        .get("url")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("held no data.url"))?;
    let url = Url::parse(text).map_err(|_| bad("held a data.url that is not a URL"))?;
    check_url(&url, allow_http_loopback).map_err(|_| bad("held a data.url that is not https"))?;
    Ok(WebhookPayload { url, data })
}

async fn classify(response: reqwest::Response) -> Result<reqwest::Response, CallError> {
    match response.status() {
        s if s.is_success() => Ok(response),
        StatusCode::UNAUTHORIZED => Err(CallError::Unauthorized),
        StatusCode::FORBIDDEN => Err(CallError::Forbidden),
        status => Err(CallError::Status {
            status,
            excerpt: body_excerpt(response).await,
        }),
    }
}

/// The user-facing error for a call that failed in the end.
pub(crate) fn finish_error(err: CallError, what: &str) -> Error {
    match err {
        CallError::Unauthorized => Error::AuthFailed(format!(
            "The service did not accept the session for {what}, even after signing in again. Check the profile's credentials."
        )),
        CallError::Forbidden => Error::PermissionDenied(format!(
            "The api key does not allow {what}. Ask the service operator to enable this endpoint for your organisation's key."
        )),
        CallError::Status { status, excerpt } if status == StatusCode::NOT_FOUND => Error::ServiceError(format!(
            "The service answered {status} to {what}: \"{excerpt}\". Check that the base URL ends in the API's path (such as /webservice_v2)."
        )),
        CallError::Status { status, excerpt } => Error::ServiceError(format!(
            "The service answered {status} to {what}: \"{excerpt}\". Try again later; if it keeps happening, contact the service operator."
        )),
        CallError::Other(e) => e,
    }
}
