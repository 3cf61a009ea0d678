//! [`Transports`]: the callback transports built so far, shared by the jobs whose key they
//! share — new jobs by [`super::CallbackChoice::cache_key`], resumed ones by their journal's
//! [`Reattach`] — so that one listen address has one listener.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use crate::callback::{CallbackTransport, Reattach, Reattacher};

#[derive(Default)]
pub struct Transports(tokio::sync::Mutex<HashMap<String, Arc<dyn CallbackTransport>>>);

impl Transports {
    /// The transport under `key`, built by `build` the first time, or anew when the one kept
    /// is no longer alive (a tunnel whose program stopped); `build` may fail with the host's
    /// own error type, e.g. when it asks a keyring.
    pub async fn get_or_build<E>(
        &self,
        key: &str,
        build: impl Future<Output = std::result::Result<Arc<dyn CallbackTransport>, E>>,
    ) -> std::result::Result<Arc<dyn CallbackTransport>, E> {
        let mut built = self.0.lock().await;
        if let Some(transport) = built.get(key).filter(|t| t.is_alive()) {
            return Ok(transport.clone());
        }
        let transport = build.await?;
        built.insert(key.to_string(), transport.clone());
        Ok(transport)
    }

    /// Forgets every built transport (the choice changed); running jobs keep theirs.
    pub async fn clear(&self) {
        self.0.lock().await.clear();
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
