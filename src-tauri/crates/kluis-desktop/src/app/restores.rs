//! History → a backup → *Contents*, *Restore…* and *Test restore* (kluis-restore does the
//! reading and writing): what is in a saved backup, its entries back in a folder picked in the
//! native dialog (the page names no path), and the proof that it restores, recorded in the
//! history. An encrypted backup is opened with its klant's passphrase from the keyring; one
//! encrypted to a recipient needs its identity, which the app does not hold (the command line
//! takes it: `kluis restore --identity FILE`).

use std::path::PathBuf;
use std::sync::Arc;

use kluis_core::encryption::{DecryptKey, EncryptionSetting};
use kluis_core::restore_tests::RestoreTestRecord;
use kluis_core::{Error, HistoryEntry, KlantKey};
use kluis_restore::{Backup, Entry, RestoreOptions};
use serde::Serialize;
use uuid::Uuid;

use super::backups::Backups;
use crate::error::{AppError, AppResult};
use crate::secrets::SecretKind;

/// What a restore did, for the window.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct RestoreSummary {
    /// Where it went (the folder the user picked).
    pub folder: String,
    #[ts(type = "number")]
    pub files: u64,
    #[ts(type = "number")]
    pub folders: u64,
    #[ts(type = "number")]
    pub bytes: u64,
    /// Entries not restored, and why.
    pub not_restored: Vec<NotRestored>,
}

/// An entry not restored, and why.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct NotRestored {
    pub name: String,
    pub why: String,
}

/// How far a restore is: bytes written of the total.
#[derive(Debug, Clone, Copy, Serialize, ts_rs::TS)]
pub struct RestoreProgress {
    #[ts(type = "number")]
    pub done: u64,
    #[ts(type = "number")]
    pub total: u64,
}

/// Where a restore's progress goes.
pub type ProgressSink = Arc<dyn Fn(RestoreProgress) + Send + Sync>;

impl Backups {
    /// *Contents*: every entry of saved backup `history_id`.
    pub async fn backup_contents(&self, history_id: Uuid) -> AppResult<Vec<Entry>> {
        let (path, key) = self.opened(history_id).await?;
        blocking(move || Ok(Backup::open(&path, key.as_ref())?.entries())).await
    }

    /// *Restore…*: the entries at or under `only` (none: everything) of saved backup
    /// `history_id` into a folder picked in the native dialog (`None` when it was cancelled).
    /// Nothing already there is replaced: a folder holding any of the files is refused.
    pub async fn restore_backup(
        &self,
        history_id: Uuid,
        only: Vec<String>,
        progress: ProgressSink,
    ) -> AppResult<Option<RestoreSummary>> {
        let (path, key) = self.opened(history_id).await?;
        let Some(folder) = self.shared.dialogs().pick_folder().await else {
            return Ok(None);
        };
        let to = folder.clone();
        let restored = blocking(move || {
            let mut backup = Backup::open(&path, key.as_ref())?;
            let options = RestoreOptions {
                only,
                ..RestoreOptions::default()
            };
            let tell = &mut |done, total| progress(RestoreProgress { done, total });
            kluis_restore::restore(&mut backup, &to, &options, tell)
        })
        .await?;
        Ok(Some(RestoreSummary {
            folder: folder.to_string_lossy().into_owned(),
            files: restored.files,
            folders: restored.folders,
            bytes: restored.bytes,
            not_restored: (restored.not_restored.into_iter())
                .map(|(name, why)| NotRestored { name, why })
                .collect(),
        }))
    }

    /// *Test restore*: saved backup `history_id` restored into a temporary folder beside it,
    /// checked, the folder removed; recorded in the history.
    pub async fn test_restore(&self, history_id: Uuid) -> AppResult<RestoreTestRecord> {
        let entry = self.saved(history_id)?;
        let key = self.key_for(&entry).await?;
        let history = self.shared.history.clone();
        blocking(move || kluis_restore::test_and_record(&history, &entry, key.as_ref())).await
    }

    /// The saved backup `history_id`'s file and what opens it.
    async fn opened(&self, history_id: Uuid) -> AppResult<(PathBuf, Option<DecryptKey>)> {
        let entry = self.saved(history_id)?;
        let key = self.key_for(&entry).await?;
        Ok((PathBuf::from(entry.path.unwrap_or_default()), key))
    }

    fn saved(&self, history_id: Uuid) -> AppResult<HistoryEntry> {
        let entry = (self.shared.history.get(history_id)?)
            .ok_or_else(|| AppError::NotFound("That backup is not in the history.".into()))?;
        match (&entry.path, entry.removed.is_none()) {
            (Some(_), true) => Ok(entry),
            _ => Err(AppError::NotFound(
                "That backup has no saved file (it failed, or a retention rule removed it).".into(),
            )),
        }
    }

    /// What opens `entry`'s file when it is encrypted: its klant's passphrase.
    async fn key_for(&self, entry: &HistoryEntry) -> AppResult<Option<DecryptKey>> {
        let path = entry.path.as_deref().unwrap_or_default();
        if !kluis_core::encryption::looks_encrypted(std::path::Path::new(path)) {
            return Ok(None);
        }
        let profile = self.profile_of(&entry.profile);
        let recipient = matches!(
            profile.as_ref().and_then(|p| p.encryption.clone()),
            Some(EncryptionSetting::Recipient { .. })
        );
        let said = |why: &str| -> AppResult<Option<DecryptKey>> {
            Err(Error::Config(format!("This backup is encrypted {why}. Restore it from the command line: kluis restore FILE --identity YOUR-IDENTITY-FILE (or with its passphrase in KLUIS_ENCRYPTION_PASSPHRASE).")).into())
        };
        let Some(profile) = profile.filter(|_| !recipient) else {
            return said("to a recipient whose identity only you hold");
        };
        let kind = SecretKind::EncryptionPassphrase;
        match self
            .connections
            .secret(&profile.id, kind, profile.demo)
            .await?
        {
            Some(passphrase) => Ok(Some(DecryptKey::Passphrase(passphrase))),
            None => said("with a passphrase this computer no longer keeps"),
        }
    }

    fn profile_of(&self, key: &KlantKey) -> Option<kluis_profiles::Profile> {
        (self.shared.profiles.list().into_iter()).find(|p| &p.key() == key)
    }
}

/// `work` off the async threads (it reads and writes whole files).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> kluis_core::Result<T> + Send + 'static,
) -> AppResult<T> {
    let done = tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::Io(format!("Reading the backup stopped unexpectedly ({e}).")))?;
    Ok(done?)
}
