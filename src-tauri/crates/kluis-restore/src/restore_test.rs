//! A restore test: the whole backup restored into an owner-only temporary folder (every entry
//! inflated, its size and CRC-32 checked on the way), and the folder removed again — what an
//! auditor asks for ("backups are tested") and what the history records.

use std::path::Path;
use std::time::Instant;

use kluis_core::encryption::DecryptKey;
use kluis_core::restore_tests::RestoreTestRecord;
use kluis_core::{Error, History, HistoryEntry, Result};

use crate::{restore, Backup, RestoreOptions};

/// What a restore test found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreTested {
    /// Entries restored and checked.
    pub entries: u64,
    pub bytes: u64,
    pub took_ms: u64,
    /// Entries that did not restore, and why.
    pub failed: Vec<(String, String)>,
}

impl RestoreTested {
    /// Whether every entry restored.
    pub fn passed(&self) -> bool {
        self.failed.is_empty()
    }
}

/// Restores the backup at `path` (opened with `key` when it is encrypted) into a temporary
/// folder under `scratch` (the system's when none; made owner-only), checks it, and removes
/// the folder. An archive that cannot be opened at all is an error; entries that fail are in
/// the result.
pub fn restore_test(
    path: &Path,
    key: Option<&DecryptKey>,
    scratch: Option<&Path>,
) -> Result<RestoreTested> {
    let started = Instant::now();
    let mut backup = Backup::open(path, key)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".kluis-restore-test-");
    // tempfile makes the folder owner-only (0700 on Unix; the user's own temp folder on
    // Windows): the restored data is the klant's.
    let folder = match scratch {
        Some(scratch) => builder.tempdir_in(scratch),
        None => builder.tempdir(),
    }
    .map_err(|e| Error::io("make a temporary folder for the restore test", e))?;
    let options = RestoreOptions {
        keep_going: true,
        scratch: true,
        ..RestoreOptions::default()
    };
    let restored = restore(&mut backup, folder.path(), &options, &mut |_, _| {})?;
    // Removed before the result is told: nothing of the klant's stays behind.
    folder
        .close()
        .map_err(|e| Error::io("remove the restore test's temporary folder", e))?;
    Ok(RestoreTested {
        entries: restored.files + restored.folders,
        bytes: restored.bytes,
        took_ms: started.elapsed().as_millis() as u64,
        failed: restored.not_restored,
    })
}

/// Most failed entries a record names (the rest counted).
const NAMED: usize = 10;

/// A restore test of the saved backup `entry` (opened with `key` when encrypted), in a
/// temporary folder beside it (its disk has room for what it holds), recorded in `history` —
/// also when the archive cannot be opened at all (a failed test, with why).
pub fn test_and_record(
    history: &History,
    entry: &HistoryEntry,
    key: Option<&DecryptKey>,
) -> Result<RestoreTestRecord> {
    let path = entry.path.as_deref().map(Path::new).ok_or_else(|| {
        Error::Config("This backup has no saved file to test (it failed, or was removed).".into())
    })?;
    let at_ms = kluis_core::clock::now_ms();
    let record = match restore_test(path, key, path.parent()) {
        Ok(tested) => {
            let mut named: Vec<String> = (tested.failed.iter().take(NAMED))
                .map(|(name, why)| format!("{name}: {why}"))
                .collect();
            if tested.failed.len() > NAMED {
                named.push(format!("and {} more", tested.failed.len() - NAMED));
            }
            RestoreTestRecord {
                job: entry.id.clone(),
                at_ms,
                passed: tested.passed(),
                entries: tested.entries,
                bytes: tested.bytes,
                took_ms: tested.took_ms,
                detail: (!named.is_empty()).then(|| named.join("; ")),
            }
        }
        Err(e) => RestoreTestRecord {
            job: entry.id.clone(),
            at_ms,
            passed: false,
            entries: 0,
            bytes: 0,
            took_ms: (kluis_core::clock::now_ms() - at_ms).max(0) as u64,
            detail: Some(e.to_string()),
        },
    };
    history.restore_tested(&record)?;
    Ok(record)
}
