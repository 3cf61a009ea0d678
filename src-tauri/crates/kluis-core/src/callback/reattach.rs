//! Transports for resumed jobs: each job's journal says how its callback can be collected
//! ([`Reattach`]); [`Reattacher`] builds the transport that does it, once per relay, listen
//! address or webhook.site, however many jobs share it.

use std::collections::HashMap;
use std::sync::Arc;

use super::{CallbackTransport, ListenerTransport, Reattach, RelayTransport, WebhookSiteTransport};
use crate::config::ServiceConfig;
use crate::error::{Error, Result};
use crate::secret::Secret;

pub struct Reattacher {
    config: ServiceConfig,
    relay_secret: Option<Secret>,
    built: HashMap<String, Arc<dyn CallbackTransport>>,
}

impl Reattacher {
    /// `config` gives the TLS trust for relays and webhook.site; `relay_secret` is needed for
    /// relay jobs only.
    pub fn new(config: ServiceConfig, relay_secret: Option<Secret>) -> Self {
        Self {
            config,
            relay_secret,
            built: HashMap::new(),
        }
    }

    /// The transport that collects `spec`'s callback.
    pub async fn transport(&mut self, spec: &Reattach) -> Result<Arc<dyn CallbackTransport>> {
        let key = match spec {
            Reattach::Relay { url, .. } => format!("relay {url}"),
            Reattach::Direct { listen, .. } => format!("direct {listen}"),
            Reattach::WebhookSite { base, .. } => format!("webhook-site {base}"),
        };
        if let Some(transport) = self.built.get(&key) {
            return Ok(transport.clone());
        }
        let transport: Arc<dyn CallbackTransport> = match spec {
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
        };
        self.built.insert(key, transport.clone());
        Ok(transport)
    }
}
