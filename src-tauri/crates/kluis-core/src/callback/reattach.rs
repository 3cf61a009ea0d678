//! Transports for resumed jobs: each job's journal says how its callback can be collected
//! ([`Reattach`]); [`Reattacher`] builds the transport that does it. Jobs that share a relay,
//! listen address or webhook.site share one transport through the engine's
//! [`crate::engine::Transports`], by [`Reattacher::key`].

use std::sync::Arc;

use super::{CallbackTransport, ListenerTransport, Reattach, RelayTransport, WebhookSiteTransport};
use crate::config::ServiceConfig;
use crate::error::{Error, Result};
use crate::secret::Secret;

pub struct Reattacher {
    config: ServiceConfig,
    relay_secret: Option<Secret>,
}

impl Reattacher {
    /// `config` gives the TLS trust for relays and webhook.site; `relay_secret` is needed for
    /// relay jobs only.
    pub fn new(config: ServiceConfig, relay_secret: Option<Secret>) -> Self {
        Self {
            config,
            relay_secret,
        }
    }

    /// Which transport serves `reattach`: jobs with the same key share one.
    pub fn key(reattach: &Reattach) -> String {
        match reattach {
            Reattach::Relay { url, .. } => format!("relay {url}"),
            Reattach::Direct { listen, .. } => direct_key(*listen),
            Reattach::WebhookSite { base, .. } => format!("webhook-site {base}"),
        }
    }

    /// A new transport that collects `reattach`'s callback.
    pub async fn build(&self, reattach: &Reattach) -> Result<Arc<dyn CallbackTransport>> {
        Ok(match reattach {
            Reattach::Relay { url, .. } => {
                let secret = self.relay_secret.clone().ok_or_else(|| {
                    Error::Config(format!(
                        "A backup waits at the relay {url}: set KLUIS_RELAY_SECRET to its secret to collect it."
                    ))
                })?;
                Arc::new(RelayTransport::new(url, secret, &self.config, None)?)
            }
            Reattach::Direct {
                public_url, listen, ..
            } => Arc::new(ListenerTransport::direct(public_url, *listen).await?),
            Reattach::WebhookSite { base, .. } => {
                Arc::new(WebhookSiteTransport::new(base, &self.config)?)
            }
        })
    }
}

/// The key of a direct listener on `listen`: one listener per address, or two would compete
/// for it.
pub fn direct_key(listen: std::net::SocketAddr) -> String {
    format!("direct {listen}")
}
