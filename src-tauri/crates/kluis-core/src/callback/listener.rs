//! Listener transports: the service calls a listener of this process.
//!
//! - [`ListenerTransport::loopback`]: HTTPS on 127.0.0.1 with a certificate made at start.
//!   Only a service on the same machine (the simulator, the demo) can reach it.
//! - [`ListenerTransport::direct`]: plain HTTP on a fixed address, reached through the
//!   office's own reverse proxy or port forward, which terminates TLS for a public https URL
//!   (`--callback direct=https://public.example/kluis --listen 127.0.0.1:8787`). The proxy may
//!   keep or strip the URL's path prefix: a path is matched by its last two segments.
//!
//! Each job gets a capability path `/cb/<64 hex chars>` (256 random bits) without a query of its
//! own, so the service's `?id=` is the only query. Routes are kept by the capability's SHA-256,
//! which is also all a direct job journals: a restarted Kluis listening on the same address
//! recognises the path without the path itself being written anywhere. The listener answers 200 only to a GET of a
//! live path with exactly one `id` that is a UUID and no body; everything else gets 404 (so it
//! tells a scanner nothing). The rate limit comes after the capability check and only for
//! requests to no live path, which share one budget ([`RATE_PER_SEC`]): a request to a live
//! path is never refused for rate, since the service calls only once and whoever learnt the
//! URL could otherwise spend the path's budget just before it (40 junk ids, then the real one,
//! refused with 429, as it was). Every distinct id it brings is queued (`ids`) and redeemed by
//! the job, oldest first. Both plain and TLS listeners cap connections and time out slow
//! request heads.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;
use url::Url;
use uuid::Uuid;

use super::ids::{self, IdSender};
use super::{below, CallbackId, CallbackTransport, Reattach, Registration};
use crate::error::{Error, Result};

/// Requests per second for paths that are not live, before the listener answers 429 (a bucket
/// this deep).
pub const RATE_PER_SEC: f64 = 50.0;
pub(crate) const MAX_QUERY_LEN: usize = 512;

struct Route {
    ids: IdSender,
}

struct Shared {
    /// By the capability's SHA-256 (hex).
    routes: Mutex<HashMap<String, Route>>,
    /// Replaced only by [`ListenerTransport::with_rate_clock`] (tests).
    rate: std::sync::RwLock<kluis_https::RateLimit>,
}

/// Who can reach a listener: only this machine, or the service through the office's proxy
/// (which is what lets a restarted Kluis collect a journalled job's callback again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Loopback,
    Direct,
}

/// A callback receiver. Dropping it stops the listener.
pub struct ListenerTransport {
    /// What the service is given, to which `/cb/<capability>` is appended.
    public_base: Url,
    reach: Reach,
    ca_pem: Option<String>,
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: watch::Sender<bool>,
}

impl ListenerTransport {
    /// HTTPS on 127.0.0.1, a free port.
    pub async fn loopback() -> Result<Self> {
        let fail = |e: &dyn std::fmt::Display| {
            Error::Io(format!("Could not start the local callback receiver: {e}."))
        };
        let ca = kluis_https::LocalCa::generate("Kluis callback receiver").map_err(|e| fail(&e))?;
        let tls = ca
            .server_config(&["127.0.0.1", "localhost"])
            .map_err(|e| fail(&e))?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| fail(&e))?;
        let local_addr = listener.local_addr().map_err(|e| fail(&e))?;
        let public_base =
            Url::parse(&format!("https://127.0.0.1:{}", local_addr.port())).expect("valid URL");
        let mut transport = Self::serve(listener, Some(tls), public_base, Reach::Loopback);
        transport.ca_pem = Some(ca.ca_pem());
        transport.local_addr = local_addr;
        Ok(transport)
    }

    /// Plain HTTP on `listen`, published to the service as `public_url` (https) by a reverse
    /// proxy or port forward in front of it.
    pub async fn direct(public_url: &str, listen: SocketAddr) -> Result<Self> {
        let public_base = Url::parse(public_url)
            .ok()
            .filter(|u| u.scheme() == "https" && u.host().is_some() && u.query().is_none())
            .ok_or_else(|| Error::Config("The public callback URL must be an https URL without a query, e.g. https://office.example/kluis.".into()))?;
        let listener = bind_patiently(listen).await.map_err(|e| {
            Error::Config(format!(
                "Could not listen on {listen} for callbacks: {e}. Choose another local address (--listen)."
            ))
        })?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| Error::Io(e.to_string()))?;
        let mut transport = Self::serve(listener, None, public_base, Reach::Direct);
        transport.local_addr = local_addr;
        Ok(transport)
    }

    /// The same listener, published under another public URL (a tunnel's, learnt after the
    /// listener had to exist).
    pub fn with_public_base(mut self, public_base: Url) -> Self {
        self.public_base = public_base;
        self
    }

    /// The same listener, its budget for requests to no live path read by `clock` (a test's
    /// that stands still: then exactly [`RATE_PER_SEC`] of them are answered before the 429s,
    /// however fast the machine).
    pub fn with_rate_clock(self, clock: kluis_https::Clock) -> Self {
        let fresh = kluis_https::RateLimit::with_clock(RATE_PER_SEC, RATE_PER_SEC, clock);
        if let Ok(mut rate) = self.shared.rate.write() {
            *rate = fresh;
        }
        self
    }

    /// The URL the service is given (before `/cb/<capability>`).
    pub fn public_base(&self) -> &Url {
        &self.public_base
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// PEM of the CA behind the loopback listener's certificate (for a client that checks it).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    fn serve(
        listener: TcpListener,
        tls: Option<Arc<rustls::ServerConfig>>,
        public_base: Url,
        reach: Reach,
    ) -> Self {
        let shared = Arc::new(Shared {
            routes: Mutex::default(),
            rate: std::sync::RwLock::new(kluis_https::RateLimit::new(RATE_PER_SEC, RATE_PER_SEC)),
        });
        let router = Router::new().fallback(receive).with_state(shared.clone());
        let (stop, mut stopped) = watch::channel(false);
        let until_stopped = async move {
            let _ = stopped.wait_for(|s| *s).await;
        };
        let local_addr = listener
            .local_addr()
            .unwrap_or_else(|_| "127.0.0.1:0".parse().unwrap());
        let limits = kluis_https::ServeLimits {
            max_connections: 64,
            ..Default::default()
        };
        tokio::spawn(kluis_https::serve(
            listener,
            tls,
            router,
            limits,
            until_stopped,
        ));
        Self {
            public_base,
            reach,
            ca_pem: None,
            local_addr,
            shared,
            _stop: stop,
        }
    }
}

/// Removes a job's route when its registration is dropped.
struct RouteGuard {
    shared: Arc<Shared>,
    hash: String,
}

/// Binds `listen`, trying again for up to a second while it is in use: a listener on the same
/// address that this process just let go of (the choice saved again) is closed by its serving
/// task a moment later, not at once.
async fn bind_patiently(listen: SocketAddr) -> std::io::Result<TcpListener> {
    let mut tries = 0;
    loop {
        match TcpListener::bind(listen).await {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < 20 => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            bound => return bound,
        }
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.shared.routes.lock().unwrap().remove(&self.hash);
    }
}

#[async_trait]
impl CallbackTransport for ListenerTransport {
    fn name(&self) -> &'static str {
        match self.reach {
            Reach::Loopback => "loopback",
            Reach::Direct => "direct",
        }
    }

    fn test_trust_pem(&self) -> Option<String> {
        self.ca_pem.clone()
    }

    async fn prepare(&self, _job: Uuid) -> Result<Registration> {
        let capability = format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());
        let hash = capability_hash(&capability);
        let webhook_url = below(&self.public_base, &format!("/cb/{capability}"));
        let mut registration = self.route(hash.clone(), webhook_url);
        if self.reach == Reach::Direct {
            registration.reattach = Some(Reattach::Direct {
                public_url: self.public_base.to_string(),
                listen: self.local_addr,
                capability_sha256: hash,
            });
        }
        Ok(registration)
    }

    async fn reattach(&self, reattach: &Reattach) -> Result<Registration> {
        match reattach {
            Reattach::Direct {
                listen,
                capability_sha256,
                ..
            } if self.reach == Reach::Direct && *listen == self.local_addr => {
                let mut registration =
                    self.route(capability_sha256.clone(), self.public_base.clone());
                registration.reattach = Some(reattach.clone());
                Ok(registration)
            }
            Reattach::Direct { listen, .. } => Err(Error::Config(format!(
                "This backup's callback comes to {listen}; resume it with --listen {listen}."
            ))),
            other => Err(Error::Config(format!(
                "A listener cannot collect a {} callback.",
                other.transport_name()
            ))),
        }
    }
}

impl ListenerTransport {
    fn route(&self, hash: String, webhook_url: Url) -> Registration {
        let (tx, rx) = ids::channel();
        self.shared
            .routes
            .lock()
            .unwrap()
            .insert(hash.clone(), Route { ids: tx });
        let guard = RouteGuard {
            shared: self.shared.clone(),
            hash,
        };
        Registration::local(webhook_url, rx, Box::new(guard))
    }
}

fn capability_hash(capability: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(capability.as_bytes()))
}

/// The capability of a path ending in `/cb/<capability>` (any prefix before it).
pub(crate) fn capability_of(path: &str) -> Option<&str> {
    let mut segments = path.rsplit('/');
    let capability = segments.next()?;
    (segments.next()? == "cb" && !capability.is_empty()).then_some(capability)
}

async fn receive(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: axum::http::Uri,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> StatusCode {
    let has_body = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() != b"0")
        || headers.contains_key(axum::http::header::TRANSFER_ENCODING);
    let routes = shared.routes.lock().unwrap();
    let route = capability_of(uri.path()).and_then(|c| routes.get(&capability_hash(c)));
    let Some(route) = route else {
        // Not a live path: one shared budget, so scanners cannot make the listener busy.
        let admitted = (shared.rate.read())
            .map(|rate| rate.admit())
            .unwrap_or(false);
        return match admitted {
            true => StatusCode::NOT_FOUND,
            false => StatusCode::TOO_MANY_REQUESTS,
        };
    };
    if method != Method::GET || has_body {
        return StatusCode::NOT_FOUND;
    }
    let Some(id) = query.as_deref().and_then(single_id) else {
        return StatusCode::NOT_FOUND;
    };
    if route.ids.push(id.clone()) {
        tracing::info!(callback_id = %id, "callback received");
    }
    StatusCode::OK
}

/// The `id` of a query that holds exactly one parameter, `id`, a UUID.
pub(crate) fn single_id(query: &str) -> Option<CallbackId> {
    if query.len() > MAX_QUERY_LEN {
        return None;
    }
    let mut pairs = url::form_urlencoded::parse(query.as_bytes());
    let (name, value) = pairs.next()?;
    if name != "id" || pairs.next().is_some() {
        return None;
    }
    CallbackId::parse(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The capability is the last segment after `cb`, whatever prefix a proxy kept.
    #[test]
    fn finds_the_capability_behind_any_prefix() {
        assert_eq!(capability_of("/cb/abc"), Some("abc"));
        assert_eq!(capability_of("/kluis/cb/abc"), Some("abc"));
        assert_eq!(capability_of("/cb/"), None);
        assert_eq!(capability_of("/xb/abc"), None);
        assert_eq!(capability_of("/"), None);
    }

    /// Only a lone, well-formed `id` is accepted.
    #[test]
    fn accepts_only_a_single_uuid_id() {
        assert!(single_id("id=49cfcabd-ae97-47de-a900-76a83082a1cb").is_some());
        assert!(single_id("id=not-a-uuid").is_none());
        assert!(single_id("id=49cfcabd-ae97-47de-a900-76a83082a1cb&x=1").is_none());
        assert!(single_id("x=1").is_none());
        assert!(single_id("").is_none());
        assert!(single_id(&format!("id={}", "a".repeat(600))).is_none());
    }
}
