//! Settings → "How the service reaches this computer": the app's choice of callback transport
//! (kluis-core's transports, the same as the CLI's `--callback`), checked when it is saved,
//! built on first use per profile (the profile gives the TLS trust), and tested on request.
//! The relay's secret is kept in the keyring, never in the settings file.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use kluis_core::callback::{
    reattach, webhook_site, RelayTransport, TunnelTransport, WebhookSiteTransport,
};
use kluis_core::{CallbackTransport, Error, ListenerTransport, Secret, ServiceConfig};
use serde::{Deserialize, Serialize};

use crate::error::AppResult;

/// The transport the app uses for every backup.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallbackSetting {
    /// A listener on 127.0.0.1: only a service on this computer (the demo) can reach it.
    #[default]
    Loopback,
    /// A kluis-relay inbox at `url`, polled (recommended for real use).
    Relay { url: String },
    /// The office's reverse proxy forwards `public_url` to the local `listen` address.
    Direct { public_url: String, listen: String },
    /// A Cloudflare quick tunnel; `program` is cloudflared's name or path.
    Tunnel { program: String },
    /// webhook.site, polled (a third party sees the callback id).
    WebhookSite,
}

/// What the Settings form sends: the choice, and the relay's secret when it is entered or
/// changed (empty or absent: keep the saved one).
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct CallbackInput {
    pub setting: CallbackSetting,
    pub relay_secret: Option<String>,
}

/// Shows whether a relay secret was given, never its value.
impl std::fmt::Debug for CallbackInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackInput")
            .field("setting", &self.setting)
            .field(
                "relay_secret",
                &self.relay_secret.as_ref().map(|_| "«hidden»"),
            )
            .finish()
    }
}

/// A successful "Test connection".
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct CallbackTestResult {
    pub transport: String,
    #[ts(type = "number")]
    pub millis: u64,
}

impl CallbackSetting {
    /// Checks the fields before the setting is saved.
    pub fn check(&self) -> AppResult<()> {
        let https = |text: &str, what: &str| -> AppResult<()> {
            let ok = url::Url::parse(text.trim())
                .is_ok_and(|u| u.scheme() == "https" && u.host().is_some() && u.query().is_none());
            if ok {
                Ok(())
            } else {
                Err(Error::Config(format!(
                    "The {what} must be an https address such as https://office.example/kluis."
                ))
                .into())
            }
        };
        match self {
            CallbackSetting::Loopback | CallbackSetting::WebhookSite => Ok(()),
            CallbackSetting::Relay { url } => https(url, "relay address"),
            CallbackSetting::Direct { public_url, listen } => {
                https(public_url, "public address")?;
                parse_listen(listen).map(|_| ())
            }
            CallbackSetting::Tunnel { program } if program.trim().is_empty() => Err(Error::Config(
                "Enter cloudflared's name or path (usually just cloudflared).".into(),
            )
            .into()),
            CallbackSetting::Tunnel { .. } => Ok(()),
        }
    }

    /// Builds the transport. `config` gives the TLS trust; `relay_secret` is needed for a
    /// relay only; `webhook_site` is webhook.site's address (or the demo's stand-in).
    pub async fn build(
        &self,
        config: &ServiceConfig,
        relay_secret: Option<Secret>,
        webhook_site: &str,
    ) -> AppResult<Arc<dyn CallbackTransport>> {
        Ok(match self {
            CallbackSetting::Loopback => Arc::new(ListenerTransport::loopback().await?),
            CallbackSetting::Relay { url } => {
                let secret = relay_secret
                    .ok_or_else(|| Error::Config("Enter the relay's secret in Settings.".into()))?;
                Arc::new(RelayTransport::new(url.trim(), secret, config, None)?)
            }
            CallbackSetting::Direct { public_url, listen } => {
                Arc::new(ListenerTransport::direct(public_url.trim(), parse_listen(listen)?).await?)
            }
            CallbackSetting::Tunnel { program } => {
                Arc::new(TunnelTransport::start(std::path::Path::new(program.trim())).await?)
            }
            CallbackSetting::WebhookSite => {
                Arc::new(WebhookSiteTransport::new(webhook_site, config)?)
            }
        })
    }
}

impl CallbackSetting {
    /// Which built transport serves `profile`'s jobs: listeners and tunnels belong to this
    /// computer (one per address, or two would compete for it); relay and webhook.site
    /// clients use the profile's TLS trust.
    pub(crate) fn cache_key(&self, profile: &str) -> String {
        match self {
            CallbackSetting::Loopback => "loopback".into(),
            CallbackSetting::Direct { listen, .. } => match parse_listen(listen) {
                Ok(listen) => reattach::direct_key(listen),
                Err(_) => format!("direct {}", listen.trim()),
            },
            CallbackSetting::Tunnel { program } => format!("tunnel {}", program.trim()),
            CallbackSetting::Relay { .. } => format!("relay {profile}"),
            CallbackSetting::WebhookSite => format!("webhook-site {profile}"),
        }
    }
}

fn parse_listen(text: &str) -> AppResult<SocketAddr> {
    text.trim().parse().map_err(|_| {
        Error::Config(
            "The local address must be an IP address and port, such as 127.0.0.1:8787.".into(),
        )
        .into()
    })
}

/// webhook.site's address: `KLUIS_WEBHOOK_SITE_URL` when set, else the real one.
pub fn default_webhook_site() -> String {
    std::env::var("KLUIS_WEBHOOK_SITE_URL").unwrap_or_else(|_| webhook_site::DEFAULT_BASE.into())
}

/// Built transports of the current setting, by [`CallbackSetting::cache_key`] (emptied when
/// the setting changes).
#[derive(Default)]
pub(crate) struct Transports(tokio::sync::Mutex<HashMap<String, Arc<dyn CallbackTransport>>>);

impl Transports {
    pub(crate) async fn get_or_build(
        &self,
        key: &str,
        build: impl std::future::Future<Output = AppResult<Arc<dyn CallbackTransport>>>,
    ) -> AppResult<Arc<dyn CallbackTransport>> {
        let mut built = self.0.lock().await;
        if let Some(transport) = built.get(key) {
            return Ok(transport.clone());
        }
        let transport = build.await?;
        built.insert(key.to_string(), transport.clone());
        Ok(transport)
    }

    pub(crate) async fn clear(&self) {
        self.0.lock().await.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relay secret the Settings form sends prints as a placeholder in `Debug`.
    #[test]
    fn input_debug_hides_the_relay_secret() {
        let input = CallbackInput {
            setting: CallbackSetting::Loopback,
            relay_secret: Some("relay-secret-value".into()),
        };
        assert!(!format!("{input:?}").contains("relay-secret-value"));
    }

    /// Each choice's fields are checked: https addresses, a socket address, a program.
    #[test]
    fn checks_the_fields() {
        let ok = |s: CallbackSetting| s.check().is_ok();
        assert!(ok(CallbackSetting::Loopback));
        assert!(ok(CallbackSetting::Relay {
            url: "https://relay.example".into()
        }));
        assert!(!ok(CallbackSetting::Relay {
            url: "http://relay.example".into()
        }));
        assert!(ok(CallbackSetting::Direct {
            public_url: "https://office.example/kluis".into(),
            listen: "127.0.0.1:8787".into()
        }));
        assert!(!ok(CallbackSetting::Direct {
            public_url: "https://office.example/kluis".into(),
            listen: "localhost".into()
        }));
        assert!(!ok(CallbackSetting::Tunnel {
            program: " ".into()
        }));
    }
}
