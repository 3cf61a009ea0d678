//! How the service's callback reaches Kluis.
//!
//! A [`CallbackTransport`] hands out, per job, a `webhook_url` for `POST /backup/owner` and a
//! stream of the callback ids that arrive for it ([`Registration`]). The job does not care how
//! the ids travel; transports that reach an office PC behind NAT (relay, tunnel, …) plug in
//! here. Whatever the transport, an id is only a hint: it is redeemed through the
//! authenticated `GET /webhook`, so a forged callback can at worst cost one request.

pub mod listener;
pub mod relay;

use async_trait::async_trait;
use tokio::sync::mpsc;
use url::Url;
use uuid::Uuid;

use crate::error::Result;
use crate::secret::Secret;

pub use listener::ListenerTransport;
pub use relay::RelayTransport;

/// The secret id the service appends to the webhook URL. Prints only its first 4 characters.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CallbackId(Uuid);

impl CallbackId {
    /// Parses a callback's `id` parameter; anything but a UUID is refused.
    pub fn parse(text: &str) -> Option<CallbackId> {
        Uuid::parse_str(text).ok().map(CallbackId)
    }

    pub fn expose(&self) -> Secret {
        Secret::new(self.0.hyphenated().to_string())
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

/// One job's callback channel. Dropping it stops listening for that job.
pub struct Registration {
    /// What to send as `webhook_url`.
    pub webhook_url: Url,
    /// Distinct ids received for this job, in arrival order (duplicates already dropped).
    pub ids: mpsc::Receiver<CallbackId>,
    /// Keeps the transport's route for this job alive.
    pub guard: Box<dyn Send + Sync>,
}

/// A way for the service's callback to reach this process.
#[async_trait]
pub trait CallbackTransport: Send + Sync {
    /// Short name for history and messages, e.g. `loopback`.
    fn name(&self) -> &'static str;

    /// Starts listening for `job`'s callback and returns the URL to hand to the service.
    /// Listening has begun when this returns, so a callback that comes before the 202 is kept.
    async fn prepare(&self, job: Uuid) -> Result<Registration>;
}
