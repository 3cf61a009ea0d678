//! [`Backup`]: a saved backup's zip archive, opened and bounded before anything is inflated,
//! and its entries as the office sees them ([`Entry`]). Names are read as the archive says
//! (UTF-8 when its flag is set, else the old DOS code page 437 every zip tool falls back to).
//!
//! An encrypted backup (age) is read through a decrypting reader that seeks: the zip
//! directory at its end, then each entry, are decrypted as they are read — the plain archive
//! is never written to disk.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use kluis_core::encryption::DecryptKey;
use kluis_core::{Error, Result};
use serde::Serialize;

use crate::entry_path;

/// Reads are this large (as verification's).
pub(crate) const READ_SIZE: usize = 256 * 1024;

/// What the archive is read from: the file, or its decryption.
pub(crate) trait Source: Read + Seek + Send {}
impl<T: Read + Seek + Send> Source for T {}

/// A buffered reader that keeps its buffer when the zip reader seeks within it: the zip
/// reader seeks to each entry's header, which is mostly right where the entry before it ended
/// — in the buffer. A plain `BufReader` drops its buffer on every seek (and reads again what
/// it held: 17 % of a restore test of 4,000 entries; see tests/bench/restore-vs-unzip.sh).
struct Buffered<R> {
    inner: BufReader<R>,
    /// Where the reader is in the stream (the buffer's unread part starts here).
    at: u64,
}

impl<R: Read + Seek> Buffered<R> {
    fn new(inner: R) -> Buffered<R> {
        Buffered {
            inner: BufReader::with_capacity(READ_SIZE, inner),
            at: 0,
        }
    }
}

impl<R: Read> Read for Buffered<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl<R: Read + Seek> Seek for Buffered<R> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            std::io::SeekFrom::Start(at) => at,
            std::io::SeekFrom::Current(by) => self.at.checked_add_signed(by).ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
            })?,
            std::io::SeekFrom::End(_) => {
                self.at = self.inner.seek(to)?;
                return Ok(self.at);
            }
        };
        // Within the buffer it only moves in it; elsewhere it seeks the reader under it.
        let by = i64::try_from(target as i128 - self.at as i128)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek too far"))?;
        self.inner.seek_relative(by)?;
        self.at = target;
        Ok(target)
    }
}

/// A backup's archive, open (see the module's text).
pub struct Backup {
    pub(crate) archive: zip::ZipArchive<Box<dyn Source>>,
    path: PathBuf,
}

/// What an entry is.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Folder,
    /// A symbolic link: listed, never restored (it could point anywhere).
    Link,
}

/// One entry of a backup, as listed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Its name in the archive, as it may be shown (no control characters).
    pub name: String,
    /// Where it is restored, relative to the folder chosen (`/` between folders) — or none,
    /// when it cannot be (see `refused`).
    pub path: Option<String>,
    /// Why it is not restored, when it is not.
    pub refused: Option<String>,
    pub kind: EntryKind,
    /// Its size inflated, in bytes.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub size: u64,
    /// Its size in the archive.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub compressed: u64,
    /// When it was last changed, as the archive records it (a local time without a zone:
    /// `2025-03-01 14:22:05`).
    pub modified: Option<String>,
    /// Whether it has a password of its own (which Kluis cannot read).
    pub encrypted: bool,
}

impl Backup {
    /// Opens the backup at `path`: a zip archive whose entries do not share bytes and do not
    /// inflate past [`kluis_core::MOST_INFLATION`] times its size. An encrypted one (an age
    /// file) needs `key`.
    pub fn open(path: &Path, key: Option<&DecryptKey>) -> Result<Backup> {
        let file = File::open(path)
            .map_err(|e| Error::io(format!("open the backup {}", path.display()), e))?;
        let shown = path.display();
        let encrypted = kluis_core::encryption::looks_encrypted(path);
        let mut source: Box<dyn Source> = match (encrypted, key) {
            (false, _) => Box::new(Buffered::new(file)),
            (true, Some(key)) => {
                let plain = kluis_core::encryption::decrypting(BufReader::new(file), key)?;
                // Decrypted ahead on the second core while this one inflates.
                let ahead = crate::prefetch::Prefetched::new(plain).map_err(|e| {
                    Error::BackupsDamaged(format!(
                        "{shown} is encrypted but damaged or cut short ({e}): it does not decrypt to its end."
                    ))
                })?;
                Box::new(ahead)
            }
            (true, None) => {
                return Err(Error::Config(format!(
                "{shown} is encrypted: give what opens it (its passphrase, or the identity file)."
            )))
            }
        };
        let bytes = (source.seek(std::io::SeekFrom::End(0)))
            .and_then(|end| source.rewind().map(|()| end))
            .map_err(|e| {
                Error::BackupsDamaged(format!(
                    "{shown} cannot be read to its end ({e}): it is cut short or damaged."
                ))
            })?;
        let archive = zip::ZipArchive::new(source).map_err(|e| {
            Error::BackupsDamaged(format!(
                "{shown} cannot be read as a zip archive ({e}): it is cut short, damaged, or not a backup of the service. Run `kluis verify` on it."
            ))
        })?;
        let mut backup = Backup {
            archive,
            path: path.to_path_buf(),
        };
        // From the central directory alone: reading each entry's local header to check it
        // would read (and for an encrypted backup, decrypt) the whole archive once more.
        if backup.entries_overlap() {
            return Err(backup.bomb("entries share the same bytes"));
        }
        let declared: u128 = (backup.entries().iter()).map(|e| e.size as u128).sum();
        if declared > bytes as u128 * kluis_core::MOST_INFLATION as u128 {
            let why = format!(
                "its entries would inflate to {declared} bytes, more than {} times its size",
                kluis_core::MOST_INFLATION
            );
            return Err(backup.bomb(&why));
        }
        Ok(backup)
    }

    /// Every entry, in the archive's order.
    pub fn entries(&mut self) -> Vec<Entry> {
        (0..self.archive.len())
            .filter_map(|index| self.entry(index))
            .collect()
    }

    /// Whether two entries' bytes overlap, or one runs into the central directory (how a zip
    /// bomb lets many entries share one compressed stream): each entry's span from its local
    /// header's start over the header's fixed part, its name and its compressed data.
    fn entries_overlap(&self) -> bool {
        let mut spans: Vec<(u64, u64)> = (0..self.archive.len())
            .filter_map(|index| self.archive.by_index_data(index).ok())
            .map(|e| {
                let start = e.header_start();
                let header = 30 + e.name_raw().len() as u64;
                (
                    start,
                    start
                        .saturating_add(header)
                        .saturating_add(e.compressed_size()),
                )
            })
            .collect();
        spans.sort_unstable();
        let directory = self.archive.central_directory_start();
        spans.iter().any(|(_, end)| *end > directory)
            || spans.windows(2).any(|pair| pair[0].1 > pair[1].0)
    }

    /// Entry `index`, as listed (none when its header cannot be read): from the central
    /// directory, without reading the archive itself.
    pub(crate) fn entry(&mut self, index: usize) -> Option<Entry> {
        let raw = self.archive.by_index_data(index).ok()?;
        let name = raw.name().map(|n| n.into_owned()).unwrap_or_default();
        let kind = match (raw.is_symlink(), raw.is_dir()) {
            (true, _) => EntryKind::Link,
            (false, true) => EntryKind::Folder,
            (false, false) => EntryKind::File,
        };
        let (path, refused) = match (kind, entry_path::safe_path(&name)) {
            (EntryKind::Link, _) => (
                None,
                Some("a link: not restored (it could point anywhere)".into()),
            ),
            (_, Ok(path)) if raw.encrypted() => (
                Some(path),
                Some("it has a password of its own, which Kluis cannot read".into()),
            ),
            (_, Ok(path)) => (Some(path), None),
            (_, Err(why)) => (None, Some(why.reason().to_string())),
        };
        let modified = raw.last_modified().map(|t| {
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                t.year(),
                t.month(),
                t.day(),
                t.hour(),
                t.minute(),
                t.second()
            )
        });
        Some(Entry {
            name: name.chars().filter(|c| !c.is_control()).collect(),
            path,
            refused,
            kind,
            size: raw.size(),
            compressed: raw.compressed_size(),
            modified,
            encrypted: raw.encrypted(),
        })
    }

    /// How many entries the archive has.
    pub fn len(&self) -> usize {
        self.archive.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.archive.is_empty()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn bomb(&self, why: &str) -> Error {
        Error::BackupsDamaged(format!(
            "{} is suspicious: {why}. Nothing was restored from it (a zip bomb looks like this); keep the file for inspection and ask the service for a new backup.",
            self.path.display()
        ))
    }
}
