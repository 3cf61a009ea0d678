//! Copies to a folder (a mounted share, a USB disk, a UNC path): each klant's copies in a
//! folder of their own (named as the klant's folder on this computer), each copy written to a
//! part file, checked as it is written, fsynced, given its name without replacing anything,
//! and then read back from the target and checked again — the proof the history records.
//!
//! The target's own folder must be there, and be the target: when a share is not mounted, its
//! mount point may be missing or an empty folder on this disk, and a copy must not land on
//! the disk it protects against. So a folder is marked as Kluis's target ([`MARKER`]) when it
//! is tested (as it is when added); a folder without the mark is taken for a share not mounted
//! (or a disk not plugged in, or another disk in its place) and refused, saying so — until
//! Test marks it. Not even a folder that holds something is marked unasked: a mount point can
//! hold files of its own, and a target used before the mark existed needs one Test.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use kluis_core::copies::{CopyRecord, MadeCopy};
use kluis_core::download::destination::copy_verified;
use kluis_core::history::Check;
use kluis_core::verify::Finding;
use kluis_core::{Error, HistoryEntry, Result};
use sha2::{Digest, Sha256};

use crate::checked::{found, recorded};

/// Copies `entry`'s saved file into `root` (target `name`), or finds the copy an earlier try
/// made; blocking.
pub fn copy(name: &str, root: &Path, entry: &HistoryEntry) -> Result<MadeCopy> {
    let (source, expected) = source_of(entry)?;
    ready(name, root)?;
    let klant_folder = root.join(klant_folder_name(&source));
    kluis_private::files::create_dir_all(&klant_folder).map_err(|e| {
        Error::io(
            format!(
                "create {} on copy target \"{name}\"",
                klant_folder.display()
            ),
            e,
        )
    })?;
    remove_stale_parts(&klant_folder);
    let file_name = file_name_of(&source)?;
    // An earlier try may have put the copy in place and stopped before the history heard.
    let earlier = klant_folder.join(&file_name);
    let location = match read_back_file(&earlier) {
        Ok(found) if found == (expected.0, expected.1.clone()) => earlier,
        _ => copy_verified(
            &source,
            (expected.0, &expected.1),
            &klant_folder,
            &file_name,
        )
        .map_err(|e| named(name, e))?,
    };
    match read_back_file(&location) {
        Ok(found) if found == (expected.0, expected.1.clone()) => Ok(MadeCopy {
            location: location.to_string_lossy().into_owned(),
            bytes: expected.0,
            sha256: expected.1,
            locked_until_ms: None,
            version: None,
        }),
        Ok(_) => {
            // Written by this try and recorded nowhere: ours to remove.
            let _ = std::fs::remove_file(&location);
            Err(Error::Io(format!(
                "Copy target \"{name}\": the copy read back from {} differs from the backup; it was removed. Check the disk or share.",
                location.display()
            )))
        }
        Err(e) => Err(Error::io(
            format!(
                "read the copy back from {} on copy target \"{name}\"",
                location.display()
            ),
            e,
        )),
    }
}

/// What the copy `record` names is now: missing, of another length, or (with `read_back`,
/// read in full) another SHA-256 — or as made. Blocking.
pub fn check(record: &CopyRecord, read_back: bool) -> Check {
    let (path, bytes, sha256) = match recorded(record) {
        Ok((location, bytes, sha256)) => (Path::new(location), bytes, sha256),
        Err(check) => return check,
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return found(
                Finding::Missing,
                Some(format!("No file at {}.", path.display())),
            );
        }
        Err(e) => {
            return found(
                Finding::Unreadable,
                Some(format!("{}: {e}", path.display())),
            )
        }
    };
    if !meta.is_file() || meta.len() != bytes {
        let detail = format!("{} is {} bytes, not {bytes}.", path.display(), meta.len());
        return found(Finding::Changed, Some(detail));
    }
    if !read_back {
        return found(Finding::Intact, None);
    }
    match read_back_file(path) {
        Ok((_, digest)) if digest == sha256 => found(Finding::Intact, None),
        Ok(_) => found(
            Finding::Changed,
            Some(format!(
                "{}: its SHA-256 is not the backup's.",
                path.display()
            )),
        ),
        Err(e) => found(
            Finding::Unreadable,
            Some(format!("{}: {e}", path.display())),
        ),
    }
}

/// A part file a copy left when it was killed (a crash, a kill -9, a share gone mid-write)
/// counts as left once nothing has written it for this long: a copy under way writes its part
/// file all the time.
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// Removes from `folder` the part files copies left behind (see [`STALE_AFTER`]): only files
/// named as Kluis names its own (`.kluis-<32 hex>.part`), never a link, never anything else.
/// How many it removed; a folder it cannot read is left alone (the copy will say why).
pub fn remove_stale_parts(folder: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let ours =
            (entry.file_name().to_str()).is_some_and(kluis_core::download::is_part_file_name);
        // `DirEntry::metadata` does not follow a link: a link named like a part is left.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok());
        let stale = age.is_some_and(|age| age >= STALE_AFTER);
        if ours && meta.is_file() && stale && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// "Test": a small file written in `root`, read back and removed.
pub fn test(name: &str, root: &Path) -> Result<()> {
    usable_root(name, root)?;
    if !std::fs::metadata(root).is_ok_and(|m| m.is_dir()) {
        return Err(Error::Config(format!(
            "Copy target \"{name}\": the folder {} is not there (is the share mounted, the disk plugged in?).",
            root.display()
        )));
    }
    let probe = root.join(format!(".kluis-test-{}", uuid::Uuid::new_v4().simple()));
    let text = b"Kluis checks it can write here; this file is removed at once.";
    let outcome = kluis_private::files::write_atomic(&probe, text)
        .and_then(|()| std::fs::read(&probe))
        .map_err(|e| {
            Error::io(
                format!(
                    "write a test file in {} (copy target \"{name}\")",
                    root.display()
                ),
                e,
            )
        });
    let _ = std::fs::remove_file(&probe);
    match outcome? == text {
        // The folder is the target, as the person who tested it says: marked.
        true => mark(root).map_err(|e| {
            Error::io(
                format!("mark {} as copy target \"{name}\"", root.display()),
                e,
            )
        }),
        false => Err(Error::Io(format!(
            "Copy target \"{name}\": a test file read back from {} differs from what was written.",
            root.display()
        ))),
    }
}

/// The file that marks a folder as Kluis's copy target (see the module's text).
pub const MARKER: &str = kluis_core::copies::TARGET_MARK;

/// Marks `root` as a copy target's folder.
fn mark(root: &Path) -> std::io::Result<()> {
    let text = b"This folder holds Kluis's copies (a copy target). Kluis copies here only while this file is here (Test in Kluis writes it): remove the target in Kluis, not this file.\n";
    kluis_private::files::write_atomic(&root.join(MARKER), text)
}

/// Why target `name`'s folder `root` cannot take a copy now — it is not there, or it is a
/// folder without the target's mark: a share not mounted, a disk not plugged in — or none.
pub(crate) fn away(name: &str, root: &Path) -> Option<Error> {
    let there = std::fs::metadata(root).is_ok_and(|m| m.is_dir());
    if !there {
        return Some(Error::Config(format!(
            "Copy target \"{name}\": the folder {} is not there (is the share mounted, the disk plugged in?). The backup is kept on this computer; the copy is made later.",
            root.display()
        )));
    }
    match root.join(MARKER).is_file() {
        true => None,
        false => Some(Error::Config(format!(
            "Copy target \"{name}\": the folder {} is not marked as Kluis's copy target (is the share mounted, the disk plugged in?). If it is the right folder, Test the target (Settings, or kluis copy-target test) and the copy is made after the next backup.",
            root.display()
        ))),
    }
}

/// Whether target `name`'s folder `root` may be written now — a full path, there, and marked
/// as the target — or why not: what every write to a folder target asks first (a copy, and
/// recovery's objects beside the copies).
pub(crate) fn ready(name: &str, root: &Path) -> Result<()> {
    usable_root(name, root)?;
    away(name, root).map_or(Ok(()), Err)
}

/// Refused unless `root` is a full path: one edited by hand into the settings as a relative
/// path would put copies wherever Kluis happens to run.
fn usable_root(name: &str, root: &Path) -> Result<()> {
    match root.is_absolute() {
        true => Ok(()),
        false => Err(Error::Config(format!(
            "Copy target \"{name}\": {} is not a full path; add the target again with its full path.",
            root.display()
        ))),
    }
}

/// The saved file of `entry` and its length and SHA-256 on disk, as the history recorded them.
pub(crate) fn source_of(entry: &HistoryEntry) -> Result<(PathBuf, (u64, String))> {
    match (&entry.path, entry.on_disk()) {
        (Some(path), Some((bytes, sha256))) if entry.removed.is_none() => {
            Ok((PathBuf::from(path), (bytes, sha256.to_string())))
        }
        _ => Err(Error::Io(
            "This backup has no saved file to copy (it failed, or a retention rule removed it)."
                .into(),
        )),
    }
}

/// The name of the saved file `source`.
pub(crate) fn file_name_of(source: &Path) -> Result<String> {
    (source.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Error::Config(format!("{} does not name a file.", source.display())))
}

/// The folder a klant's copies go in: the one its backup is in on this computer.
pub(crate) fn klant_folder_name(source: &Path) -> String {
    (source.parent().and_then(Path::file_name))
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "backups".into())
}

/// The length and SHA-256 of the file at `path`, read from the start.
fn read_back_file(path: &Path) -> std::io::Result<(u64, String)> {
    read_back_into(path, &mut std::io::sink())
}

/// The length and SHA-256 of the file at `path`, read from the start and written to `sink`.
pub(crate) fn read_back_into(path: &Path, sink: &mut dyn Write) -> std::io::Result<(u64, String)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        sink.write_all(&buffer[..n])?;
        bytes += n as u64;
    }
    Ok((bytes, hex::encode(hasher.finalize())))
}

/// `e` with the target named.
fn named(name: &str, e: Error) -> Error {
    match e {
        Error::Io(message) => Error::Io(format!("Copy target \"{name}\": {message}")),
        other => other,
    }
}
