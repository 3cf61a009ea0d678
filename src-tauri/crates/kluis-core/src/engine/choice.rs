//! [`CallbackChoice`]: how the service's callback reaches this computer — the CLI's
//! `--callback` and the app's Settings choice are this one type — checked, built into a
//! [`CallbackTransport`], and tested with a call like the service's.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::callback::{
    reattach, webhook_site, CallbackTransport, ListenerTransport, RelayTransport, TunnelTransport,
    WebhookSiteTransport,
};
use crate::config::ServiceConfig;
use crate::error::{Error, Result};
use crate::secret::Secret;

/// The transport a backup's callback comes through.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallbackChoice {
    /// A listener on 127.0.0.1: only a service on this computer (the demo) can reach it.
    #[default]
    Loopback,
    /// A kluis-relay inbox at `url`, polled (recommended for real use). Several URLs of one
    /// relay, separated by commas, are tried in turn when one cannot be reached.
    Relay { url: String },
    /// The office's reverse proxy forwards `public_url` to the local `listen` address.
    Direct { public_url: String, listen: String },
    /// A Cloudflare quick tunnel; `program` is cloudflared's name or path.
    Tunnel { program: String },
    /// webhook.site, polled (a third party sees the callback id).
    WebhookSite,
}

/// What building a relay or webhook.site transport needs besides the choice.
#[derive(Clone, Default)]
pub struct TransportNeeds {
    /// The relay's shared secret (a relay only).
    pub relay_secret: Option<Secret>,
    /// webhook.site's address (or the demo's stand-in); [`default_webhook_site`] when `None`.
    pub webhook_site: Option<String>,
}

impl CallbackChoice {
    /// Reads the CLI's spelling: `loopback`, `relay=URL`, `direct=URL` (its local address
    /// comes from `--listen`, see [`CallbackChoice::listening_on`]), `tunnel=PROGRAM`,
    /// `webhook-site`.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        match text {
            "loopback" => Ok(Self::Loopback),
            "webhook-site" => Ok(Self::WebhookSite),
            _ => match text.split_once('=') {
                Some(("relay", url)) if !url.is_empty() => Ok(Self::Relay { url: url.into() }),
                Some(("direct", url)) if !url.is_empty() => Ok(Self::Direct {
                    public_url: url.into(),
                    listen: String::new(),
                }),
                Some(("tunnel", program)) if !program.is_empty() => Ok(Self::Tunnel {
                    program: program.into(),
                }),
                _ => Err("expected `loopback`, `relay=URL`, `direct=URL`, `tunnel=cloudflared` or `webhook-site`".into()),
            },
        }
    }

    /// A direct choice with its local address (the CLI's `--listen`); other choices as they are.
    pub fn listening_on(self, listen: Option<SocketAddr>) -> Result<Self> {
        match self {
            Self::Direct { public_url, .. } => {
                let listen = listen.ok_or_else(|| {
                    Error::Config("--callback direct=… needs --listen ADDR: the local address your reverse proxy forwards the callback to.".into())
                })?;
                Ok(Self::Direct {
                    public_url,
                    listen: listen.to_string(),
                })
            }
            // Given with another route it would be ignored, and the user would wait for a
            // callback at an address nobody listens on.
            other if listen.is_some() => Err(Error::Config(format!(
                "--listen is only for --callback direct=…; the {} callback chooses its own address. Leave --listen out.",
                other.name()
            ))),
            other => Ok(other),
        }
    }

    /// Checks the fields before the choice is saved: https addresses, a socket address, a
    /// program.
    pub fn check(&self) -> Result<()> {
        let https = |text: &str, what: &str| -> Result<()> {
            let ok = url::Url::parse(text.trim())
                .is_ok_and(|u| u.scheme() == "https" && u.host().is_some() && u.query().is_none());
            if ok {
                Ok(())
            } else {
                Err(Error::Config(format!(
                    "The {what} must be an https address such as https://office.example/kluis."
                )))
            }
        };
        match self {
            Self::Loopback | Self::WebhookSite => Ok(()),
            Self::Relay { url } => {
                let mut urls = url
                    .split([',', ' ', '\n'])
                    .map(str::trim)
                    .filter(|u| !u.is_empty())
                    .peekable();
                if urls.peek().is_none() {
                    return https("", "relay address");
                }
                urls.try_for_each(|u| https(u, "relay address"))
            }
            Self::Direct { public_url, listen } => {
                https(public_url, "public address")?;
                parse_listen(listen).map(|_| ())
            }
            Self::Tunnel { program } if program.trim().is_empty() => Err(Error::Config(
                "Enter cloudflared's name or path (usually just cloudflared).".into(),
            )),
            Self::Tunnel { .. } => Ok(()),
        }
    }

    /// Builds the transport. `config` gives the TLS trust of relay and webhook.site clients.
    pub async fn build(
        &self,
        config: &ServiceConfig,
        needs: TransportNeeds,
    ) -> Result<Arc<dyn CallbackTransport>> {
        Ok(match self {
            Self::Loopback => Arc::new(ListenerTransport::loopback().await?),
            Self::Relay { url } => {
                let secret = needs
                    .relay_secret
                    .ok_or_else(|| Error::Config("Enter the relay's secret in Settings.".into()))?;
                Arc::new(RelayTransport::new(url.trim(), secret, config, None)?)
            }
            Self::Direct { public_url, listen } => {
                Arc::new(ListenerTransport::direct(public_url.trim(), parse_listen(listen)?).await?)
            }
            Self::Tunnel { program } => {
                Arc::new(TunnelTransport::start(std::path::Path::new(program.trim())).await?)
            }
            Self::WebhookSite => {
                let base = needs.webhook_site.unwrap_or_else(default_webhook_site);
                Arc::new(WebhookSiteTransport::new(&base, config)?)
            }
        })
    }

    /// The name its transport records in the history (as [`CallbackTransport::name`]).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Loopback => "loopback",
            Self::Direct { .. } => "direct",
            Self::Tunnel { .. } => "tunnel",
            Self::Relay { .. } => "relay",
            Self::WebhookSite => "webhook-site",
        }
    }

    /// Whether a failure to build this transport is kept for a while (see
    /// [`super::Transports::get_or_build`]): a tunnel's takes its 45 s to fail and is the same
    /// for every klant; the others fail fast, or depend on what the key does not name (the
    /// demo's webhook.site, started a moment later), so each klant tries again.
    pub fn keeps_failures(&self) -> bool {
        matches!(self, Self::Tunnel { .. })
    }

    /// Which built transport serves `profile`'s jobs (see [`super::Transports`]): listeners
    /// and tunnels belong to this computer (one per address, or two would compete for it);
    /// relay and webhook.site clients use the profile's TLS trust.
    pub fn cache_key(&self, profile: &str) -> String {
        match self {
            Self::Loopback => "loopback".into(),
            Self::Direct { listen, .. } => match parse_listen(listen) {
                Ok(listen) => reattach::direct_key(listen),
                Err(_) => format!("direct {}", listen.trim()),
            },
            Self::Tunnel { program } => format!("tunnel {}", program.trim()),
            Self::Relay { .. } => format!("relay {profile}"),
            Self::WebhookSite => format!("webhook-site {profile}"),
        }
    }
}

/// Sends a test call through `transport`'s public URL as the service would, trusting what
/// the service's connection trusts plus the transport's own test certificate (a loopback
/// listener's), and returns how long it took to come back.
pub async fn test_transport(
    transport: &dyn CallbackTransport,
    config: &ServiceConfig,
) -> Result<Duration> {
    let mut config = config.clone();
    if let Some(pem) = transport.test_trust_pem() {
        config.extra_ca_pem = Some(config.extra_ca_pem.take().unwrap_or_default() + &pem);
    }
    let http = crate::http::build_client(&config, crate::http::RedirectRule::SameOrigin)?;
    crate::callback::test_callback(transport, &http).await
}

fn parse_listen(text: &str) -> Result<SocketAddr> {
    text.trim().parse().map_err(|_| {
        Error::Config(
            "The local address must be an IP address and port, such as 127.0.0.1:8787.".into(),
        )
    })
}

/// webhook.site's address: `KLUIS_WEBHOOK_SITE_URL` when set (tests), else the real one.
pub fn default_webhook_site() -> String {
    std::env::var("KLUIS_WEBHOOK_SITE_URL").unwrap_or_else(|_| webhook_site::DEFAULT_BASE.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each choice's fields are checked: https addresses, a socket address, a program.
    #[test]
    fn checks_the_fields() {
        let ok = |s: CallbackChoice| s.check().is_ok();
        assert!(ok(CallbackChoice::Loopback));
        assert!(ok(CallbackChoice::Relay {
            url: "https://relay.example".into()
        }));
        assert!(!ok(CallbackChoice::Relay {
            url: "http://relay.example".into()
        }));
        assert!(ok(CallbackChoice::Relay {
            url: "https://a.example/k, https://b.example/k".into()
        }));
        assert!(
            !ok(CallbackChoice::Relay {
                url: "https://a.example/k, http://b.example/k".into()
            }),
            "every URL of a list is checked"
        );
        assert!(!ok(CallbackChoice::Relay { url: " , ".into() }));
        assert!(ok(CallbackChoice::Direct {
            public_url: "https://office.example/kluis".into(),
            listen: "127.0.0.1:8787".into()
        }));
        assert!(!ok(CallbackChoice::Direct {
            public_url: "https://office.example/kluis".into(),
            listen: "localhost".into()
        }));
        assert!(!ok(CallbackChoice::Tunnel {
            program: " ".into()
        }));
    }

    /// The CLI's spellings read into the same choices the app stores, and bad ones are refused.
    #[test]
    fn parses_the_cli_spelling() {
        assert_eq!(
            CallbackChoice::parse("loopback"),
            Ok(CallbackChoice::Loopback)
        );
        assert_eq!(
            CallbackChoice::parse("relay=https://r.example"),
            Ok(CallbackChoice::Relay {
                url: "https://r.example".into()
            })
        );
        let direct = CallbackChoice::parse("direct=https://o.example/k").unwrap();
        assert!(
            direct.clone().listening_on(None).is_err(),
            "direct needs --listen"
        );
        let elsewhere = Some("127.0.0.1:8787".parse().unwrap());
        assert!(
            (CallbackChoice::Loopback.listening_on(elsewhere)).is_err(),
            "--listen is refused with a route that would ignore it"
        );
        assert_eq!(
            direct
                .listening_on(Some("127.0.0.1:8787".parse().unwrap()))
                .unwrap(),
            CallbackChoice::Direct {
                public_url: "https://o.example/k".into(),
                listen: "127.0.0.1:8787".into()
            }
        );
        assert_eq!(
            CallbackChoice::parse("tunnel=/opt/cloudflared"),
            Ok(CallbackChoice::Tunnel {
                program: "/opt/cloudflared".into()
            })
        );
        assert_eq!(
            CallbackChoice::parse("webhook-site"),
            Ok(CallbackChoice::WebhookSite)
        );
        for bad in ["", "relay=", "direct", "tunnel=", "ftp=x", "Loopback"] {
            assert!(
                CallbackChoice::parse(bad).is_err(),
                "{bad:?} must be refused"
            );
        }
    }

    /// The app's saved settings (JSON) keep reading: the stored shape did not change.
    #[test]
    fn reads_the_stored_shape() {
        let stored =
            r#"{"kind":"direct","public_url":"https://o.example/k","listen":"127.0.0.1:1"}"#;
        let choice: CallbackChoice = serde_json::from_str(stored).unwrap();
        assert_eq!(serde_json::to_string(&choice).unwrap(), stored);
    }
}
