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
//!
//! Several relay URLs (instances sharing one database, or one load-balanced URL and a direct
//! one) may be given, separated by commas: a new inbox is made at the first that answers, and
//! a long-poll that cannot reach its relay — a refused connection, a timeout, a 5xx such as a
//! stopping instance's 503 — moves to the next one, keeping its cursor, so nothing is read
//! twice or skipped. Only after every URL failed in a row does it back off. The one that
//! answered last is tried first by the next job.

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

/// Most relay URLs one setting may list.
const MAX_URLS: usize = 8;

#[derive(Clone)]
pub struct RelayTransport {
    /// The relay's URLs, in the order given.
    bases: Vec<Url>,
    /// Index into `bases` of the one that answered last.
    current: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    secret: Secret,
    http: reqwest::Client,
}

/// A refusal's `{code, message}` from the relay.
#[derive(Deserialize)]
struct Refusal {
    message: String,
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
    /// `urls`: the relay's public URL, or several separated by commas (https; plain http only
    /// to loopback with the opt-in in `config`, whose TLS trust — system roots plus the extra
    /// CA — is used for the relay too). `secret`: the office's tenant key, or the relay's
    /// shared secret.
    pub fn new(
        urls: &str,
        secret: Secret,
        config: &ServiceConfig,
        extra_ca_pem: Option<String>,
    ) -> Result<Self> {
        let bases = parse_urls(urls, config.allow_http_loopback)?;
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
            bases,
            current: Default::default(),
            secret,
            http: build_client(&relay_config, RedirectRule::SameOrigin)?,
        })
    }

    fn api(&self, at: usize, path: &str) -> Url {
        below(&self.bases[at % self.bases.len()], path)
    }

    /// The relay's URLs as one setting (what the journal records).
    fn urls(&self) -> String {
        let urls: Vec<&str> = self.bases.iter().map(Url::as_str).collect();
        urls.join(", ")
    }

    /// Indexes of `bases`, starting at the one that answered last.
    fn rotation(&self) -> impl Iterator<Item = usize> {
        let start = self.current.load(std::sync::atomic::Ordering::Relaxed);
        let n = self.bases.len();
        (0..n).map(move |i| (start + i) % n)
    }

    fn relay_error(&self, what: &str, detail: String) -> Error {
        Error::Network(format!(
            "The relay could not {what} ({}). Check the relay URL and secret.",
            mask_secrets(&detail, 160)
        ))
    }

    /// A new inbox at the first relay URL that answers, and that URL's index.
    async fn create_inbox(&self) -> Result<(Created, usize)> {
        let mut unreachable = String::new();
        for at in self.rotation() {
            let sent = self
                .http
                .post(self.api(at, "/api/inboxes"))
                .bearer_auth(self.secret.expose())
                .send()
                .await;
            match sent {
                Ok(response) if !response.status().is_server_error() => {
                    self.current.store(at, std::sync::atomic::Ordering::Relaxed);
                    return Ok((self.created(response).await?, at));
                }
                Ok(response) => unreachable = response.status().to_string(),
                Err(e) => unreachable = e.without_url().to_string(),
            }
        }
        Err(self.relay_error("be reached", unreachable))
    }

    async fn created(&self, response: reqwest::Response) -> Result<Created> {
        match response.status() {
            s if s.is_success() => read_json_as(response, "creating a relay inbox", MAX_JSON_BYTES)
                .await
                .map_err(|_| {
                    Error::BadResponse(
                        "The relay's answer was not understood. Is the relay URL right?".into(),
                    )
                }),
            reqwest::StatusCode::UNAUTHORIZED => Err(Error::Config(
                "The relay refused the key (revoked, rotated out or mistyped). Check the relay secret (KLUIS_RELAY_SECRET).".into(),
            )),
            s @ (reqwest::StatusCode::INSUFFICIENT_STORAGE
            | reqwest::StatusCode::TOO_MANY_REQUESTS) => {
                // The relay's own words (a quota), shortened and masked like any detail.
                let said = read_json_as::<Refusal>(response, "the relay's refusal", 4096)
                    .await
                    .map_or_else(|_| s.to_string(), |r| r.message);
                Err(Error::Network(format!(
                    "The relay refused a new inbox: {}. Try again later, or ask the relay's operator.",
                    mask_secrets(&said, 200)
                )))
            }
            s => Err(self.relay_error("create an inbox", s.to_string())),
        }
    }

    /// Long-polls `inbox` from relay URL `at` until the receiver is dropped, sending each
    /// distinct id once; on failure the next URL, with the same cursor.
    async fn poll(self, inbox: String, mut at: usize, ids: IdSender) {
        let mut cursor = 0i64;
        let mut failures = 0u32;
        while !ids.is_closed() {
            let mut url = self.api(at, &format!("/api/inboxes/{inbox}/events"));
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
                // This relay is away (or the network is down): the callback waits at the
                // relay's database. Try the next URL at once; back off once all failed.
                failures += 1;
                at = (at + 1) % self.bases.len();
                let urls = self.bases.len() as u32;
                if failures.is_multiple_of(urls) {
                    let rounds = failures / urls;
                    tracing::debug!(rounds, "no relay URL answers; waiting");
                    tokio::time::sleep(Duration::from_millis(250 * u64::from(rounds.min(20))))
                        .await;
                }
                continue;
            };
            failures = 0;
            self.current.store(at, std::sync::atomic::Ordering::Relaxed);
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

    /// Polls `inbox` for a job, starting at URL `at`; the cleanup deletes the inbox.
    fn listen(&self, inbox: String, at: usize, webhook_url: Url) -> Registration {
        let (tx, rx) = ids::channel();
        let poller = tokio::spawn(self.clone().poll(inbox.clone(), at, tx));
        let this = self.clone();
        let path = format!("/api/inboxes/{inbox}");
        Registration {
            webhook_url,
            ids: rx,
            guard: Box::new(PollerGuard(poller)),
            reattach: Some(Reattach::Relay {
                url: self.urls(),
                inbox,
            }),
            cleanup: Some(Box::pin(async move {
                for at in this.rotation() {
                    let sent = this
                        .http
                        .delete(this.api(at, &path))
                        .bearer_auth(this.secret.expose())
                        .send()
                        .await;
                    match sent {
                        Ok(r) if !r.status().is_server_error() => return,
                        Ok(r) => {
                            tracing::info!(status = %r.status(), "a relay URL could not delete the inbox")
                        }
                        Err(e) => {
                            tracing::info!(error = %e.without_url(), "a relay URL could not delete the inbox")
                        }
                    }
                }
                tracing::info!("the relay inbox could not be deleted; the relay will expire it");
            })),
        }
    }
}

/// The URLs of a relay setting: one, or several separated by commas (or spaces), each checked.
fn parse_urls(text: &str, allow_http_loopback: bool) -> Result<Vec<Url>> {
    let mut bases: Vec<Url> = Vec::new();
    for part in text
        .split([',', ' ', '\n'])
        .filter(|p| !p.trim().is_empty())
    {
        let base = Url::parse(part.trim())
            .map_err(|_| Error::Config("The relay URL is not a valid URL.".into()))?;
        check_url(&base, allow_http_loopback)
            .map_err(|why| Error::Config(format!("The relay URL {why}.")))?;
        if !bases.contains(&base) {
            bases.push(base);
        }
    }
    match bases.len() {
        0 => Err(Error::Config("Enter the relay's URL.".into())),
        n if n > MAX_URLS => Err(Error::Config(format!(
            "List at most {MAX_URLS} relay URLs."
        ))),
        _ => Ok(bases),
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
        let (created, at) = self.create_inbox().await?;
        // The service calls the URL that made the inbox: it answered just now.
        let webhook_url = self.api(at, &created.callback_path);
        Ok(self.listen(created.inbox, at, webhook_url))
    }

    async fn reattach(&self, reattach: &Reattach) -> Result<Registration> {
        match reattach {
            // The same relay if any URL is shared (a URL may have been added or dropped since).
            Reattach::Relay { url, inbox }
                if parse_urls(url, true).is_ok_and(|then| then.iter().any(|u| self.bases.contains(u))) =>
            {
                let at = self.current.load(std::sync::atomic::Ordering::Relaxed);
                Ok(self.listen(inbox.clone(), at, self.bases[0].clone()))
            }
            Reattach::Relay { url, .. } => Err(Error::Config(format!(
                "This backup waits at the relay {url}, but the relay configured now is {}. Resume it with that relay.",
                self.urls()
            ))),
            other => Err(Error::Config(format!(
                "The relay transport cannot collect a {} callback.",
                other.transport_name()
            ))),
        }
    }
}
