//! Where a profile's api key and password are kept: the OS keyring (Secret Service on Linux,
//! Keychain on macOS, Credential Manager on Windows), behind a small trait so that tests and
//! demo mode can use memory instead. Secrets never go to the profiles file, the history or
//! the UI.
//!
//! A computer where nobody is logged in has no keyring to unlock. There, and only when the
//! user says so (`KLUIS_SECRETS_DIR`, which a systemd unit can point at its credentials
//! folder with `%d`), [`SecretsFolder`] reads them from owner-only files instead — never as a
//! silent fallback when the keyring fails.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kluis_core::Secret;

use crate::error::{ProfileError, ProfileResult};

/// The keyring's service name; entries are `<profile id>/api_key` and `<profile id>/password`.
pub const SERVICE: &str = "nl.kluis.desktop";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SecretKind {
    ApiKey,
    Password,
    /// The relay's secret (stored under the id [`APP`], not a profile's).
    RelaySecret,
    /// The office's mail server password (under [`APP`] too).
    MailPassword,
    /// The passphrase a profile's backups are encrypted with.
    EncryptionPassphrase,
    /// A copy target's secret (an S3 secret key), under the target's id.
    CopyTargetSecret,
    /// The recovery kit's vouch key, with which this computer tags the catalogs it writes
    /// (under [`APP`]; kluis-recovery's `VouchKey`).
    RecoveryVouch,
    /// This PC's key at the office hub (under [`APP`]; kluis-office).
    OfficePcKey,
    /// The office key the office's PCs share and the hub never holds (under [`APP`]).
    OfficeKey,
}

/// The id under which app-wide secrets are kept.
pub const APP: &str = "app";

impl SecretKind {
    /// The keyring account (`<profile>/api_key`).
    pub fn account(self, profile: &str) -> String {
        match self {
            SecretKind::ApiKey => format!("{profile}/api_key"),
            SecretKind::Password => format!("{profile}/password"),
            SecretKind::RelaySecret => format!("{profile}/relay_secret"),
            SecretKind::MailPassword => format!("{profile}/mail_password"),
            SecretKind::EncryptionPassphrase => format!("{profile}/encryption_passphrase"),
            SecretKind::CopyTargetSecret => format!("{profile}/copy_target_secret"),
            SecretKind::RecoveryVouch => format!("{profile}/recovery_vouch"),
            SecretKind::OfficePcKey => format!("{profile}/office_pc_key"),
            SecretKind::OfficeKey => format!("{profile}/office_key"),
        }
    }
}

/// A store of secrets. Calls may block (D-Bus): call them off the async threads.
pub trait SecretStore: Send + Sync {
    fn get(&self, profile: &str, kind: SecretKind) -> ProfileResult<Option<Secret>>;
    fn set(&self, profile: &str, kind: SecretKind, value: &Secret) -> ProfileResult<()>;
    /// Removes the secret; removing one that is not there is fine.
    fn delete(&self, profile: &str, kind: SecretKind) -> ProfileResult<()>;
}

/// Runs `work` on `store` off the async threads: a keyring call talks D-Bus and may block.
/// (A task that could not finish is said as a keyring failure, never a panic.)
pub async fn off_thread<T: Send + 'static>(
    store: Arc<dyn SecretStore>,
    work: impl FnOnce(&dyn SecretStore) -> ProfileResult<T> + Send + 'static,
) -> ProfileResult<T> {
    tokio::task::spawn_blocking(move || work(&*store))
        .await
        .map_err(|e| ProfileError::Secrets(format!("The keyring could not be asked: {e}.")))?
}

/// `targets`, each with the secret its place needs read from `store` (blocking: call it off
/// the async threads). A target whose secret is not saved has none, and says so when used.
pub fn with_target_secrets(
    store: &dyn SecretStore,
    mut targets: Vec<kluis_copies::CopyTarget>,
) -> ProfileResult<Vec<kluis_copies::CopyTarget>> {
    for target in &mut targets {
        if target.place.keeps_secret() {
            target.secret = store.get(&target.id, SecretKind::CopyTargetSecret)?;
        }
    }
    Ok(targets)
}

/// The OS keyring.
pub struct KeyringStore;

fn keyring_error(e: keyring::Error) -> ProfileError {
    // keyring's messages name the failing platform call, never the secret.
    ProfileError::Secrets(format!(
        "The system keyring could not be used ({e}). Make sure a keyring (such as GNOME Keyring) is running and unlocked. \
         On a computer where nobody is logged in, keep the secrets in an owner-only folder instead: set KLUIS_SECRETS_DIR (see docs/cli.md, “Without a keyring”)."
    ))
}

/// One keyring call at a time in this process. The Secret Service answers one at a time
/// anyway, and GNOME Keyring was seen to crash under eight at once (an import signing in eight
/// klanten: "Message recipient disconnected from message bus without replying" after 64
/// items, every call after it failing), which one at a time never did.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SecretStore for KeyringStore {
    fn get(&self, profile: &str, kind: SecretKind) -> ProfileResult<Option<Secret>> {
        let _turn = one_at_a_time();
        let entry = keyring::Entry::new(SERVICE, &kind.account(profile)).map_err(keyring_error)?;
        match entry.get_password() {
            Ok(value) => Ok(Some(Secret::new(value))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keyring_error(e)),
        }
    }

    fn set(&self, profile: &str, kind: SecretKind, value: &Secret) -> ProfileResult<()> {
        let _turn = one_at_a_time();
        let entry = keyring::Entry::new(SERVICE, &kind.account(profile)).map_err(keyring_error)?;
        entry.set_password(value.expose()).map_err(keyring_error)
    }

    fn delete(&self, profile: &str, kind: SecretKind) -> ProfileResult<()> {
        let _turn = one_at_a_time();
        let entry = keyring::Entry::new(SERVICE, &kind.account(profile)).map_err(keyring_error)?;
        match entry.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keyring_error(e)),
        }
    }
}

/// The demo app's secrets (`kluis-app --demo`): those it keeps in `inner` (a klant of one's
/// own added in the demo, a copy target's key) go under `demo/<id>`, so that the demo never
/// reads or replaces a secret of the real Kluis's klant or target of the same id.
pub struct DemoSecrets(pub Arc<dyn SecretStore>);

impl DemoSecrets {
    fn id(profile: &str) -> String {
        format!("demo/{profile}")
    }
}

impl SecretStore for DemoSecrets {
    fn get(&self, profile: &str, kind: SecretKind) -> ProfileResult<Option<Secret>> {
        self.0.get(&Self::id(profile), kind)
    }

    fn set(&self, profile: &str, kind: SecretKind, value: &Secret) -> ProfileResult<()> {
        self.0.set(&Self::id(profile), kind, value)
    }

    fn delete(&self, profile: &str, kind: SecretKind) -> ProfileResult<()> {
        self.0.delete(&Self::id(profile), kind)
    }
}

/// Secrets in memory only: for tests and for demo profiles, which must not touch the keyring.
#[derive(Default)]
pub struct MemoryStore {
    values: Mutex<HashMap<String, Secret>>,
}

impl SecretStore for MemoryStore {
    fn get(&self, profile: &str, kind: SecretKind) -> ProfileResult<Option<Secret>> {
        Ok(self
            .values
            .lock()
            .unwrap()
            .get(&kind.account(profile))
            .cloned())
    }

    fn set(&self, profile: &str, kind: SecretKind, value: &Secret) -> ProfileResult<()> {
        self.values
            .lock()
            .unwrap()
            .insert(kind.account(profile), value.clone());
        Ok(())
    }

    fn delete(&self, profile: &str, kind: SecretKind) -> ProfileResult<()> {
        self.values.lock().unwrap().remove(&kind.account(profile));
        Ok(())
    }
}

/// Secrets as owner-only files in a folder the user named (`KLUIS_SECRETS_DIR`), for computers
/// without a keyring: `<profile id>.api_key`, `<profile id>.password`, `app.relay_secret`,
/// `app.mail_password`.
/// The folder and each file must belong to this user and be closed to everyone else (0700 and
/// 0600 on Unix), or they are refused unread: a secret others can read is not kept secret.
pub struct SecretsFolder {
    dir: std::path::PathBuf,
}

impl SecretsFolder {
    pub fn new(dir: impl Into<std::path::PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    fn file(&self, profile: &str, kind: SecretKind) -> std::path::PathBuf {
        // The id is a UUID (or `app`), so the name is a plain file name; anything else is
        // reduced to one rather than trusted as a path.
        let base = kluis_core::filename::sanitize(profile).unwrap_or_else(|| "profile".into());
        let suffix = match kind {
            SecretKind::ApiKey => "api_key",
            SecretKind::Password => "password",
            SecretKind::RelaySecret => "relay_secret",
            SecretKind::MailPassword => "mail_password",
            SecretKind::EncryptionPassphrase => "encryption_passphrase",
            SecretKind::CopyTargetSecret => "copy_target_secret",
            SecretKind::RecoveryVouch => "recovery_vouch",
            SecretKind::OfficePcKey => "office_pc_key",
            SecretKind::OfficeKey => "office_key",
        };
        self.dir.join(format!("{base}.{suffix}"))
    }

    fn refuse(&self, what: &std::path::Path, why: &str) -> ProfileError {
        ProfileError::Secrets(format!(
            "The secrets file or folder {} {why}. Make it yours and owner-only (chmod 700 for the folder, 600 for its files).",
            what.display()
        ))
    }

    /// Refuses a path that another user owns or may read.
    fn check_private(&self, path: &std::path::Path, meta: &std::fs::Metadata) -> ProfileResult<()> {
        if !kluis_private::files::is_own(meta) {
            return Err(self.refuse(path, "belongs to another user"));
        }
        if !kluis_private::files::is_closed_to_others(meta) {
            return Err(self.refuse(path, "can be read by other users"));
        }
        Ok(())
    }

    fn io(&self, path: &std::path::Path, e: std::io::Error) -> ProfileError {
        ProfileError::Secrets(format!(
            "The secrets file {} could not be used: {e}.",
            path.display()
        ))
    }
}

impl SecretStore for SecretsFolder {
    fn get(&self, profile: &str, kind: SecretKind) -> ProfileResult<Option<Secret>> {
        let dir_meta = match std::fs::metadata(&self.dir) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io(&self.dir, e)),
        };
        self.check_private(&self.dir, &dir_meta)?;
        let path = self.file(profile, kind);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io(&path, e)),
        };
        if !meta.is_file() {
            return Err(self.refuse(&path, "is not a plain file"));
        }
        self.check_private(&path, &meta)?;
        let text = std::fs::read_to_string(&path).map_err(|e| self.io(&path, e))?;
        // One line; the newline an editor or `echo` adds is not part of the secret.
        let value = text.trim_end_matches(['\n', '\r']);
        Ok((!value.is_empty()).then(|| Secret::new(value.to_string())))
    }

    fn set(&self, profile: &str, kind: SecretKind, value: &Secret) -> ProfileResult<()> {
        kluis_private::files::create_dir_all(&self.dir).map_err(|e| self.io(&self.dir, e))?;
        let meta = std::fs::metadata(&self.dir).map_err(|e| self.io(&self.dir, e))?;
        self.check_private(&self.dir, &meta)?;
        let path = self.file(profile, kind);
        kluis_private::files::write_atomic(&path, value.expose().as_bytes())
            .map_err(|e| self.io(&path, e))
    }

    fn delete(&self, profile: &str, kind: SecretKind) -> ProfileResult<()> {
        let path = self.file(profile, kind);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.io(&path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Secrets written to the folder read back, owner-only, and are gone after delete.
    #[test]
    fn a_secrets_folder_keeps_owner_only_files() {
        let dir = tempfile::tempdir().unwrap();
        let folder = SecretsFolder::new(dir.path().join("secrets"));
        folder
            .set("p1", SecretKind::Password, &Secret::new("pw-1"))
            .unwrap();
        assert_eq!(
            folder
                .get("p1", SecretKind::Password)
                .unwrap()
                .unwrap()
                .expose(),
            "pw-1"
        );
        assert!(folder.get("p1", SecretKind::ApiKey).unwrap().is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode =
                |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir.path().join("secrets")), 0o700);
            assert_eq!(mode(&dir.path().join("secrets/p1.password")), 0o600);
        }
        folder.delete("p1", SecretKind::Password).unwrap();
        assert!(folder.get("p1", SecretKind::Password).unwrap().is_none());
    }

    /// A secrets file others can read is refused unread, with what to do.
    #[cfg(unix)]
    #[test]
    fn a_readable_secrets_file_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let secrets = dir.path().join("secrets");
        let folder = SecretsFolder::new(&secrets);
        folder
            .set("p1", SecretKind::ApiKey, &Secret::new("key-1"))
            .unwrap();
        let file = secrets.join("p1.api_key");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = folder.get("p1", SecretKind::ApiKey).unwrap_err();
        assert!(error.to_string().contains("chmod"), "{error}");
        assert!(!error.to_string().contains("key-1"));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            folder.get("p1", SecretKind::ApiKey).is_err(),
            "an open folder is refused too"
        );
    }

    /// A file written by hand with a trailing newline gives the secret without it.
    #[cfg(unix)]
    #[test]
    fn a_trailing_newline_is_not_part_of_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        let folder = SecretsFolder::new(dir.path());
        kluis_private::files::write_atomic(&dir.path().join("p1.password"), b"pw-2\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(
            folder
                .get("p1", SecretKind::Password)
                .unwrap()
                .unwrap()
                .expose(),
            "pw-2"
        );
    }
}
