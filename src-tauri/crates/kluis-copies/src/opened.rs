//! [`Opened`]: a target made ready for work once per run — a folder's path, a bucket's client
//! (which loads the system's CAs), an SFTP server connected and logged in to — through which
//! copies are made, checked and deleted. Blocking calls, as the rest of this crate: a bucket's
//! and a server's requests run on the tokio runtime of the calling blocking thread.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use kluis_core::copies::{CopyRecord, MadeCopy};
use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::history::Check;
use kluis_core::verify::Finding;
use kluis_core::{Error, History, HistoryEntry, Result};

use crate::checked::found;
use crate::{folder, on_runtime, s3, sftp, CopyTarget, Place};

/// A target ready for work (see the module's text).
pub enum Opened {
    Folder { name: String, root: PathBuf },
    Bucket(s3::Bucket),
    Sftp(sftp::Server),
}

impl Opened {
    /// `target` made ready; uploads draw on `pace` when given. An SFTP server is connected to
    /// here: a server that is away, or shows another host key, is said now.
    pub fn open(target: &CopyTarget, pace: Option<&Arc<Bandwidth>>) -> Result<Opened> {
        let secret = target.secret.as_ref();
        match &target.place {
            Place::Folder { path } => Ok(Opened::Folder {
                name: target.name.clone(),
                root: PathBuf::from(path),
            }),
            Place::S3(place) => {
                let bucket = s3::Bucket::new(&target.name, place, secret)?;
                Ok(Opened::Bucket(bucket.paced(pace.cloned())))
            }
            Place::Sftp(place) => {
                let server = on_runtime(sftp::Server::connect(&target.name, place, secret))??;
                Ok(Opened::Sftp(server.paced(pace.cloned())))
            }
        }
    }

    /// Copies `entry` (target `target_id`), or finds the copy an earlier try made.
    pub fn copy(
        &self,
        history: &History,
        target_id: &str,
        entry: &HistoryEntry,
    ) -> Result<MadeCopy> {
        match self {
            Opened::Folder { name, root } => folder::copy(name, root, entry),
            Opened::Bucket(bucket) => {
                let (source, (bytes, sha256)) = folder::source_of(entry)?;
                let copying = bucket.copy(history, target_id, entry, &source, (bytes, &sha256));
                on_runtime(copying)?
            }
            Opened::Sftp(server) => on_runtime(server.copy(entry))?,
        }
    }

    /// What the copy `record` names is now (see each place's `check`).
    pub fn check(&self, record: &CopyRecord, read_back: bool) -> Check {
        let remote = match self {
            Opened::Folder { .. } => return folder::check(record, read_back),
            Opened::Bucket(bucket) => on_runtime(bucket.check(record, read_back)),
            Opened::Sftp(server) => on_runtime(server.check(record, read_back)),
        };
        remote.unwrap_or_else(|e| found(Finding::Unreadable, Some(e.to_string())))
    }

    /// Deletes the copy `record` names (a retention rule's, after its check); a folder's
    /// copies are deleted through their opened folder instead (kluis-core's `LocalFiles`).
    pub fn delete(&self, record: &CopyRecord) -> Result<()> {
        let location = record.location.as_deref().unwrap_or_default();
        match self {
            Opened::Folder { name, .. } => Err(Error::Io(format!(
                "Copy target \"{name}\": a folder's copies are deleted as files (an internal error)."
            ))),
            Opened::Bucket(bucket) => {
                on_runtime(bucket.delete(location, record.version.as_deref()))?
            }
            Opened::Sftp(server) => on_runtime(server.delete(location))?,
        }
    }

    /// The copy `record` names, read back in full into `into` (a local file the caller made
    /// owner-only): a restore test of the copy, its contents. Fails, naming the target, when
    /// what was read is not the copy as made (its recorded length and SHA-256).
    pub fn fetch(&self, record: &CopyRecord, into: &mut (dyn Write + Send)) -> Result<()> {
        let (location, bytes, sha256) = crate::checked::recorded(record).map_err(|check| {
            Error::Config(
                check
                    .detail
                    .unwrap_or_else(|| "The copy is not recorded.".into()),
            )
        })?;
        let not_there = |name: &str| {
            Error::Config(format!(
                "Copy target \"{name}\": {location} is not a place on it; the history's record of the copy does not fit the target."
            ))
        };
        let read = match self {
            Opened::Folder { name, .. } => {
                folder::read_back_into(std::path::Path::new(location), into).map_err(|e| {
                    Error::io(
                        format!("read the copy {location} on copy target \"{name}\""),
                        e,
                    )
                })?
            }
            Opened::Bucket(bucket) => {
                let key = bucket
                    .key_of(location)
                    .ok_or_else(|| not_there(&bucket.name))?;
                on_runtime(bucket.read_back_into(key, record.version.as_deref(), into))??
            }
            Opened::Sftp(server) => {
                let path = server
                    .path_of(location)
                    .ok_or_else(|| not_there(&server.name))?;
                on_runtime(server.read_back_into(path, into))??
            }
        };
        match read == (bytes, sha256.to_string()) {
            true => Ok(()),
            false => Err(Error::BackupsDamaged(format!(
                "The copy at {location} is not the backup as it was copied: {} bytes with another SHA-256. Verify the copies (kluis verify --read-back-copies).",
                read.0
            ))),
        }
    }

    /// "Test": whether the target can be written now.
    pub fn test(&self) -> Result<()> {
        match self {
            Opened::Folder { name, root } => folder::test(name, root),
            Opened::Bucket(bucket) => on_runtime(bucket.test())?,
            Opened::Sftp(server) => on_runtime(server.test())?,
        }
    }
}

/// `e` again, for each further copy the same failure to open a target stops: its code kept.
pub(crate) fn again(e: &Error) -> Error {
    match e {
        Error::AuthFailed(m) => Error::AuthFailed(m.clone()),
        Error::Network(m) => Error::Network(m.clone()),
        Error::Certificate { message, .. } => Error::Certificate {
            message: message.clone(),
            presented: None,
        },
        Error::BadResponse(m) => Error::BadResponse(m.clone()),
        Error::Config(m) => Error::Config(m.clone()),
        other => Error::Io(other.to_string()),
    }
}
