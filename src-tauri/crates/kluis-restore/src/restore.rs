//! Restoring entries into a folder, in two passes. The plan: every entry asked for is given
//! its safe path (or listed as not restored, with the reason), two entries that are one name to
//! the folder's file system ([`NameRule`]) are not both written, the archive's size, entries,
//! folders and depth are bounded, and when any file would replace one already there, nothing is
//! written unless replacing was asked for. Then the writing: the folder made when only it is
//! missing (owner-only), folders made (never through a link already in the folder), each file
//! inflated into a part file beside its place — no further than the size it declares, its
//! CRC-32 checked at its end, within the room on the disk ([`Room`]) — fsynced, dated as the
//! archive says, and only then given its name, never over a file this restore wrote (a file
//! system that joins names the rule did not expect: a FAT stick on Linux). A failure removes
//! the part file: no file is ever half-written under its name.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use kluis_core::{Error, Result};

use crate::archive::{Backup, EntryKind, READ_SIZE};
use crate::room::{Budget, Room};
use crate::same_name::NameRule;

/// What one restore makes at most: backups of an administration hold thousands of entries in
/// a few levels of folders; an archive of millions of tiny entries, or of folders thousands
/// deep, is a way to exhaust a folder (or whatever removes it again), not a backup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Most {
    /// Files and folders written.
    pub entries: usize,
    /// Folders made (those the entries' paths need too).
    pub folders: usize,
    /// Folders within folders.
    pub depth: usize,
}

impl Default for Most {
    fn default() -> Most {
        Most {
            entries: 500_000,
            folders: 50_000,
            depth: 64,
        }
    }
}

/// What to restore, and how.
#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    /// Only the entries at or under these paths (as listed: `2025/grootboek.csv`, `2025`);
    /// none: everything.
    pub only: Vec<String>,
    /// Replace files already in the folder (else nothing is written when one would be).
    pub overwrite: bool,
    /// Go on after an entry that cannot be restored (a restore test wants every failure);
    /// else the first one stops the restore.
    pub keep_going: bool,
    /// Write each file through to the disk (fsync) before it gets its name: what a restore
    /// the office keeps wants; a restore test, whose folder is removed at once, does not.
    pub scratch: bool,
    /// When two paths are one name (default: as this system's file system compares them).
    pub names: NameRule,
    /// The free space of the folder's disk (default: as the disk says).
    pub room: Room,
    /// What the restore makes at most.
    pub most: Most,
    /// Set to stop the restore before its next entry (the app's *Cancel*): the files written
    /// until then stay whole, and it ends as [`Error::Cancelled`].
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    /// Entries asked for: restored or not (`not_restored`).
    pub entries: u64,
    pub files: u64,
    pub folders: u64,
    pub bytes: u64,
    /// Entries not restored: their name and why (a link, a name that climbs out, a password,
    /// a CRC-32 that does not match…).
    pub not_restored: Vec<(String, String)>,
}

/// One entry to write.
struct Planned {
    index: usize,
    name: String,
    parts: Vec<String>,
    kind: EntryKind,
    size: u64,
}

impl Restored {
    /// Whether every entry asked for was restored.
    pub fn whole(&self) -> bool {
        self.not_restored.is_empty()
    }
}

/// Why a file was not written.
enum Failure {
    /// This entry: it does not read back, or cannot be written (the restore may go on).
    Entry(Error),
    /// It is one name, to this folder's file system, with a file this restore wrote.
    SameName,
    /// The restore cannot go on (the disk is full).
    Stop(Error),
}

/// Restores the entries of `backup` that `options` asks for into the folder `to` (made,
/// owner-only, when only it is missing); `progress` hears the bytes written so far and the
/// total. See the module's text.
pub fn restore(
    backup: &mut Backup,
    to: &Path,
    options: &RestoreOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Restored> {
    folder_to_restore_into(to)?;
    let mut restored = Restored::default();
    let plan = plan(backup, options, &mut restored)?;
    if !options.overwrite {
        let taken: Vec<String> = (plan.iter())
            .filter(|p| p.kind == EntryKind::File)
            .filter(|p| std::fs::symlink_metadata(join(to, &p.parts)).is_ok())
            .map(|p| p.parts.join("/"))
            .collect();
        if let Some(first) = taken.first() {
            return Err(Error::Config(format!(
                "{} of the files to restore are already in {} (such as {first}); nothing was written. Choose an empty folder, or allow replacing them (--overwrite).",
                taken.len(),
                to.display()
            )));
        }
    }
    let total: u64 = plan.iter().map(|p| p.size).sum();
    let mut budget = options.room.budget(to, total)?;
    let mut written = Written::default();
    for planned in &plan {
        let stopped = options.stop.as_ref();
        if stopped.is_some_and(|stop| stop.load(std::sync::atomic::Ordering::SeqCst)) {
            return Err(Error::Cancelled);
        }
        let outcome = match planned.kind {
            EntryKind::Folder => folder(to, &planned.parts)
                .map(|_| 0)
                .map_err(Failure::Entry),
            _ => file(backup, to, planned, options, &mut budget, &mut written),
        };
        match outcome {
            Ok(bytes) => {
                match planned.kind {
                    EntryKind::Folder => restored.folders += 1,
                    _ => restored.files += 1,
                }
                restored.bytes += bytes;
                progress(restored.bytes, total);
            }
            Err(Failure::SameName) => restored
                .not_restored
                .push((planned.name.clone(), SAME_NAME.into())),
            Err(Failure::Entry(e)) if options.keep_going => restored
                .not_restored
                .push((planned.name.clone(), e.to_string())),
            Err(Failure::Entry(e) | Failure::Stop(e)) => return Err(e),
        }
    }
    Ok(restored)
}

const SAME_NAME: &str = "another entry is restored under the same name (this folder's file system does not tell them apart): restore this one on its own (--only, or Restore… beside it) into another folder";

/// Makes the folder `to` when only it is missing (as `unzip -d` does, owner-only: it will
/// hold the klant's data); a missing parent is refused — a mistyped path is caught, not made.
fn folder_to_restore_into(to: &Path) -> Result<()> {
    match std::fs::metadata(to) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => {
            return Err(Error::Config(format!(
                "{} is a file, not a folder to restore into.",
                to.display()
            )))
        }
        Err(_) => {}
    }
    let parent = to.parent().filter(|p| !p.as_os_str().is_empty());
    if !parent.unwrap_or(Path::new(".")).is_dir() {
        return Err(Error::Config(format!(
            "The folder {} to restore into is not there, nor the folder it would be made in. Check the path.",
            to.display()
        )));
    }
    kluis_private::files::create_dir_all(to)
        .map_err(|e| Error::io(format!("make the folder {}", to.display()), e))
}

/// The files this restore wrote, as the file system knows them (Unix: device and inode;
/// Windows: volume and file index), so that none is replaced by another entry the file system
/// takes for the same name.
#[derive(Default)]
struct Written(HashSet<(u64, u64)>);

impl Written {
    #[cfg(unix)]
    fn id(path: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino()))
    }

    /// Windows: the volume's serial number and the file's index (what NTFS knows a file by,
    /// whichever of its names — a short 8.3 one, say — it is reached by).
    #[cfg(windows)]
    fn id(path: &Path) -> Option<(u64, u64)> {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION,
        };
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is valid (plain integers); the call
        // fills it from a handle this function holds open, read only on success.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle() as _, &mut info) };
        let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
        (ok != 0).then_some((u64::from(info.dwVolumeSerialNumber), index))
    }

    #[cfg(not(any(unix, windows)))]
    fn id(_: &Path) -> Option<(u64, u64)> {
        None
    }

    fn holds(&self, path: &Path) -> bool {
        Written::id(path).is_some_and(|id| self.0.contains(&id))
    }

    fn add(&mut self, path: &Path) {
        if let Some(id) = Written::id(path) {
            self.0.insert(id);
        }
    }
}

/// The entries to write, each with its safe path; the rest listed in `restored` as not
/// restored.
fn plan(
    backup: &mut Backup,
    options: &RestoreOptions,
    restored: &mut Restored,
) -> Result<Vec<Planned>> {
    let only: Vec<String> = (options.only.iter())
        .map(|p| p.trim_matches(['/', '\\']).replace('\\', "/"))
        .collect();
    let wanted = |path: &str| {
        only.is_empty() || (only.iter()).any(|o| path == o || path.starts_with(&format!("{o}/")))
    };
    let mut plan = Vec::new();
    // Two entries whose safe names meet — as the folder's file system compares names — are
    // not written over each other: the second is not restored.
    let mut seen = HashSet::new();
    let mut folders = HashSet::new();
    let too_many = |what: String| {
        Error::BackupsDamaged(format!(
            "The backup would make {what}: more than one restore makes, so nothing was restored. Restore it in parts (--only FOLDER, or Restore… beside a folder); an archive made to exhaust a folder looks like this too."
        ))
    };
    for index in 0..backup.len() {
        let Some(entry) = backup.entry(index) else {
            let why = "its header cannot be read".to_string();
            restored.entries += 1;
            restored
                .not_restored
                .push((format!("entry {}", index + 1), why));
            continue;
        };
        let asked = match &entry.path {
            Some(path) => wanted(path),
            None => only.is_empty(),
        };
        if !asked {
            continue;
        }
        restored.entries += 1;
        if let Some(why) = entry.refused {
            restored.not_restored.push((entry.name, why));
            continue;
        }
        let path = entry.path.unwrap_or_default();
        if !seen.insert(options.names.key(&path)) && entry.kind == EntryKind::File {
            restored.not_restored.push((entry.name, SAME_NAME.into()));
            continue;
        }
        let parts: Vec<String> = path.split('/').map(str::to_string).collect();
        let most = options.most;
        if parts.len() > most.depth {
            return Err(too_many(format!("folders {} deep", parts.len())));
        }
        let own_folders = match entry.kind {
            EntryKind::Folder => parts.len(),
            _ => parts.len() - 1,
        };
        for depth in 1..=own_folders {
            folders.insert(options.names.key(&parts[..depth].join("/")));
        }
        if folders.len() > most.folders {
            return Err(too_many(format!("more than {} folders", most.folders)));
        }
        if plan.len() == most.entries {
            return Err(too_many(format!(
                "more than {} files and folders",
                most.entries
            )));
        }
        plan.push(Planned {
            index,
            name: entry.name,
            parts,
            kind: entry.kind,
            size: entry.size,
        });
    }
    if plan.is_empty() && !only.is_empty() {
        return Err(Error::Config(format!(
            "The backup has nothing at {}; see `kluis contents`.",
            only.join(", ")
        )));
    }
    Ok(plan)
}

fn join(to: &Path, parts: &[String]) -> PathBuf {
    parts
        .iter()
        .fold(to.to_path_buf(), |path, part| path.join(part))
}

/// Makes the folder `parts` under `to`, part by part — never through a link (one already in
/// the folder could lead anywhere) or over a file.
fn folder(to: &Path, parts: &[String]) -> Result<PathBuf> {
    let mut path = to.to_path_buf();
    for part in parts {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(Error::Config(format!(
                    "{} is a file or a link, not a folder: nothing is restored through it.",
                    path.display()
                )))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir(&path)
                .map_err(|e| Error::io(format!("create the folder {}", path.display()), e))?,
            Err(e) => return Err(Error::io(format!("look at {}", path.display()), e)),
        }
    }
    Ok(path)
}

/// Writes the file `planned` (see the module's text); its bytes.
fn file(
    backup: &mut Backup,
    to: &Path,
    planned: &Planned,
    options: &RestoreOptions,
    budget: &mut Budget,
    written_files: &mut Written,
) -> std::result::Result<u64, Failure> {
    let (overwrite, scratch) = (options.overwrite, options.scratch);
    let (parents, name) = planned.parts.split_at(planned.parts.len() - 1);
    let parent = folder(to, parents).map_err(Failure::Entry)?;
    let destination = parent.join(&name[0]);
    if written_files.holds(&destination) {
        return Err(Failure::SameName);
    }
    let said = |e: std::io::Error| {
        Failure::Entry(Error::io(format!("write {}", destination.display()), e))
    };
    let mut part = tempfile::Builder::new()
        .prefix(".kluis-restore-")
        .suffix(".part")
        .tempfile_in(&parent)
        .map_err(said)?;
    let mut entry = backup.archive.by_index(planned.index).map_err(|e| {
        Failure::Entry(Error::BackupsDamaged(format!(
            "{} cannot be read ({e}).",
            planned.name
        )))
    })?;
    let mut buffer = vec![0u8; READ_SIZE];
    let mut written = 0u64;
    loop {
        // The zip reader checks the CRC-32 when the entry's end is reached.
        let n = match entry.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Failure::Entry(Error::BackupsDamaged(format!(
                    "{} does not read back ({e}); nothing was written under its name.",
                    planned.name
                ))))
            }
        };
        written += n as u64;
        if written > planned.size {
            return Err(Failure::Entry(Error::BackupsDamaged(format!(
                "{} inflates past the {} bytes it declares (a zip bomb looks like this); it was not restored.",
                planned.name, planned.size
            ))));
        }
        budget.spend(n as u64).map_err(Failure::Stop)?;
        part.write_all(&buffer[..n]).map_err(said)?;
    }
    if written != planned.size {
        return Err(Failure::Entry(Error::BackupsDamaged(format!(
            "{} is {written} bytes, not the {} it declares; it was not restored.",
            planned.name, planned.size
        ))));
    }
    if !scratch {
        part.as_file().sync_all().map_err(said)?;
    }
    if let Some(modified) = entry.last_modified().and_then(system_time) {
        let _ = part.as_file().set_modified(modified);
    }
    let persisted = match overwrite {
        true => part.persist(&destination).map(|_| ()),
        false => part.persist_noclobber(&destination).map(|_| ()),
    };
    match persisted {
        Ok(()) => {}
        // Nothing was there when the restore began (checked): a file this restore wrote,
        // under a name the file system takes for this one.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Failure::SameName)
        }
        Err(e) => return Err(said(e.error)),
    }
    written_files.add(&destination);
    Ok(written)
}

/// The archive's local time as a moment, read as this computer's local time (zip records no
/// zone).
fn system_time(t: zip::DateTime) -> Option<std::time::SystemTime> {
    let civil = jiff_civil(t)?;
    let zoned = civil.to_zoned(jiff::tz::TimeZone::system()).ok()?;
    Some(std::time::SystemTime::from(zoned.timestamp()))
}

fn jiff_civil(t: zip::DateTime) -> Option<jiff::civil::DateTime> {
    jiff::civil::DateTime::new(
        i16::try_from(t.year()).ok()?,
        t.month() as i8,
        t.day() as i8,
        t.hour() as i8,
        t.minute() as i8,
        t.second() as i8,
        0,
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name the file system joins with one this restore wrote (a FAT stick on Linux takes
    /// `A.TXT` for `a.txt`; a hard link is the same file under another name) is told as
    /// written: the second entry is not written over the first.
    #[test]
    fn a_file_this_restore_wrote_is_known_under_another_name() {
        let dir = tempfile::tempdir().unwrap();
        let (first, other) = (
            dir.path().join("a.txt"),
            dir.path().join("another-name.txt"),
        );
        std::fs::write(&first, b"first").unwrap();
        let mut written = Written::default();
        assert!(!written.holds(&first));
        written.add(&first);
        std::fs::hard_link(&first, &other).unwrap(); // (NTFS has hard links too)
        assert!(written.holds(&other), "the same file under another name");
        let unrelated = dir.path().join("b.txt");
        std::fs::write(&unrelated, b"b").unwrap();
        assert!(!written.holds(&unrelated));
    }
}
