//! Restoring entries into a folder, in two passes. The plan: every entry asked for is given
//! its safe path (or listed as not restored, with the reason), and when any file would replace
//! one already there, nothing is written unless replacing was asked for. Then the writing:
//! folders made (never through a link already in the folder), each file inflated into a part
//! file beside its place — no further than the size it declares, its CRC-32 checked at its
//! end — fsynced, dated as the archive says, and only then given its name. A failure removes
//! the part file: no file is ever half-written under its name.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use kluis_core::{Error, Result};

use crate::archive::{Backup, EntryKind, READ_SIZE};

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
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
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

/// Restores the entries of `backup` that `options` asks for into the folder `to` (which must
/// exist); `progress` hears the bytes written so far and the total. See the module's text.
pub fn restore(
    backup: &mut Backup,
    to: &Path,
    options: &RestoreOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Restored> {
    if !std::fs::metadata(to).is_ok_and(|m| m.is_dir()) {
        return Err(Error::Config(format!(
            "The folder {} to restore into is not there.",
            to.display()
        )));
    }
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
    for planned in &plan {
        let written = match planned.kind {
            EntryKind::Folder => folder(to, &planned.parts).map(|_| 0),
            _ => file(backup, to, planned, options),
        };
        match written {
            Ok(bytes) => {
                match planned.kind {
                    EntryKind::Folder => restored.folders += 1,
                    _ => restored.files += 1,
                }
                restored.bytes += bytes;
                progress(restored.bytes, total);
            }
            Err(e) if options.keep_going => restored
                .not_restored
                .push((planned.name.clone(), e.to_string())),
            Err(e) => return Err(e),
        }
    }
    Ok(restored)
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
    // Two entries whose safe names meet (also in another case: Windows' folders do not tell
    // them apart) are not written over each other: the second is not restored.
    let mut seen = HashSet::new();
    for index in 0..backup.len() {
        let Some(entry) = backup.entry(index) else {
            let why = "its header cannot be read".to_string();
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
        if let Some(why) = entry.refused {
            restored.not_restored.push((entry.name, why));
            continue;
        }
        let path = entry.path.unwrap_or_default();
        if !seen.insert(path.to_lowercase()) && entry.kind == EntryKind::File {
            let why = "another entry is restored under the same name".to_string();
            restored.not_restored.push((entry.name, why));
            continue;
        }
        plan.push(Planned {
            index,
            name: entry.name,
            parts: path.split('/').map(str::to_string).collect(),
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
) -> Result<u64> {
    let (overwrite, scratch) = (options.overwrite, options.scratch);
    let (parents, name) = planned.parts.split_at(planned.parts.len() - 1);
    let parent = folder(to, parents)?;
    let destination = parent.join(&name[0]);
    let said = |e: std::io::Error| Error::io(format!("write {}", destination.display()), e);
    let mut part = tempfile::Builder::new()
        .prefix(".kluis-restore-")
        .suffix(".part")
        .tempfile_in(&parent)
        .map_err(said)?;
    let mut entry = backup
        .archive
        .by_index(planned.index)
        .map_err(|e| Error::BackupsDamaged(format!("{} cannot be read ({e}).", planned.name)))?;
    let mut buffer = vec![0u8; READ_SIZE];
    let mut written = 0u64;
    loop {
        // The zip reader checks the CRC-32 when the entry's end is reached.
        let n = match entry.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Error::BackupsDamaged(format!(
                    "{} does not read back ({e}); nothing was written under its name.",
                    planned.name
                )))
            }
        };
        written += n as u64;
        if written > planned.size {
            return Err(Error::BackupsDamaged(format!(
                "{} inflates past the {} bytes it declares (a zip bomb looks like this); it was not restored.",
                planned.name, planned.size
            )));
        }
        part.write_all(&buffer[..n]).map_err(said)?;
    }
    if written != planned.size {
        return Err(Error::BackupsDamaged(format!(
            "{} is {written} bytes, not the {} it declares; it was not restored.",
            planned.name, planned.size
        )));
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
    persisted.map_err(|e| said(e.error))?;
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
