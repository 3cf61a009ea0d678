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
    restore_test_with(path, key, scratch, crate::Room::default())
}

/// [`restore_test`], the free space of `scratch`'s disk as `room` says (tests).
pub fn restore_test_with(
    path: &Path,
    key: Option<&DecryptKey>,
    scratch: Option<&Path>,
    room: crate::Room,
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
        room,
        ..RestoreOptions::default()
    };
    let restored = restore(&mut backup, folder.path(), &options, &mut |_, _| {}).map_err(|e| {
        match crate::room::is_no_room(&e) {
            // Said of the disk the test ran on, not of the temporary folder it removes.
            true => Error::Io(format!(
                "No room for the restore test on the disk of {}: not tested ({}). Make room there; the test runs again after the next backup.",
                folder.path().parent().unwrap_or(folder.path()).display(),
                e.to_string().split_once(": ").map_or("", |(_, why)| why)
            )),
            false => e,
        }
    })?;
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
/// temporary folder beside it, recorded in `history` — also when the archive cannot be opened
/// at all (a failed test, with why); when its disk has no room for the test, nothing is
/// recorded and that is the error (the backup was not tested).
pub fn test_and_record(
    history: &History,
    entry: &HistoryEntry,
    key: Option<&DecryptKey>,
) -> Result<RestoreTestRecord> {
    test_saved(history, entry, key, kluis_core::clock::now_ms())
}

/// [`test_and_record`], recorded as of `at_ms` (a round's one time: see [`test_copy`]).
pub fn test_saved(
    history: &History,
    entry: &HistoryEntry,
    key: Option<&DecryptKey>,
    at_ms: i64,
) -> Result<RestoreTestRecord> {
    let path = entry.path.as_deref().map(Path::new).ok_or_else(|| {
        Error::Config("This backup has no saved file to test (it failed, or was removed).".into())
    })?;
    let started = Instant::now();
    let tested = restore_test(path, key, path.parent());
    not_tested_for_room(&tested)?;
    let record = recorded(entry, at_ms, None, tested, started, "");
    history.restore_tested(&record)?;
    Ok(record)
}

/// A test that met a full disk did not test the backup: not recorded as failed (that would
/// tell the office the backup does not restore), but said as not tested.
fn not_tested_for_room(tested: &Result<RestoreTested>) -> Result<()> {
    match tested {
        Err(e) if crate::room::is_no_room(e) => Err(Error::Io(e.to_string())),
        _ => Ok(()),
    }
}

/// Reads a copy in full into the file given, checking it is the copy as made.
pub type Fetch<'a> = Box<dyn FnOnce(&mut std::fs::File) -> Result<()> + 'a>;

/// A copy target's copy of a backup, as a restore test fetches it.
pub struct CopyOn<'a> {
    /// The target's id (recorded) and name (said).
    pub target_id: &'a str,
    pub target_name: &'a str,
    pub fetch: Fetch<'a>,
}

/// A restore test of `entry`'s copy on a copy target: the copy fetched into an owner-only
/// temporary file (beside the saved backup while its folder is there, else in the system's
/// temporary folder), restored and checked as the saved file is, the file removed, and the
/// result recorded in `history` as of `at_ms` with the target — a copy that cannot be fetched
/// is a failed test, with why. Encrypted copies are opened with `key` (a copy is the file as
/// saved).
pub fn test_copy(
    history: &History,
    entry: &HistoryEntry,
    key: Option<&DecryptKey>,
    at_ms: i64,
    copy: CopyOn<'_>,
) -> Result<RestoreTestRecord> {
    let started = Instant::now();
    let scratch = (entry.path.as_deref().map(Path::new))
        .and_then(Path::parent)
        .filter(|folder| folder.is_dir());
    let tested = (|| {
        let mut fetched = scratch_file(scratch)?;
        (copy.fetch)(fetched.as_file_mut())?;
        restore_test(fetched.path(), key, scratch)
    })();
    not_tested_for_room(&tested)?;
    let said = format!("Copy on \"{}\": ", copy.target_name);
    let record = recorded(entry, at_ms, Some(copy.target_id), tested, started, &said);
    history.restore_tested(&record)?;
    Ok(record)
}

/// An owner-only temporary file in `folder` (the system's temporary folder when none), removed
/// when dropped.
pub fn scratch_file(folder: Option<&Path>) -> Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".kluis-copy-");
    // It is the klant's backup: owner-only (tempfile makes it 0600 on Unix; on Windows its
    // access list is set here, while it is empty, not inherited from a shared folder).
    let file = match folder {
        Some(folder) => builder.tempfile_in(folder),
        None => builder.tempfile(),
    }
    .map_err(|e| Error::io("make a temporary file for the copy", e))?;
    kluis_private::files::restrict(file.as_file())
        .map_err(|e| Error::io("make the temporary file for the copy owner-only", e))?;
    Ok(file)
}

/// The record of a restore test of `entry` (its copy on `target`, when one) that came to
/// `tested`: what failed named (the first [`NAMED`], the rest counted), `said` before it.
fn recorded(
    entry: &HistoryEntry,
    at_ms: i64,
    target: Option<&str>,
    tested: Result<RestoreTested>,
    started: Instant,
    said: &str,
) -> RestoreTestRecord {
    match tested {
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
                took_ms: started.elapsed().as_millis() as u64,
                detail: (!named.is_empty()).then(|| format!("{said}{}", named.join("; "))),
                target: target.map(str::to_string),
            }
        }
        Err(e) => RestoreTestRecord {
            job: entry.id.clone(),
            at_ms,
            passed: false,
            entries: 0,
            bytes: 0,
            took_ms: started.elapsed().as_millis() as u64,
            detail: Some(format!("{said}{e}")),
            target: target.map(str::to_string),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A restore test whose disk has no room is not a failed test of the backup: it is said
    /// as not tested, naming the disk it ran on (not its removed temporary folder), and is not
    /// recorded; any other failure is.
    #[test]
    fn no_room_is_not_tested_not_failed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("backup.zip");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        zip.start_file("a.csv", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, &[1u8; 4096]).unwrap();
        zip.finish().unwrap();
        let full = crate::Room::told_by(|_| Ok(crate::room::KEEP_FREE));
        let tested = restore_test_with(&path, None, Some(dir.path()), full);
        let said = tested.as_ref().unwrap_err().to_string();
        assert!(said.contains("not tested"), "{said}");
        assert!(said.contains(&dir.path().display().to_string()), "{said}");
        assert!(!said.contains(".kluis-restore-test-"), "{said}");
        assert!(not_tested_for_room(&tested).is_err(), "not recorded");
        let damaged: Result<RestoreTested> = Err(Error::BackupsDamaged("x".into()));
        assert!(not_tested_for_room(&damaged).is_ok(), "recorded as failed");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "nothing left"
        );
    }
}
