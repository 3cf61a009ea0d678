//! [`Transports`]: the callback transports built so far, shared by the jobs whose key they
//! share — new jobs by [`super::CallbackChoice::cache_key`], resumed ones by their journal's
//! [`Reattach`] — so that one listen address has one listener.
//!
//! Each key is built by one caller at a time, and only that key waits for it: a tunnel that
//! takes its 45 s to become ready (or not) holds up no relay client of another klant. A
//! tunnel's build that failed is the answer for that key for [`FAILED_BUILD_KEPT`] — to those
//! who waited for it, and to those who come meanwhile — instead of each klant of a batch
//! trying again: a cloudflared that never becomes ready cost every one of 200 klanten 45 s,
//! four at a time. (Other routes fail fast, or on what their key does not name: tried again.)
//! Someone at the screen (Back up now, Test connection) is not answered with an old failure:
//! [`Transports::forget_failure`] first. [`Transports::clear`] (the choice changed) makes
//! every kept transport and failure old without dropping the keys' locks, so a build under way
//! stays the only one of its key.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::callback::{CallbackTransport, Reattach, Reattacher};

/// How long a failed build is the answer for its key before the next caller tries again (the
/// unattended retries come after a minute, then two: each finds a new try).
pub const FAILED_BUILD_KEPT: Duration = Duration::from_secs(60);

#[derive(Default)]
pub struct Transports {
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// Raised by [`Transports::clear`]: what was kept under an older one is not used.
    generation: AtomicU64,
}

/// One key's transport, or how its last build failed; locked while it is built.
#[derive(Default)]
struct Slot(tokio::sync::Mutex<Kept>);

#[derive(Default)]
enum Kept {
    #[default]
    Nothing,
    /// The transport, built in this generation.
    Built(Arc<dyn CallbackTransport>, u64),
    /// The error (of the caller's error type), when the build gave up, and its generation.
    Failed(Box<dyn std::any::Any + Send + Sync>, Instant, u64),
}

impl Transports {
    /// The transport under `key`, built by `build` the first time, or anew when the one kept
    /// is no longer alive (a tunnel whose program stopped); `build` may fail with the host's
    /// own error type, e.g. when it asks a keyring. With `keep_failure`
    /// ([`super::CallbackChoice::keeps_failures`]) a failure is kept for [`FAILED_BUILD_KEPT`]
    /// and given to the callers meanwhile, unbuilt; without, the next caller (one who waited
    /// for the failing build too) builds again.
    pub async fn get_or_build<E>(
        &self,
        key: &str,
        keep_failure: bool,
        build: impl Future<Output = std::result::Result<Arc<dyn CallbackTransport>, E>>,
    ) -> std::result::Result<Arc<dyn CallbackTransport>, E>
    where
        E: Clone + Send + Sync + 'static,
    {
        let slot = self.slot(key);
        let mut kept = slot.0.lock().await;
        let now = self.generation.load(Ordering::SeqCst);
        match &*kept {
            Kept::Built(transport, made) if *made == now && transport.is_alive() => {
                return Ok(transport.clone())
            }
            Kept::Failed(error, at, made) if *made == now && at.elapsed() < FAILED_BUILD_KEPT => {
                // (Another caller's type under the same key would not be one: then built.)
                if let Some(error) = error.downcast_ref::<E>() {
                    return Err(error.clone());
                }
            }
            _ => {}
        }
        // What is kept is old, dead or failed: let go of it first (an old listener on the
        // address about to be bound again; an old tunnel's cloudflared).
        *kept = Kept::Nothing;
        let built = build.await;
        // The choice changed meanwhile (`clear` could not reach this slot): what was built
        // for the old one is its callers', not kept (an old tunnel would run on unasked).
        if self.generation.load(Ordering::SeqCst) != now {
            return built;
        }
        match built {
            Ok(transport) => {
                *kept = Kept::Built(transport.clone(), now);
                Ok(transport)
            }
            Err(error) if keep_failure => {
                *kept = Kept::Failed(Box::new(error.clone()), Instant::now(), now);
                Err(error)
            }
            Err(error) => Err(error),
        }
    }

    /// The next caller of `key` builds anew if its last build failed (someone at the screen
    /// asks: an old failure is no answer). A build under way is left to finish.
    pub fn forget_failure(&self, key: &str) {
        if let Ok(mut kept) = self.slot(key).0.try_lock() {
            if matches!(*kept, Kept::Failed(..)) {
                *kept = Kept::Nothing;
            }
        }
    }

    /// Forgets every built transport and failure (the choice changed): let go of at once (a
    /// listener's address free again, a tunnel's cloudflared stopped) unless running jobs
    /// still hold it; a build under way stays its key's only one, its result not kept.
    pub fn clear(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        for slot in self.slots.lock().unwrap().values() {
            if let Ok(mut kept) = slot.0.try_lock() {
                *kept = Kept::Nothing;
            }
        }
    }

    fn slot(&self, key: &str) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap();
        slots.entry(key.to_string()).or_default().clone()
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
