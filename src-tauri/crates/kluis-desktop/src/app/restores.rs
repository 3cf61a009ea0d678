//! History → a backup → *Contents*, *Restore…* and *Test restore* (kluis-restore does the
//! reading and writing): what is in a saved backup, its entries back in a folder picked in the
//! native dialog (the page names no path), and the proof that it restores, recorded in the
//! history. An encrypted backup is opened with its klant's passphrase from the keyring; one
//! encrypted to a recipient needs its identity, which the app does not hold (the command line
//! takes it: `kluis restore --identity FILE`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kluis_copies::Opened;
use kluis_core::encryption::{DecryptKey, EncryptionSetting};
use kluis_core::{Error, HistoryEntry, KlantKey};
use kluis_profiles::restore_round::{restore_test_round, RoundTest};
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
    /// Entries asked for: restored, or in `not_restored`.
    #[ts(type = "number")]
    pub entries: u64,
    #[ts(type = "number")]
    pub files: u64,
    #[ts(type = "number")]
    pub folders: u64,
    #[ts(type = "number")]
    pub bytes: u64,
    /// Entries not restored, and why.
    pub not_restored: Vec<NotRestored>,
}

impl RestoreSummary {
    /// What `restored` did into `folder`, for the window.
    pub(super) fn of(folder: &Path, restored: kluis_restore::Restored) -> Self {
        RestoreSummary {
            folder: folder.to_string_lossy().into_owned(),
            entries: restored.entries,
            files: restored.files,
            folders: restored.folders,
            bytes: restored.bytes,
            not_restored: (restored.not_restored.into_iter())
                .map(|(name, why)| NotRestored { name, why })
                .collect(),
        }
    }
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

/// A copy of a backup that a copy target holds: what *Contents* and *Restore…* can read
/// instead of the file on this computer (lost with its disk, say).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct HeldCopy {
    pub target_id: String,
    pub name: String,
}

/// What a backup is read from: its saved file, or its copy fetched back into an owner-only
/// temporary file (removed when this is dropped).
enum Readable {
    Saved(PathBuf),
    Fetched(tempfile::NamedTempFile),
}

impl Readable {
    fn path(&self) -> &Path {
        match self {
            Readable::Saved(path) => path,
            Readable::Fetched(file) => file.path(),
        }
    }
}

impl Backups {
    /// The copies of saved backup `history_id` that the copy targets in Settings hold.
    pub async fn backup_copies(&self, history_id: Uuid) -> AppResult<Vec<HeldCopy>> {
        let entry = self.saved(history_id)?;
        let targets = self.shared.settings().copy_targets;
        let copies = self.shared.history.copies_of(&entry.id)?;
        Ok((copies.into_iter().filter(|c| c.holds()))
            .filter_map(|c| targets.iter().find(|t| t.id == c.target))
            .map(|t| HeldCopy {
                target_id: t.id.clone(),
                name: t.name.clone(),
            })
            .collect())
    }

    /// *Contents*: every entry of saved backup `history_id` — of its copy on copy target
    /// `copy` when one is named.
    pub async fn backup_contents(
        &self,
        history_id: Uuid,
        copy: Option<String>,
    ) -> AppResult<Vec<Entry>> {
        let (readable, key) = self.opened(history_id, copy.as_deref()).await?;
        blocking(move || Ok(Backup::open(readable.path(), key.as_ref())?.entries())).await
    }

    /// *Restore…*: the entries at or under `only` (none: everything) of saved backup
    /// `history_id` (of its copy on copy target `copy` when one is named) into a folder picked
    /// in the native dialog (`None` when it was cancelled). Nothing already there is replaced:
    /// a folder holding any of the files is refused.
    pub async fn restore_backup(
        &self,
        history_id: Uuid,
        copy: Option<String>,
        only: Vec<String>,
        progress: ProgressSink,
    ) -> AppResult<Option<RestoreSummary>> {
        let Some(folder) = self.shared.dialogs().pick_folder().await else {
            return Ok(None);
        };
        let (readable, key) = self.opened(history_id, copy.as_deref()).await?;
        let to = folder.clone();
        let restored = blocking(move || {
            let mut backup = Backup::open(readable.path(), key.as_ref())?;
            let options = RestoreOptions {
                only,
                ..RestoreOptions::default()
            };
            let tell = &mut |done, total| progress(RestoreProgress { done, total });
            kluis_restore::restore(&mut backup, &to, &options, tell)
        })
        .await?;
        Ok(Some(RestoreSummary::of(&folder, restored)))
    }

    /// *Test restore*: saved backup `history_id` restored into a temporary folder beside it,
    /// checked, the folder removed — then each copy of it the copy targets hold, fetched back
    /// and tested the same way; each test recorded in the history.
    pub async fn test_restore(&self, history_id: Uuid) -> AppResult<Vec<RoundTest>> {
        let entry = self.saved(history_id)?;
        let key = self.key_for(&entry).await?;
        let history = self.shared.history.clone();
        let targets = self.shared.copy_targets().await;
        let tested =
            blocking(move || restore_test_round(&history, &entry, &targets, key.as_ref())).await;
        self.shared.office_changed.notify_one();
        tested
    }

    /// Saved backup `history_id`'s file — or its copy on copy target `copy`, fetched back —
    /// and what opens it.
    async fn opened(
        &self,
        history_id: Uuid,
        copy: Option<&str>,
    ) -> AppResult<(Readable, Option<DecryptKey>)> {
        let entry = self.saved(history_id)?;
        let key = self.key_for(&entry).await?;
        let Some(target_id) = copy else {
            return Ok((
                Readable::Saved(PathBuf::from(entry.path.unwrap_or_default())),
                key,
            ));
        };
        let targets = self.shared.copy_targets().await;
        let target = (targets.into_iter().find(|t| t.id == target_id)).ok_or_else(|| {
            AppError::NotFound("That copy target is no longer in Settings.".into())
        })?;
        let record = (self.shared.history.copies_of(&entry.id)?.into_iter())
            .find(|c| c.target == target.id && c.holds())
            .ok_or_else(|| {
                AppError::NotFound(format!(
                    "Copy target \"{}\" holds no copy of this backup (Verify checks the copies).",
                    target.name
                ))
            })?;
        // Beside the saved file while its folder is there (its disk has room for it).
        let scratch = (entry.path.as_deref().map(Path::new))
            .and_then(Path::parent)
            .filter(|folder| folder.is_dir())
            .map(Path::to_path_buf);
        let fetched = blocking(move || {
            let mut file = kluis_restore::restore_test::scratch_file(scratch.as_deref())?;
            Opened::open(&target, None)?.fetch(&record, file.as_file_mut())?;
            Ok(file)
        })
        .await?;
        Ok((Readable::Fetched(fetched), key))
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
        // As the history records it: the file itself may be lost (its copy read instead).
        let path = entry.path.as_deref().unwrap_or_default();
        if entry.encrypted.is_none() && !kluis_core::encryption::looks_encrypted(Path::new(path)) {
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
