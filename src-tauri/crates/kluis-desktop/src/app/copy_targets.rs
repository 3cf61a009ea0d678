//! Settings → *Copies off this computer*: the copy targets (kluis-copies) every klant's
//! backups are copied to after each backup — added from a folder picked in a native dialog
//! opened here (the webview names no path) or as an S3 bucket (its secret key to the keyring,
//! never back to the page) — an SFTP server in `sftp_target.rs` — tested, removed. The copying itself follows each
//! save (`kluis_profiles::unattended::after_save`).

use kluis_copies::s3::S3Place;
use kluis_copies::{CopyTarget, Place};
use kluis_core::Secret;
use serde::Deserialize;

use super::settings::AppSettings;
use crate::error::{AppError, AppResult};
use crate::profiles::Settings;
use crate::secrets::SecretKind;

/// What "Add a bucket" sends: the target's name, the bucket, and its secret key (which goes
/// to the keyring and never comes back).
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct BucketInput {
    pub name: String,
    /// Its `ca_cert` is ignored: the page names no file.
    pub place: S3Place,
    pub secret_key: String,
    /// The server's certificate is of the office's own CA: its certificate is picked in the
    /// native dialog Rust opens.
    #[serde(default)]
    pub own_ca: bool,
}

/// Shows the bucket, never the key.
impl std::fmt::Debug for BucketInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketInput")
            .field("name", &self.name)
            .field("place", &self.place)
            .field("secret_key", &"…")
            .field("own_ca", &self.own_ca)
            .finish()
    }
}

impl AppSettings {
    /// "Add a folder…": a folder picked in the native dialog becomes copy target `name`, once
    /// a test file could be written there. Unchanged when the dialog is cancelled.
    pub async fn add_copy_folder(&self, name: &str) -> AppResult<Settings> {
        // The name first: a bad one is said before a dialog is opened for nothing.
        CopyTarget::checked_name(name)?;
        let Some(folder) = self.shared.dialogs().pick_folder().await else {
            return Ok(self.current());
        };
        let place = Place::Folder {
            path: folder.to_string_lossy().into_owned(),
        };
        let target = CopyTarget::new(name, place)?;
        tested(target.clone()).await?;
        self.shared.profiles.add_copy_target(target)?;
        Ok(self.current())
    }

    /// "Add a bucket": the bucket becomes copy target `name` once a test object could be
    /// written, read back and removed with the key given; the key is then kept in the keyring
    /// under the target's id (removed again when the settings cannot take the target).
    /// With `own_ca`, the CA's certificate is picked in the native dialog first (cancelled:
    /// nothing is added).
    pub async fn add_copy_bucket(&self, input: BucketInput) -> AppResult<Settings> {
        CopyTarget::checked_name(&input.name)?;
        let ca_cert = match input.own_ca {
            true => match self.shared.dialogs().pick_certificate().await {
                Some(file) => Some(file.to_string_lossy().into_owned()),
                None => return Ok(self.current()),
            },
            false => None,
        };
        let place = S3Place {
            ca_cert,
            ..input.place
        };
        let mut target = CopyTarget::new(&input.name, Place::S3(place))?;
        let secret = Secret::new(input.secret_key);
        if secret.is_empty() {
            return Err(kluis_core::Error::Config("Give the bucket's secret key.".into()).into());
        }
        target.secret = Some(secret);
        tested(target.clone()).await?;
        self.keep_with_secret(target).await
    }

    /// `target` (tested) added to the settings, its secret (if any) kept in the keyring under
    /// its id first — and removed again when the settings cannot take the target.
    pub(super) async fn keep_with_secret(&self, target: CopyTarget) -> AppResult<Settings> {
        let kind = SecretKind::CopyTargetSecret;
        if let Some(secret) = target.secret.clone() {
            (self.connections)
                .store_secret(&target.id, kind, secret, false)
                .await?;
        }
        if let Err(e) = self.shared.profiles.add_copy_target(target.clone()) {
            let _ = self
                .connections
                .delete_secret(&target.id, kind, false)
                .await;
            return Err(e.into());
        }
        Ok(self.current())
    }

    /// "Keep…" of copy target `id`: its own retention rule for the copies it holds (`None`, or
    /// a rule that keeps everything: every copy is kept), applied after each klant's next copy.
    pub fn set_copy_target_rule(
        &self,
        id: &str,
        rule: Option<kluis_core::retention::Retention>,
    ) -> AppResult<Settings> {
        let rule = rule.filter(|r| !r.keeps_everything());
        self.shared.profiles.set_copy_target_rule(id, rule)?;
        Ok(self.current())
    }

    /// "Test": whether copy target `id` can be written now.
    pub async fn test_copy_target(&self, id: &str) -> AppResult<()> {
        let id = self.copy_target(id)?.id;
        let target = (self.shared.copy_targets().await.into_iter()).find(|t| t.id == id);
        tested(
            target
                .ok_or_else(|| AppError::NotFound("That copy target is no longer set.".into()))?,
        )
        .await
    }

    /// "Remove": no more copies go to target `id` (those it holds stay).
    pub async fn remove_copy_target(&self, id: &str) -> AppResult<Settings> {
        let target = self.copy_target(id)?;
        self.shared.profiles.remove_copy_target(id)?;
        if target.place.keeps_secret() {
            let kind = SecretKind::CopyTargetSecret;
            self.connections.delete_secret(id, kind, false).await?;
        }
        Ok(self.current())
    }

    fn copy_target(&self, id: &str) -> AppResult<CopyTarget> {
        (self.current().copy_targets.into_iter())
            .find(|t| t.id == id)
            .ok_or_else(|| AppError::NotFound("That copy target is no longer set.".into()))
    }
}

/// `target` tested (a folder off the async threads: a share may take long to answer).
pub(super) async fn tested(target: CopyTarget) -> AppResult<()> {
    Ok(kluis_copies::test(&target).await?)
}
