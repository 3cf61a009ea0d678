//! Where the CLI keeps and reads secrets — the OS keyring, or the owner-only folder
//! `KLUIS_SECRETS_DIR` where none can be unlocked ([`secret_store`]) — off the async thread
//! ([`on_store`], [`secret`]), and a secret read from standard input ([`secret_line`]). A leaf
//! the commands share: none of them imports another to reach a secret.

use std::sync::Arc;

use kluis_core::{Error, Result, Secret};
use kluis_profiles::{KeyringStore, ProfileError, SecretKind, SecretStore, SecretsFolder};

/// Where this run keeps secrets: `KLUIS_SECRETS_DIR` when set (owner-only files), else the OS
/// keyring. A keyring that cannot be used is an error that names the alternative — never a
/// silent switch to files.
pub fn secret_store() -> Arc<dyn SecretStore> {
    match std::env::var_os("KLUIS_SECRETS_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Arc::new(SecretsFolder::new(dir)),
        None => Arc::new(KeyringStore),
    }
}

/// Runs `work` on `store` off the async thread (see [`kluis_profiles::secrets::off_thread`]).
pub async fn on_store<T: Send + 'static>(
    store: &Arc<dyn SecretStore>,
    work: impl FnOnce(&dyn SecretStore) -> kluis_profiles::ProfileResult<T> + Send + 'static,
) -> Result<T> {
    kluis_profiles::secrets::off_thread(store.clone(), work)
        .await
        .map_err(ProfileError::into_core)
}

/// Profile `id`'s secret of `kind`, if kept.
pub async fn secret(
    store: &Arc<dyn SecretStore>,
    id: &str,
    kind: SecretKind,
) -> Result<Option<Secret>> {
    let id = id.to_string();
    on_store(store, move |store| store.get(&id, kind)).await
}

/// The next of `lines` (standard input's) as a secret, without its line ending; an empty or
/// missing line is refused with `missing`, which says what to give (never what was read).
pub fn secret_line(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    missing: &str,
) -> Result<Secret> {
    let line = lines
        .next()
        .transpose()
        .map_err(|e| Error::Config(format!("Could not read standard input: {e}.")))?
        .unwrap_or_default();
    match line.trim_end_matches('\r') {
        "" => Err(Error::Config(missing.to_string())),
        secret => Ok(Secret::new(secret.to_string())),
    }
}
