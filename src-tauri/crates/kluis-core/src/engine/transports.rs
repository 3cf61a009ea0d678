//! [`Transports`]: the callback transports built so far, shared by the jobs whose key they
//! share — new jobs by [`super::CallbackChoice::cache_key`], resumed ones by their journal's
//! [`Reattach`] — so that one listen address has one listener.
//!
//! Each key is built by one caller at a time, and only that key waits for it: a tunnel that
//! takes its 45 s to become ready (or not) holds up no relay client of another klant. A build
//! that failed is the answer for that key for [`FAILED_BUILD_KEPT`] — to those who waited for
//! it, and to those who come meanwhile — instead of each klant of a batch trying again: a
//! cloudflared that never becomes ready cost every one of 200 klanten 45 s, four at a time.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::callback::{CallbackTransport, Reattach, Reattacher};

/// How long a failed build is the answer for its key before the next caller tries again (the
/// unattended retries come after a minute, then two: each finds a new try).
pub const FAILED_BUILD_KEPT: Duration = Duration::from_secs(60);

#[derive(Default)]
pub struct Transports(Mutex<HashMap<String, Arc<Slot>>>);

/// One key's transport, or how its last build failed; locked while it is built.
#[derive(Default)]
struct Slot(tokio::sync::Mutex<Kept>);

#[derive(Default)]
enum Kept {
    #[default]
    Nothing,
    Built(Arc<dyn CallbackTransport>),
    /// The error (of the caller's error type) and when the build gave up.
    Failed(Box<dyn std::any::Any + Send + Sync>, Instant),
}

impl Transports {
    /// The transport under `key`, built by `build` the first time, or anew when the one kept
    /// is no longer alive (a tunnel whose program stopped); `build` may fail with the host's
    /// own error type, e.g. when it asks a keyring. A failure is kept for
    /// [`FAILED_BUILD_KEPT`] and given to the callers meanwhile, unbuilt.
    pub async fn get_or_build<E>(
        &self,
        key: &str,
        build: impl Future<Output = std::result::Result<Arc<dyn CallbackTransport>, E>>,
    ) -> std::result::Result<Arc<dyn CallbackTransport>, E>
    where
        E: Clone + Send + Sync + 'static,
    {
        let slot = self
            .0
            .lock()
            .unwrap()
            .entry(key.to_string())
            .or_default()
            .clone();
        let mut kept = slot.0.lock().await;
        match &*kept {
            Kept::Built(transport) if transport.is_alive() => return Ok(transport.clone()),
            Kept::Failed(error, at) if at.elapsed() < FAILED_BUILD_KEPT => {
                // (Another caller's type under the same key would not be one: then built.)
                if let Some(error) = error.downcast_ref::<E>() {
                    return Err(error.clone());
                }
            }
            _ => {}
        }
        match build.await {
            Ok(transport) => {
                *kept = Kept::Built(transport.clone());
                Ok(transport)
            }
            Err(error) => {
                *kept = Kept::Failed(Box::new(error.clone()), Instant::now());
                Err(error)
            }
        }
    }

    /// Forgets every built transport and failure (the choice changed); running jobs keep
    /// theirs.
    pub fn clear(&self) {
        self.0.lock().unwrap().clear();
    }

    /// The key of a resumed job's transport: a direct listener is this computer's, shared
    /// with new backups on its address; a relay or webhook.site client uses the profile's
    /// TLS trust.
    pub fn reattach_key(reattach: &Reattach, profile: &str) -> String {
        match reattach {
            Reattach::Direct { .. } => Reattacher::key(reattach),
            _ => format!("{} for {profile}", Reattacher::key(reattach)),
        }
    }
}
