//! A saved backup's file, opened and checked — what verification finds, and the one file a
//! retention rule may then delete. The check is its length and SHA-256 and, for a zip archive,
//! every entry read back through its CRC-32 within bounds (a zip bomb is reported, not
//! inflated).
//!
//! [`Examined::of`] opens the backup's folder once, and the file in it by name without
//! following a link or waiting on a FIFO, and checks through that descriptor that it is still
//! the backup saved (length, SHA-256, a zip archive's entries within verification's bounds).
//! [`Examined::delete`] then removes the name from that same opened folder (`unlinkat`) — and
//! only while the name still holds the file that was read. A folder on the recorded path that
//! is swapped for a link meanwhile (in a share others can write) cannot redirect the deletion
//! to another folder, and a file swapped in under the name is left alone.
//!
//! Windows has no `unlinkat`; there the recorded path is checked and removed by path, as
//! before (its folders' ACLs are the owner's, see kluis-private `files`).

use std::fs::File;
use std::io::{self, Read, Seek};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::clock::now_ms;
use crate::finding::Finding;
use crate::history::{Check, HistoryEntry};

/// Reads are this large: big enough that the system call per read costs nothing next to
/// hashing it, small enough to stay in the CPU's cache.
const READ_SIZE: usize = 256 * 1024;

pub(crate) type Problem = (Finding, String);

/// Whether the opened `file` (`length` bytes long) is the backup saved: `bytes` long with
/// SHA-256 `sha256`, and a zip archive in it reading back.
pub(crate) fn check_opened(
    mut file: File,
    length: u64,
    bytes: u64,
    sha256: &str,
) -> std::result::Result<(), Problem> {
    let unreadable = |e: io::Error| (Finding::Unreadable, format!("It could not be read: {e}."));
    if length != bytes {
        return Err((
            Finding::Changed,
            format!("It is {length} bytes; the backup saved was {bytes} bytes."),
        ));
    }
    let (digest, zip) = digest_of(&mut file).map_err(unreadable)?;
    if !digest.eq_ignore_ascii_case(sha256) {
        return Err((
            Finding::Changed,
            "Its content differs from the backup saved (another SHA-256).".into(),
        ));
    }
    if zip {
        file.rewind().map_err(unreadable)?;
        read_back_archive(&file)?;
    }
    Ok(())
}

/// The SHA-256 (hex) of the whole file, and whether it begins as a zip archive does.
fn digest_of(file: &mut File) -> io::Result<(String, bool)> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; READ_SIZE];
    let mut head = Vec::with_capacity(4);
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if head.len() < 4 {
            let take = (4 - head.len()).min(n);
            head.extend_from_slice(&buffer[..take]);
        }
        hasher.update(&buffer[..n]);
    }
    Ok((hex::encode(hasher.finalize()), head == b"PK\x03\x04"))
}

/// How many times its own size an archive may inflate to. Deflate cannot do better than
/// about 1,032 to 1, so no archive whose entries each have bytes of their own comes near
/// this; a zip bomb does, by letting many entries share one compressed stream.
pub const MOST_INFLATION: u64 = 1_100;

/// Reads every entry of the zip archive in `file` to its end, which checks its CRC-32. An
/// entry compressed in a way this build cannot read (anything but stored and deflate) is
/// skipped, not counted as damage: it may well be fine.
///
/// The work is bounded before it starts: an archive whose entries share bytes, or whose
/// entries say they inflate to more than [`MOST_INFLATION`] times its size, is reported as
/// suspicious and not read on (a 10 MB bomb would otherwise inflate for hours); and no entry
/// is inflated past the size it declares.
fn read_back_archive(file: &File) -> std::result::Result<(), Problem> {
    let damaged = |what: String| (Finding::ArchiveDamaged, what);
    let suspicious = |why: &str| {
        (Finding::ArchiveDamaged, format!("It is saved as received, but the zip archive in it is suspicious: {why}. It was not read on (a zip bomb looks like this); ask the service for a new backup and keep this file for inspection."))
    };
    let archive_bytes = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut archive = zip::ZipArchive::new(io::BufReader::with_capacity(READ_SIZE, file))
        .map_err(|e| damaged(format!("It is saved as received, but the zip archive in it cannot be opened ({e}); the service sent a damaged backup.")))?;
    match archive.has_overlapping_entries() {
        Ok(false) => {}
        Ok(true) => return Err(suspicious("entries share the same bytes")),
        Err(e) => return Err(damaged(format!("It is saved as received, but the zip archive's entries cannot be located ({e}); the service sent a damaged backup."))),
    }
    let mut declared: u128 = 0;
    for index in 0..archive.len() {
        declared += archive.by_index_raw(index).map(|e| e.size()).unwrap_or(0) as u128;
    }
    if declared > archive_bytes as u128 * MOST_INFLATION as u128 {
        return Err(suspicious(&format!(
            "its entries would inflate to {declared} bytes, more than {MOST_INFLATION} times its size"
        )));
    }
    let mut buffer = vec![0; READ_SIZE];
    for index in 0..archive.len() {
        let mut entry = match archive.by_index(index) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::UnsupportedArchive(_)) => continue,
            Err(e) => return Err(damaged(format!("It is saved as received, but entry {} of its zip archive cannot be read ({e}); the service sent a damaged backup.", index + 1))),
        };
        let (declared, mut inflated) = (entry.size(), 0u64);
        loop {
            match entry.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) if inflated + n as u64 > declared => {
                    return Err(suspicious(&format!(
                        "entry {} inflates past the {declared} bytes it declares",
                        index + 1
                    )))
                }
                Ok(n) => inflated += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(damaged(format!(
                        "It is saved as received, but entry {} of its zip archive ({}) does not read back ({e}); the service sent a damaged backup.",
                        index + 1,
                        shown_name(&entry.name().unwrap_or_default()),
                    )))
                }
            }
        }
    }
    Ok(())
}

/// An entry's name as it may be shown: the archive came from the network, so control
/// characters are dropped and the length is bounded.
fn shown_name(name: &str) -> String {
    let name: String = name.chars().filter(|c| !c.is_control()).take(120).collect();
    format!("\u{201c}{name}\u{201d}")
}

/// A backup's file, checked: what was found and, when it is the backup saved, how to delete it.
pub(crate) struct Examined {
    pub check: Check,
    opened: Option<Opened>,
}

impl Examined {
    /// Opens and checks `entry`'s file (see the module); a row without its size or digest
    /// cannot be checked.
    pub fn of(entry: &HistoryEntry) -> Examined {
        let outcome = match (&entry.path, entry.on_disk()) {
            (Some(path), Some((bytes, sha256))) => Opened::checked(Path::new(path), bytes, sha256),
            _ => Err((
                Finding::Unreadable,
                "The history has no size or SHA-256 for this backup.".into(),
            )),
        };
        let (finding, detail, opened) = match outcome {
            Ok(opened) => (Finding::Intact, None, Some(opened)),
            Err((finding, detail)) => (finding, Some(detail), None),
        };
        Examined {
            check: Check {
                at_ms: now_ms(),
                finding,
                detail,
            },
            opened,
        }
    }

    /// Whether the file was found as saved, so that [`Examined::delete`] may remove it.
    pub fn deletable(&self) -> bool {
        self.opened.is_some()
    }

    /// Deletes the file that was checked. An error when it was not found as saved, or its
    /// name no longer holds that file.
    pub fn delete(self) -> io::Result<()> {
        match self.opened {
            Some(opened) => opened.delete(),
            None => Err(io::Error::other("it is not the backup saved")),
        }
    }
}

fn unreadable(e: io::Error) -> Problem {
    match e.kind() {
        io::ErrorKind::NotFound => (
            Finding::Missing,
            "There is no file at the recorded place; it was moved or deleted.".into(),
        ),
        _ => (Finding::Unreadable, format!("It could not be read: {e}.")),
    }
}

fn not_a_file() -> Problem {
    (
        Finding::Unreadable,
        "Something other than a file is at the recorded place.".into(),
    )
}

#[cfg(unix)]
use unix::Opened;

#[cfg(unix)]
mod unix {
    use std::ffi::CString;
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use super::{check_opened, not_a_file, unreadable, Problem};

    /// The folder opened once, the file's name in it, and which file was read there.
    pub(crate) struct Opened {
        folder: OwnedFd,
        name: CString,
        file: (u64, u64),
    }

    impl Opened {
        pub fn checked(path: &Path, bytes: u64, sha256: &str) -> Result<Opened, Problem> {
            let (folder, name) = match (path.parent(), path.file_name()) {
                (Some(folder), Some(name)) => (folder, name),
                _ => return Err(not_a_file()),
            };
            let folder = match folder.as_os_str().is_empty() {
                true => Path::new("."),
                false => folder,
            };
            let folder = open(folder, libc::O_DIRECTORY | libc::O_RDONLY).map_err(unreadable)?;
            let name = CString::new(name.as_bytes()).map_err(|_| not_a_file())?;
            // No link followed, no wait on a FIFO; and a regular file only.
            let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK;
            let file = File::from(open_at(&folder, &name, flags).map_err(
                |e| match e.raw_os_error() {
                    Some(libc::ELOOP) => not_a_file(),
                    _ => unreadable(e),
                },
            )?);
            let metadata = file.metadata().map_err(unreadable)?;
            if !metadata.is_file() {
                return Err(not_a_file());
            }
            check_opened(file, metadata.len(), bytes, sha256)?;
            Ok(Opened {
                folder,
                name,
                file: (metadata.dev(), metadata.ino()),
            })
        }

        pub fn delete(self) -> io::Result<()> {
            // SAFETY: fstatat writes one stat into `now`, which is then read only on success.
            let mut now: libc::stat = unsafe { std::mem::zeroed() };
            let found = unsafe {
                libc::fstatat(
                    self.folder.as_raw_fd(),
                    self.name.as_ptr(),
                    &mut now,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            };
            if found != 0 {
                return Err(io::Error::last_os_error());
            }
            if (now.st_dev as u64, now.st_ino as u64) != self.file {
                return Err(io::Error::other(
                    "another file was put in its place after it was checked",
                ));
            }
            // SAFETY: a valid folder descriptor and a NUL-terminated name.
            match unsafe { libc::unlinkat(self.folder.as_raw_fd(), self.name.as_ptr(), 0) } {
                0 => Ok(()),
                _ => Err(io::Error::last_os_error()),
            }
        }
    }

    fn open(path: &Path, flags: i32) -> io::Result<OwnedFd> {
        let path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a NUL-terminated path; the descriptor returned is owned here.
        let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
        match fd {
            -1 => Err(io::Error::last_os_error()),
            fd => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        }
    }

    fn open_at(folder: &OwnedFd, name: &CString, flags: i32) -> io::Result<OwnedFd> {
        // SAFETY: a valid folder descriptor and a NUL-terminated name.
        let fd =
            unsafe { libc::openat(folder.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC) };
        match fd {
            -1 => Err(io::Error::last_os_error()),
            fd => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        }
    }
}

#[cfg(not(unix))]
struct Opened {
    path: std::path::PathBuf,
}

#[cfg(not(unix))]
impl Opened {
    fn checked(path: &Path, bytes: u64, sha256: &str) -> Result<Opened, Problem> {
        let metadata = std::fs::symlink_metadata(path).map_err(unreadable)?;
        if !metadata.is_file() {
            return Err(not_a_file());
        }
        let file = std::fs::File::open(path).map_err(unreadable)?;
        check_opened(file, metadata.len(), bytes, sha256)?;
        Ok(Opened {
            path: path.to_path_buf(),
        })
    }

    fn delete(self) -> io::Result<()> {
        std::fs::remove_file(&self.path)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::history::{saved_for_test as saved, History};

    /// The folder on the recorded path is swapped, after the check, for a link to another
    /// folder holding a file of that name (what someone who can write the share could do):
    /// the deletion still goes to the folder that was read — by path it went to the other.
    #[test]
    fn a_swapped_folder_cannot_redirect_the_deletion() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let backups = dir.path().join("backups");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&backups).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let entry = saved(&history, &backups.join("klant.zip"), b"backup");
        std::fs::write(elsewhere.join("klant.zip"), b"the user's own file").unwrap();

        let examined = Examined::of(&entry);
        assert_eq!(examined.check.finding, Finding::Intact);
        let moved = dir.path().join("moved");
        std::fs::rename(&backups, &moved).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &backups).unwrap();
        examined.delete().unwrap();

        assert_eq!(
            std::fs::read(elsewhere.join("klant.zip")).unwrap(),
            b"the user's own file",
            "the other folder's file is untouched"
        );
        assert!(
            !moved.join("klant.zip").exists(),
            "the file that was read is the one deleted"
        );
    }

    /// Another file put in under the name after the check is not deleted; nor is anything
    /// through a link at the recorded name, nor a FIFO (which is not waited on).
    #[test]
    fn only_the_file_that_was_read_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let path = dir.path().join("klant.zip");
        let entry = saved(&history, &path, b"backup");
        let examined = Examined::of(&entry);
        let other = dir.path().join("other");
        std::fs::write(&other, b"backup").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(examined.delete().is_err());
        assert!(path.exists(), "the file put in its place stays");

        let target = dir.path().join("target.zip");
        std::fs::write(&target, b"backup").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let through_link = Examined::of(&entry);
        assert_eq!(through_link.check.finding, Finding::Unreadable);
        assert!(through_link.delete().is_err());
        assert!(target.exists() && path.exists());

        std::fs::remove_file(&path).unwrap();
        let fifo = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(Examined::of(&entry).check.finding, Finding::Unreadable);
    }
}
