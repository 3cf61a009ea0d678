//! The loopback transport: an HTTPS listener on 127.0.0.1 with a certificate made at start.
//! Only a service on the same machine (the simulator, the demo) can reach it.
//!
//! Each job gets a capability path `/cb/<64 hex chars>` (256 random bits) without a query of its
//! own, so the service's `?id=` is the only query. The listener answers 200 only to a GET of a
//! live path with exactly one `id` that is a UUID and no body; everything else gets 404 (so it
//! tells a scanner nothing), and more than [`RATE_PER_SEC`] requests a second get 429.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use url::Url;
use uuid::Uuid;

use super::{CallbackId, CallbackTransport, Registration};
use crate::error::{Error, Result};

/// Requests per second the listener answers before it starts to refuse (a bucket this deep).
pub const RATE_PER_SEC: f64 = 50.0;
/// Distinct ids kept per job; a flood of made-up ids cannot grow memory.
const MAX_IDS_PER_JOB: usize = 16;
const MAX_QUERY_LEN: usize = 512;

struct Route {
    ids: mpsc::Sender<CallbackId>,
    seen: HashSet<CallbackId>,
}

struct Shared {
    routes: Mutex<HashMap<String, Route>>,
    rate: kluis_https::RateLimit,
}

/// An HTTPS callback receiver on 127.0.0.1. Dropping it stops the listener.
pub struct LoopbackTransport {
    origin: Url,
    ca_pem: String,
    shared: Arc<Shared>,
    _stop: watch::Sender<bool>,
}

impl LoopbackTransport {
    /// Binds 127.0.0.1 on a free port and starts serving.
    pub async fn start() -> Result<Self> {
        Self::start_on("127.0.0.1:0".parse().unwrap()).await
    }

    pub async fn start_on(addr: SocketAddr) -> Result<Self> {
        let fail = |e: &dyn std::fmt::Display| {
            Error::Io(format!("Could not start the local callback receiver: {e}."))
        };
        let ca = kluis_https::LocalCa::generate("Kluis callback receiver").map_err(|e| fail(&e))?;
        let tls = ca
            .server_config(&["127.0.0.1", "localhost"])
            .map_err(|e| fail(&e))?;
        let listener = TcpListener::bind(addr).await.map_err(|e| fail(&e))?;
        let port = listener.local_addr().map_err(|e| fail(&e))?.port();
        let shared = Arc::new(Shared {
            routes: Mutex::default(),
            rate: kluis_https::RateLimit::new(RATE_PER_SEC, RATE_PER_SEC),
        });
        let router = Router::new()
            .route("/cb/{capability}", axum::routing::any(receive))
            .fallback(|| async { StatusCode::NOT_FOUND })
            .with_state(shared.clone());
        let (stop, mut stopped) = watch::channel(false);
        let limits = kluis_https::ServeLimits {
            max_connections: 64,
            ..Default::default()
        };
        tokio::spawn(kluis_https::serve_tls(
            listener,
            tls,
            router,
            limits,
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            },
        ));
        let origin = Url::parse(&format!("https://127.0.0.1:{port}")).expect("valid URL");
        Ok(Self {
            origin,
            ca_pem: ca.ca_pem(),
            shared,
            _stop: stop,
        })
    }

    /// PEM of the CA behind the listener's certificate (for a client that wants to check it).
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }
}

/// Removes a job's route when its registration is dropped.
struct RouteGuard {
    shared: Arc<Shared>,
    capability: String,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.shared.routes.lock().unwrap().remove(&self.capability);
    }
}

#[async_trait]
impl CallbackTransport for LoopbackTransport {
    fn name(&self) -> &'static str {
        "loopback"
    }

    async fn prepare(&self, _job: Uuid) -> Result<Registration> {
        let capability = format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());
        let (tx, rx) = mpsc::channel(MAX_IDS_PER_JOB);
        self.shared.routes.lock().unwrap().insert(
            capability.clone(),
            Route {
                ids: tx,
                seen: HashSet::new(),
            },
        );
        let webhook_url = self
            .origin
            .join(&format!("/cb/{capability}"))
            .expect("valid path");
        let guard = RouteGuard {
            shared: self.shared.clone(),
            capability,
        };
        Ok(Registration {
            webhook_url,
            ids: rx,
            guard: Box::new(guard),
        })
    }
}

async fn receive(
    State(shared): State<Arc<Shared>>,
    method: Method,
    Path(capability): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> StatusCode {
    if !shared.rate.admit() {
        return StatusCode::TOO_MANY_REQUESTS;
    }
    let has_body = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() != b"0")
        || headers.contains_key(axum::http::header::TRANSFER_ENCODING);
    if method != Method::GET || has_body {
        return StatusCode::NOT_FOUND;
    }
    let Some(id) = query.as_deref().and_then(single_id) else {
        return StatusCode::NOT_FOUND;
    };
    let mut routes = shared.routes.lock().unwrap();
    let Some(route) = routes.get_mut(&capability) else {
        return StatusCode::NOT_FOUND;
    };
    if route.seen.len() < MAX_IDS_PER_JOB && route.seen.insert(id.clone()) {
        tracing::info!(callback_id = %id, "callback received");
        // The channel holds MAX_IDS_PER_JOB, as many as `seen` admits: this cannot be full.
        let _ = route.ids.try_send(id);
    }
    StatusCode::OK
}

/// The `id` of a query that holds exactly one parameter, `id`, a UUID.
fn single_id(query: &str) -> Option<CallbackId> {
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
