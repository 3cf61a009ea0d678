//! How the service's callback reaches Kluis.
//!
//! A [`CallbackTransport`] hands out, per job, a `webhook_url` for `POST /backup/owner` and a
//! stream of the callback ids that arrive for it ([`Registration`]). The job does not care how
//! the ids travel; transports that reach an office PC behind NAT (relay, tunnel, …) plug in
//! here. Whatever the transport, an id is only a hint: it is redeemed through the
//! authenticated `GET /webhook`, so a forged callback can at worst cost one request.
//!
//! A transport whose callback can still be collected after this process is gone (the relay,
//! webhook.site, a direct listener on a fixed address) says how in [`Registration::reattach`]; the
//! job journals that, and after a restart [`CallbackTransport::reattach`] picks the job's
//! callback up again. Loopback and tunnel URLs die with the process: they give `None`.

pub mod ids;
pub mod listener;
pub mod reattach;
pub mod relay;
pub mod tunnel;
pub mod webhook_site;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use url::Url;
use uuid::Uuid;

use crate::error::Result;
use crate::secret::Secret;

pub use listener::ListenerTransport;
pub use reattach::Reattacher;
pub use relay::RelayTransport;
pub use tunnel::TunnelTransport;
pub use webhook_site::WebhookSiteTransport;

/// The secret id the service appends to the webhook URL. Prints only its first 4 characters,
/// and is known to the scrubber while it lives.
#[derive(Clone)]
pub struct CallbackId(Uuid, Secret);

impl CallbackId {
    /// Parses a callback's `id` parameter; anything but a UUID is refused.
    pub fn parse(text: &str) -> Option<CallbackId> {
        Uuid::parse_str(text).ok().map(CallbackId::from_uuid)
    }

    fn from_uuid(id: Uuid) -> CallbackId {
        CallbackId(id, Secret::new(id.hyphenated().to_string()))
    }

    pub fn expose(&self) -> Secret {
        self.1.clone()
    }
}

impl PartialEq for CallbackId {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for CallbackId {}

impl std::hash::Hash for CallbackId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl std::fmt::Debug for CallbackId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CallbackId({self})")
    }
}

impl std::fmt::Display for CallbackId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0.simple().to_string();
        write!(f, "{}…", &text[..4])
    }
}

/// `path` appended below `base`'s own path (which a reverse proxy or relay URL may carry),
/// e.g. `https://h/kluis` + `/cb/x` → `https://h/kluis/cb/x`. `path` has no query.
pub(crate) fn below(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    let prefix = url.path().trim_end_matches('/').to_string();
    url.set_path(&format!("{prefix}{path}"));
    url
}

/// What another process needs to collect a job's callback: journalled before the POST. It
/// holds no secret — not the relay's secret, not a callback id, and for a direct listener only
/// a hash of the capability path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Reattach {
    /// Long-poll this inbox of the relay at `url` (with the relay secret of the resuming
    /// process).
    Relay { url: String, inbox: String },
    /// Listen on `listen` again and accept the path whose capability hashes to this.
    Direct {
        public_url: String,
        listen: SocketAddr,
        capability_sha256: String,
    },
    /// Poll this webhook.site token's requests.
    WebhookSite { base: String, token: String },
}

impl Reattach {
    /// The transport's name, as in the history.
    pub fn transport_name(&self) -> &'static str {
        match self {
            Reattach::Relay { .. } => "relay",
            Reattach::Direct { .. } => "direct",
            Reattach::WebhookSite { .. } => "webhook-site",
        }
    }
}

/// Work to do once a job has ended for good (e.g. delete its relay inbox).
pub type Cleanup = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One job's callback channel. Dropping it stops listening for that job in this process; what
/// lives elsewhere (a relay inbox) stays, so that a restarted Kluis can collect it.
pub struct Registration {
    /// What to send as `webhook_url` (for a reattached job: not used).
    pub webhook_url: Url,
    /// Distinct ids received for this job, in arrival order (duplicates already dropped; see
    /// [`ids`] for why the newest is never lost).
    pub ids: ids::IdReceiver,
    /// Keeps the transport's route for this job alive.
    pub guard: Box<dyn Send + Sync>,
    /// How to collect the callback after a restart, if this transport can.
    pub reattach: Option<Reattach>,
    /// Run when the job has ended (saved or failed), not when it was merely interrupted.
    pub cleanup: Option<Cleanup>,
}

impl Registration {
    /// A registration that cannot be resumed elsewhere and needs no cleanup.
    pub fn local(webhook_url: Url, ids: ids::IdReceiver, guard: Box<dyn Send + Sync>) -> Self {
        Self {
            webhook_url,
            ids,
            guard,
            reattach: None,
            cleanup: None,
        }
    }
}

/// A way for the service's callback to reach this process.
#[async_trait]
pub trait CallbackTransport: Send + Sync {
    /// Short name for history and messages, e.g. `loopback`.
    fn name(&self) -> &'static str;

    /// Starts listening for `job`'s callback and returns the URL to hand to the service.
    /// Listening has begun when this returns, so a callback that comes before the 202 is kept.
    async fn prepare(&self, job: Uuid) -> Result<Registration>;

    /// Listens again for a job prepared by an earlier process (see [`Reattach`]).
    async fn reattach(&self, reattach: &Reattach) -> Result<Registration> {
        Err(crate::Error::Config(format!(
            "The {} transport cannot collect a {} callback.",
            self.name(),
            reattach.transport_name()
        )))
    }

    /// A CA (PEM) to trust when calling this transport's URL from here, if it uses its own.
    fn test_trust_pem(&self) -> Option<String> {
        None
    }

    /// Whether its public URL still reaches this computer (a tunnel whose program stopped:
    /// no). A kept transport that is not is built anew for the next job.
    fn is_alive(&self) -> bool {
        true
    }
}

/// Sends a test call through `transport`'s public URL, as the service would (GET with
/// `?id=<uuid>` appended), and waits for it to come back; returns how long that took.
/// `http` makes the call: it must trust what the service would trust.
pub async fn test_callback(
    transport: &dyn CallbackTransport,
    http: &reqwest::Client,
) -> Result<std::time::Duration> {
    let mut registration = transport.prepare(Uuid::new_v4()).await?;
    let id = Uuid::new_v4();
    let mut url = registration.webhook_url.clone();
    url.query_pairs_mut().append_pair("id", &id.to_string());
    let started = tokio::time::Instant::now();
    let answer = http.get(url).send().await.map_err(|e| {
        crate::Error::Network(format!(
            "The test call could not reach the callback URL from this computer ({}). Check the public URL, the proxy or the relay, and the firewall.",
            crate::error::mask_secrets(&e.without_url().to_string(), 160)
        ))
    })?;
    if !answer.status().is_success() {
        return Err(crate::Error::ServiceError(format!(
            "The callback URL answered {} to the test call. Check that the proxy forwards to Kluis's --listen address.",
            answer.status()
        )));
    }
    match tokio::time::timeout(std::time::Duration::from_secs(15), registration.ids.recv()).await {
        Ok(Some(got)) if got.0 == id => Ok(started.elapsed()),
        Ok(Some(_)) => Err(crate::Error::BadResponse("A different call than the test arrived; try again.".into())),
        _ => Err(crate::Error::CallbackTimeout(
            "The test call was accepted but never reached Kluis. Check where the proxy forwards to, or the relay secret.".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path goes below the base's own path, with or without its trailing slash.
    #[test]
    fn appends_below_the_base_path() {
        let base = |s: &str| Url::parse(s).unwrap();
        assert_eq!(
            below(&base("https://h/kluis"), "/cb/x").as_str(),
            "https://h/kluis/cb/x"
        );
        assert_eq!(
            below(&base("https://h/kluis/"), "/cb/x").as_str(),
            "https://h/kluis/cb/x"
        );
        assert_eq!(
            below(&base("https://h"), "/api/inboxes").as_str(),
            "https://h/api/inboxes"
        );
    }
}
