//! Where a profile's api key and password are kept: the OS keyring (Secret Service on Linux,
//! Keychain on macOS, Credential Manager on Windows), behind a small trait so that tests and
//! demo mode can use memory instead. Secrets never go to a file, the history or the UI.

use std::collections::HashMap;
use std::sync::Mutex;

use kluis_core::Secret;

use crate::error::{AppError, AppResult};

/// The keyring's service name; entries are `<profile id>/api_key` and `<profile id>/password`.
pub const SERVICE: &str = "nl.kluis.desktop";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SecretKind {
    ApiKey,
    Password,
    /// The relay's secret (stored under the id [`APP`], not a profile's).
    RelaySecret,
}

/// The id under which app-wide secrets are kept.
pub const APP: &str = "app";

impl SecretKind {
    fn account(self, profile: &str) -> String {
        match self {
            SecretKind::ApiKey => format!("{profile}/api_key"),
            SecretKind::Password => format!("{profile}/password"),
            SecretKind::RelaySecret => format!("{profile}/relay_secret"),
        }
    }
}

/// A store of secrets. Calls may block (D-Bus): call them off the async threads.
pub trait SecretStore: Send + Sync {
    fn get(&self, profile: &str, kind: SecretKind) -> AppResult<Option<Secret>>;
    fn set(&self, profile: &str, kind: SecretKind, value: &Secret) -> AppResult<()>;
    /// Removes the secret; removing one that is not there is fine.
    fn delete(&self, profile: &str, kind: SecretKind) -> AppResult<()>;
}

/// The OS keyring.
pub struct KeyringStore;

fn keyring_error(e: keyring::Error) -> AppError {
    // keyring's messages name the failing platform call, never the secret.
    AppError::Keyring(format!(
        "The system keyring could not be used ({e}). Make sure a keyring (such as GNOME Keyring) is running and unlocked."
    ))
}

impl SecretStore for KeyringStore {
    fn get(&self, profile: &str, kind: SecretKind) -> AppResult<Option<Secret>> {
        let entry = keyring::Entry::new(SERVICE, &kind.account(profile)).map_err(keyring_error)?;
        match entry.get_password() {
            Ok(value) => Ok(Some(Secret::new(value))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keyring_error(e)),
        }
    }

    fn set(&self, profile: &str, kind: SecretKind, value: &Secret) -> AppResult<()> {
        let entry = keyring::Entry::new(SERVICE, &kind.account(profile)).map_err(keyring_error)?;
        entry.set_password(value.expose()).map_err(keyring_error)
    }

    fn delete(&self, profile: &str, kind: SecretKind) -> AppResult<()> {
        let entry = keyring::Entry::new(SERVICE, &kind.account(profile)).map_err(keyring_error)?;
        match entry.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keyring_error(e)),
        }
    }
}

/// Secrets in memory only: for tests and for demo profiles, which must not touch the keyring.
#[derive(Default)]
pub struct MemoryStore {
    values: Mutex<HashMap<String, Secret>>,
}

impl SecretStore for MemoryStore {
    fn get(&self, profile: &str, kind: SecretKind) -> AppResult<Option<Secret>> {
        Ok(self
            .values
            .lock()
            .unwrap()
            .get(&kind.account(profile))
            .cloned())
    }

    fn set(&self, profile: &str, kind: SecretKind, value: &Secret) -> AppResult<()> {
        self.values
            .lock()
            .unwrap()
            .insert(kind.account(profile), value.clone());
        Ok(())
    }

    fn delete(&self, profile: &str, kind: SecretKind) -> AppResult<()> {
        self.values.lock().unwrap().remove(&kind.account(profile));
        Ok(())
    }
}
