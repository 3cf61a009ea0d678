//! The webhook.site transport (opt-in): no server at all. Kluis creates a catcher URL at
//! webhook.site, gives it to the service as `webhook_url`, and polls webhook.site's requests
//! API for the callback. A third party therefore sees the callback id (never the token or the
//! credentials, and the id alone is useless without them) — the CLI says so when it is chosen.
//!
//! Polling every 3 s stays well inside webhook.site's rate limits for anonymous tokens.
//! webhook.site keeps the requests it caught, so a restarted Kluis polls the same token again
//! ([`Reattach::WebhookSite`]); the token is journalled, which is no more than the third party
//! the user opted into already sees.

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;
use url::Url;
use uuid::Uuid;

use super::ids::{self, IdSender};
use super::{below, CallbackId, CallbackTransport, Reattach, Registration};
use crate::config::ServiceConfig;
use crate::error::{mask_secrets, Error, Result};
use crate::http::{build_client, read_json_as, RedirectRule, MAX_JSON_BYTES};

/// Largest listing of webhook.site's caught requests read: anyone who knows the URL can send
/// it requests with bodies, so the listing is capped like every answer, more generously.
const LISTING_MAX_BYTES: usize = 8 * 1024 * 1024;

pub const DEFAULT_BASE: &str = "https://webhook.site";
const POLL_EVERY: Duration = Duration::from_secs(3);

#[derive(Clone)]
pub struct WebhookSiteTransport {
    base: Url,
    http: reqwest::Client,
    poll_every: Duration,
}

#[derive(Deserialize)]
struct Token {
    uuid: String,
}

#[derive(Deserialize)]
pub(crate) struct Requests {
    data: Vec<Value>,
}

impl WebhookSiteTransport {
    /// `base`: webhook.site, or a stand-in for tests (must be https).
    pub fn new(base: &str, config: &ServiceConfig) -> Result<Self> {
        let base = Url::parse(base)
            .ok()
            .filter(|u| u.scheme() == "https")
            .ok_or_else(|| Error::Config("The webhook.site URL must be an https URL.".into()))?;
        Ok(Self {
            base,
            http: build_client(config, RedirectRule::SameOrigin)?,
            poll_every: POLL_EVERY,
        })
    }

    /// Polls more often (tests).
    pub fn with_poll_interval(mut self, every: Duration) -> Self {
        self.poll_every = every;
        self
    }

    fn url(&self, path: &str) -> Url {
        below(&self.base, path)
    }

    async fn poll(self, token: String, ids: IdSender) {
        while !ids.is_closed() {
            let listed = match self
                .http
                .get(self.url(&format!("/token/{token}/requests")))
                .header("accept", "application/json")
                .send()
                .await
            {
                Ok(r) if r.status().is_success() => {
                    read_json_as::<Requests>(r, "webhook.site's requests", LISTING_MAX_BYTES)
                        .await
                        .ok()
                }
                _ => None,
            };
            // Oldest first, so ids reach the job in arrival order.
            for request in listed.map(|l| l.data).unwrap_or_default().iter().rev() {
                let id = request
                    .pointer("/query/id")
                    .and_then(Value::as_str)
                    .and_then(CallbackId::parse);
                if let Some(id) = id {
                    ids.push(id);
                }
            }
            tokio::time::sleep(self.poll_every).await;
        }
    }
}

struct PollGuard(tokio::task::JoinHandle<()>);

impl Drop for PollGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[async_trait]
impl CallbackTransport for WebhookSiteTransport {
    fn name(&self) -> &'static str {
        "webhook-site"
    }

    async fn prepare(&self, _job: Uuid) -> Result<Registration> {
        let response = self
            .http
            .post(self.url("/token"))
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| {
                Error::Network(format!(
                    "webhook.site could not be reached ({}).",
                    mask_secrets(&e.without_url().to_string(), 160)
                ))
            })?;
        if !response.status().is_success() {
            return Err(Error::ServiceError(format!(
                "webhook.site refused to create a URL ({}). Try again later.",
                response.status()
            )));
        }
        let token: Token = read_json_as(response, "creating a webhook.site URL", MAX_JSON_BYTES)
            .await
            .map_err(|_| Error::BadResponse("webhook.site's answer was not understood.".into()))?;
        if Uuid::parse_str(&token.uuid).is_err() {
            return Err(Error::BadResponse(
                "webhook.site's answer held no usable token.".into(),
            ));
        }
        let webhook_url = self.url(&format!("/{}", token.uuid));
        Ok(self.listen(token.uuid, webhook_url))
    }

    async fn reattach(&self, reattach: &Reattach) -> Result<Registration> {
        match reattach {
            Reattach::WebhookSite { base, token }
                if Url::parse(base).ok().as_ref() == Some(&self.base) =>
            {
                Ok(self.listen(token.clone(), self.base.clone()))
            }
            other => Err(Error::Config(format!(
                "This backup's callback is not at {} (it is a {} job).",
                self.base,
                other.transport_name()
            ))),
        }
    }
}

impl WebhookSiteTransport {
    fn listen(&self, token: String, webhook_url: Url) -> Registration {
        let (tx, rx) = ids::channel();
        let poller = tokio::spawn(self.clone().poll(token.clone(), tx));
        Registration {
            webhook_url,
            ids: rx,
            guard: Box::new(PollGuard(poller)),
            reattach: Some(Reattach::WebhookSite {
                base: self.base.to_string(),
                token,
            }),
            cleanup: None,
        }
    }
}
