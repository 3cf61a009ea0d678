//! The relay transport: the service calls a kluis-relay inbox (public, at the office's own
//! server), and Kluis long-polls the inbox for the callback — so nothing needs to reach this
//! computer, and a callback that comes while Kluis is not running waits at the relay.
//!
//! Per job: `POST /api/inboxes` → the webhook URL is the relay's URL plus the inbox's
//! capability path. A background task long-polls `GET /api/inboxes/<inbox>/events` from a
//! cursor and hands each `id` to the job. Nothing is acknowledged while the job runs: if Kluis
//! stops before the backup is saved, the callback is still at the relay and a restarted Kluis
//! reads it again ([`Reattach::Relay`] journals only the inbox's name, never the id). When the
//! job has ended, its cleanup deletes the inbox — which acknowledges everything at once. A job
//! that was merely interrupted leaves the inbox for the resume (the relay expires forgotten
//! ones).

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use url::Url;
use uuid::Uuid;

use super::ids::{self, IdSender};
use super::{below, CallbackId, CallbackTransport, Reattach, Registration};
use crate::config::{check_url, ServiceConfig};
use crate::error::{mask_secrets, Error, Result};
use crate::http::{build_client, read_json_as, RedirectRule, MAX_JSON_BYTES};
use crate::secret::Secret;

/// How long one long-poll may wait at the relay.
const POLL_WAIT_SECS: u64 = 25;

#[derive(Clone)]
pub struct RelayTransport {
    base: Url,
    secret: Secret,
    http: reqwest::Client,
}

#[derive(Deserialize)]
struct Created {
    inbox: String,
    callback_path: String,
}

#[derive(Deserialize)]
pub(crate) struct Events {
    events: Vec<RelayEvent>,
    next: i64,
}

#[derive(Deserialize)]
struct RelayEvent {
    query: String,
}

impl RelayTransport {
    /// `base`: the relay's public URL (https; plain http only to loopback with the opt-in in
    /// `config`, whose TLS trust — system roots plus the extra CA — is used for the relay too).
    pub fn new(
        base: &str,
        secret: Secret,
        config: &ServiceConfig,
        extra_ca_pem: Option<String>,
    ) -> Result<Self> {
        let base = Url::parse(base)
            .map_err(|_| Error::Config("The relay URL is not a valid URL.".into()))?;
        check_url(&base, config.allow_http_loopback)
            .map_err(|why| Error::Config(format!("The relay URL {why}.")))?;
        if secret.is_empty() {
            return Err(Error::Config(
                "The relay secret is not set. Set KLUIS_RELAY_SECRET to the relay's secret.".into(),
            ));
        }
        let mut relay_config = config.clone();
        if extra_ca_pem.is_some() {
            relay_config.extra_ca_pem = extra_ca_pem;
        }
        // A long-poll is silent for up to POLL_WAIT_SECS: the read timeout must outlast it.
        relay_config.timeouts.read = relay_config
            .timeouts
            .read
            .max(Duration::from_secs(POLL_WAIT_SECS + 15));
        Ok(Self {
            base,
            secret,
            http: build_client(&relay_config, RedirectRule::SameOrigin)?,
        })
    }

    fn api(&self, path: &str) -> Url {
        below(&self.base, path)
    }

    fn relay_error(&self, what: &str, detail: String) -> Error {
        Error::Network(format!(
            "The relay could not {what} ({}). Check the relay URL and secret.",
            mask_secrets(&detail, 160)
        ))
    }

    async fn create_inbox(&self) -> Result<Created> {
        let response = self
            .http
            .post(self.api("/api/inboxes"))
            .bearer_auth(self.secret.expose())
            .send()
            .await
            .map_err(|e| self.relay_error("be reached", e.without_url().to_string()))?;
        match response.status() {
            s if s.is_success() => read_json_as(response, "creating a relay inbox", MAX_JSON_BYTES)
                .await
                .map_err(|_| {
                    Error::BadResponse(
                        "The relay's answer was not understood. Is the relay URL right?".into(),
                    )
                }),
            reqwest::StatusCode::UNAUTHORIZED => Err(Error::Config(
                "The relay refused the secret. Check KLUIS_RELAY_SECRET.".into(),
            )),
            s => Err(self.relay_error("create an inbox", s.to_string())),
        }
    }

    /// Long-polls `inbox` until the receiver is dropped, sending each distinct id once.
    async fn poll(self, inbox: String, ids: IdSender) {
        let mut cursor = 0i64;
        let mut failures = 0u32;
        while !ids.is_closed() {
            let mut url = self.api(&format!("/api/inboxes/{inbox}/events"));
            url.set_query(Some(&format!("after={cursor}&wait={POLL_WAIT_SECS}")));
            let batch = match self
                .http
                .get(url)
                .bearer_auth(self.secret.expose())
                .send()
                .await
            {
                Ok(r) if r.status().is_success() => {
                    read_json_as::<Events>(r, "the relay's events", MAX_JSON_BYTES)
                        .await
                        .ok()
                }
                _ => None,
            };
            let Some(batch) = batch else {
                // The relay is away or the network is down: the callback waits there.
                failures += 1;
                tokio::time::sleep(Duration::from_millis(250 * u64::from(failures.min(20)))).await;
                continue;
            };
            failures = 0;
            for event in &batch.events {
                let id = url::form_urlencoded::parse(event.query.as_bytes())
                    .find(|(k, _)| k == "id")
                    .and_then(|(_, v)| CallbackId::parse(&v));
                if let Some(id) = id {
                    ids.push(id);
                }
            }
            cursor = cursor.max(batch.next);
        }
    }

    /// Polls `inbox` for a job; the cleanup deletes the inbox.
    fn listen(&self, inbox: String, webhook_url: Url) -> Registration {
        let (tx, rx) = ids::channel();
        let poller = tokio::spawn(self.clone().poll(inbox.clone(), tx));
        let delete = self
            .http
            .delete(self.api(&format!("/api/inboxes/{inbox}")))
            .bearer_auth(self.secret.expose());
        Registration {
            webhook_url,
            ids: rx,
            guard: Box::new(PollerGuard(poller)),
            reattach: Some(Reattach::Relay {
                url: self.base.to_string(),
                inbox,
            }),
            cleanup: Some(Box::pin(async move {
                if let Err(e) = delete.send().await {
                    tracing::info!(error = %e.without_url(), "the relay inbox could not be deleted; the relay will expire it");
                }
            })),
        }
    }
}

/// Stops the poller when a job's registration is dropped (the inbox stays).
struct PollerGuard(tokio::task::JoinHandle<()>);

impl Drop for PollerGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[async_trait]
impl CallbackTransport for RelayTransport {
    fn name(&self) -> &'static str {
        "relay"
    }

    async fn prepare(&self, _job: Uuid) -> Result<Registration> {
        let created = self.create_inbox().await?;
        let webhook_url = self.api(&created.callback_path);
        Ok(self.listen(created.inbox, webhook_url))
    }

    async fn reattach(&self, reattach: &Reattach) -> Result<Registration> {
        match reattach {
            Reattach::Relay { url, inbox } if Url::parse(url).ok().as_ref() == Some(&self.base) => {
                Ok(self.listen(inbox.clone(), self.base.clone()))
            }
            Reattach::Relay { url, .. } => Err(Error::Config(format!(
                "This backup waits at the relay {url}, but the relay configured now is {}. Resume it with that relay.",
                self.base
            ))),
            other => Err(Error::Config(format!(
                "The relay transport cannot collect a {} callback.",
                other.transport_name()
            ))),
        }
    }
}
