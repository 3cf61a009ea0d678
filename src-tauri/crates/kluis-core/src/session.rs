//! [`Session`]: the service calls with token management.
//!
//! - The token is reused while valid and renewed when less than `margin` of its assumed
//!   30-minute life remains (the service does not say when a token was issued, so the clock
//!   starts when the `/authenticate` request was sent — the conservative end).
//! - Renewal is single-flight: the token lives behind an async mutex that is held during
//!   `/authenticate`, so any number of callers arriving at expiry cause exactly one sign-in
//!   and then all use its token.
//! - A 401 means the server dropped the token early: it is discarded (only if no one renewed
//!   it already — a generation number tells) and the call is made once more with a new one.
//!   A 403 is retried the same way only when the token was reused from the cache (it may be
//!   stale); a 403 with a token fetched for this very call is the api_key's verdict. No loop:
//!   at most one renewal per call.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Mutex;
use tokio::time::Instant;
use url::Url;

use crate::callback::CallbackId;
use crate::client::{finish_error, CallError, ServiceClient, WebhookPayload};
use crate::clock::{Clock, TokioClock};
use crate::error::Result;
use crate::secret::Secret;

/// How long the document says a token is valid.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(30 * 60);
/// Renew when less than this remains, so a token never expires in flight.
pub const TOKEN_MARGIN: Duration = Duration::from_secs(2 * 60);

struct CachedToken {
    token: Secret,
    obtained: Instant,
    generation: u64,
}

/// A token handed to one call.
struct Lease {
    token: Secret,
    generation: u64,
    /// Fetched for this call (not reused from the cache).
    fresh: bool,
}

/// A signed-in connection to one service account.
pub struct Session {
    client: ServiceClient,
    clock: Arc<dyn Clock>,
    lifetime: Duration,
    margin: Duration,
    cached: Mutex<Option<CachedToken>>,
    generations: std::sync::atomic::AtomicU64,
}

impl Session {
    pub fn new(client: ServiceClient) -> Self {
        Self {
            client,
            clock: Arc::new(TokioClock),
            lifetime: TOKEN_LIFETIME,
            margin: TOKEN_MARGIN,
            cached: Mutex::new(None),
            generations: Default::default(),
        }
    }

    /// Reads time from `clock` instead of tokio's.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn client(&self) -> &ServiceClient {
        &self.client
    }

    /// Signs in now if there is no valid token (to check credentials early).
    pub async fn sign_in(&self) -> Result<()> {
        self.lease().await.map(|_| ())
    }

    /// Forgets the token.
    pub async fn sign_out(&self) {
        *self.cached.lock().await = None;
    }

    pub async fn environment(&self) -> Result<Value> {
        self.call("reading the environment information", |t| async move {
            self.client.environment(&t).await
        })
        .await
    }

    pub async fn backup_owner(&self, webhook_url: &Url) -> Result<Value> {
        self.call("starting a backup", |t| async move {
            self.client.backup_owner(&t, webhook_url).await
        })
        .await
    }

    /// The result for callback `id`, or `None` when the service refuses the id with a client
    /// error other than 401/403 (404, 400, 410, 422 …: the document names none): the callback
    /// was not genuine, or not for us. A made-up id must never fail the job, or whoever learns
    /// the callback URL could end any backup with one request. (401 and 403 are about the
    /// session and the api key, not the id, and stay errors.)
    pub async fn webhook(&self, id: &CallbackId) -> Result<Option<WebhookPayload>> {
        let fetched = self
            .call("fetching the backup result", |t| async move {
                match self.client.webhook(&t, id).await {
                    Err(CallError::Status { status, .. }) if status.is_client_error() => Ok(None),
                    other => other.map(Some),
                }
            })
            .await?;
        Ok(fetched)
    }

    /// Runs `call` with a valid token, renewing it at most once as described above.
    async fn call<T, F, Fut>(&self, what: &str, call: F) -> Result<T>
    where
        F: Fn(Secret) -> Fut,
        Fut: std::future::Future<Output = Result<T, CallError>>,
    {
        let lease = self.lease().await?;
        let outcome = call(lease.token.clone()).await;
        let renew = match &outcome {
            Err(CallError::Unauthorized) => true,
            Err(CallError::Forbidden) => !lease.fresh,
            _ => false,
        };
        if !renew {
            return outcome.map_err(|e| finish_error(e, what));
        }
        tracing::info!(what, "token refused; signing in again once");
        self.discard(lease.generation).await;
        let lease = self.lease().await?;
        call(lease.token).await.map_err(|e| finish_error(e, what))
    }

    async fn lease(&self) -> Result<Lease> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref() {
            if self.clock.now() + self.margin < c.obtained + self.lifetime {
                return Ok(Lease {
                    token: c.token.clone(),
                    generation: c.generation,
                    fresh: false,
                });
            }
        }
        let obtained = self.clock.now();
        let token = self.client.authenticate().await?;
        let generation = self
            .generations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        *cached = Some(CachedToken {
            token: token.clone(),
            obtained,
            generation,
        });
        Ok(Lease {
            token,
            generation,
            fresh: true,
        })
    }

    /// Drops the cached token if it is still the one of `generation`.
    async fn discard(&self, generation: u64) {
        let mut cached = self.cached.lock().await;
        if cached.as_ref().is_some_and(|c| c.generation == generation) {
            *cached = None;
        }
    }
}
