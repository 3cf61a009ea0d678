//! Copies to a folder on an SFTP server (a NAS, a server): each klant's copies in a folder of
//! their own, each copy sent to a part file (resumed after a break), fsynced, given its name
//! without replacing anything (SFTP's rename never replaces, by the protocol), and read back
//! in full and compared — the proof the history records. The server is known by its pinned
//! host key; one that shows another is refused before anything is sent.
//!
//! Parts: [`place`] (what the office set), [`connect`] (host key, login, session), `upload`
//! (the part file, resumable, a full disk said as such), this file (names, proof, check,
//! delete, test).

pub mod connect;
pub mod place;
mod upload;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kluis_core::copies::{CopyRecord, MadeCopy};
use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::history::Check;
use kluis_core::verify::Finding;
use kluis_core::{Error, HistoryEntry, Result, Secret};
use russh_sftp::client::error::Error as SftpError;
use russh_sftp::client::SftpSession;
use russh_sftp::protocol::{OpenFlags, StatusCode};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub use connect::{host_key, HostKey};
pub use place::{checked_host, SftpLogin, SftpPlace, SSH_PORT};

use crate::checked::found;
use crate::folder::{file_name_of, klant_folder_name, source_of};

/// A part file a killed copy left counts as left once untouched this long (as in a folder).
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// An SFTP server logged in to, for one target.
pub struct Server {
    pub(crate) name: String,
    place: SftpPlace,
    /// The copies' folder as the server names it in full (its home folder resolved).
    pub(crate) root: String,
    pub(crate) connected: connect::Connected,
    pace: Option<Arc<Bandwidth>>,
}

impl Server {
    /// Connects to `place` (target `name`): the host key checked, logged in with `secret`, and
    /// its folder found (missing: refused, as a share that is not mounted).
    pub async fn connect(name: &str, place: &SftpPlace, secret: Option<&Secret>) -> Result<Server> {
        let connected = connect::connect(name, place, secret).await?;
        let mut server = Server {
            name: name.to_string(),
            place: place.clone(),
            root: String::new(),
            connected,
            pace: None,
        };
        let sftp = &server.connected.sftp;
        let root = match sftp.canonicalize(place.path.as_str()).await {
            Ok(root) => root,
            Err(e) if is_status(&e, StatusCode::NoSuchFile) => return Err(server.no_folder()),
            Err(e) => return Err(server.said(&e, &format!("find the folder {}", place.path))),
        };
        match sftp.metadata(root.as_str()).await {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(server.no_folder()),
            Err(e) if is_status(&e, StatusCode::NoSuchFile) => return Err(server.no_folder()),
            Err(e) => return Err(server.said(&e, &format!("look at the folder {root}"))),
        }
        server.root = root;
        Ok(server)
    }

    /// The same server, its uploads drawing on `pace` (the process's upload budget).
    pub fn paced(mut self, pace: Option<Arc<Bandwidth>>) -> Server {
        self.pace = pace;
        self
    }

    /// Copies `entry`'s saved file into the klant's folder on the server, or finds the copy an
    /// earlier try made there.
    pub async fn copy(&self, entry: &HistoryEntry) -> Result<MadeCopy> {
        let job = crate::job_of(entry)?;
        let (source, (bytes, sha256)) = source_of(entry)?;
        let expected = (bytes, sha256.as_str());
        let folder = format!(
            "{}/{}",
            self.root.trim_end_matches('/'),
            klant_folder_name(&source)
        );
        let file_name = file_name_of(&source)?;
        let sftp = &self.connected.sftp;
        if !matches!(sftp.metadata(folder.as_str()).await, Ok(m) if m.is_dir()) {
            if let Err(e) = sftp.create_dir(folder.as_str()).await {
                return Err(self.said(&e, &format!("create the folder {folder}")));
            }
        }
        self.remove_stale_parts(&folder, job).await;
        // The first free name — or one that holds this very copy (an earlier try made it and
        // stopped before the history heard).
        let mut free = None;
        for n in 0..1000 {
            let path = format!(
                "{folder}/{}",
                kluis_core::download::destination::numbered(&file_name, n)
            );
            match sftp.metadata(path.as_str()).await {
                Err(e) if is_status(&e, StatusCode::NoSuchFile) => {
                    free = Some(path);
                    break;
                }
                Err(e) => return Err(self.said(&e, &format!("look at {path}"))),
                Ok(meta) if meta.file_type().is_file() && meta.len() == bytes => {
                    if self.read_back(&path).await? == (bytes, sha256.clone()) {
                        return Ok(self.made(&path, expected));
                    }
                }
                Ok(_) => {}
            }
        }
        let Some(path) = free else {
            return Err(Error::Io(format!(
                "Copy target \"{}\": a thousand files named like {file_name} are already in {folder}; clean it up.",
                self.name
            )));
        };
        let part = format!("{folder}/.kluis-{}.part", job.simple());
        self.send(&folder, &part, &source, expected).await?;
        // SFTP's rename fails when the new name is taken (draft-ietf-secsh-filexfer-02 §6.5):
        // a file that appeared there meanwhile is never replaced.
        if let Err(e) = sftp.rename(part.as_str(), path.as_str()).await {
            return Err(self.said(&e, &format!("name the copy {path} (the part is kept)")));
        }
        match self.read_back(&path).await? {
            found if found == (bytes, sha256.clone()) => Ok(self.made(&path, expected)),
            _ => {
                // Written by this try and recorded nowhere: ours to remove.
                let _ = sftp.remove_file(path.as_str()).await;
                Err(Error::Io(format!(
                    "Copy target \"{}\": the copy read back from {path} differs from the backup; it was removed and is tried again later. Check the server's disk.",
                    self.name
                )))
            }
        }
    }

    fn made(&self, path: &str, expected: (u64, &str)) -> MadeCopy {
        MadeCopy {
            location: self.location(path),
            bytes: expected.0,
            sha256: expected.1.to_string(),
            locked_until_ms: None,
            version: None,
        }
    }

    /// Where a copy is, as the history records it: `sftp://host[:port]/path`.
    pub fn location(&self, path: &str) -> String {
        match self.place.port {
            SSH_PORT => format!("sftp://{}{path}", self.place.host),
            port => format!("sftp://{}:{port}{path}", self.place.host),
        }
    }

    /// The path on this server of `location`, when it is on this server.
    pub(crate) fn path_of<'a>(&self, location: &'a str) -> Option<&'a str> {
        let rest = location
            .strip_prefix("sftp://")?
            .strip_prefix(self.place.host.as_str())?;
        let rest = match self.place.port {
            SSH_PORT => rest,
            port => rest.strip_prefix(&format!(":{port}"))?,
        };
        rest.starts_with('/').then_some(rest)
    }

    /// The length and SHA-256 of the file at `path`, read back in full.
    async fn read_back(&self, path: &str) -> Result<(u64, String)> {
        self.read_back_into(path, &mut std::io::sink()).await
    }

    /// The length and SHA-256 of the file at `path`, read back in full into `sink`.
    pub(crate) async fn read_back_into(
        &self,
        path: &str,
        sink: &mut (dyn Write + Send),
    ) -> Result<(u64, String)> {
        let mut file = (self.connected.sftp.open(path).await)
            .map_err(|e| self.said(&e, &format!("read {path} back")))?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 256 * 1024];
        let mut bytes = 0u64;
        loop {
            let n = file.read(&mut buffer).await.map_err(|e| self.lost(&e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            sink.write_all(&buffer[..n])
                .map_err(|e| Error::io("write the copy read from the server", e))?;
            bytes += n as u64;
        }
        Ok((bytes, hex::encode(hasher.finalize())))
    }

    /// What the copy `record` names is now: missing, of another length, or (with `read_back`,
    /// read in full) another SHA-256 — or as made.
    pub async fn check(&self, record: &CopyRecord, read_back: bool) -> Check {
        let (location, bytes, sha256) = match crate::checked::recorded(record) {
            Ok(recorded) => recorded,
            Err(check) => return check,
        };
        let Some(path) = self.path_of(location) else {
            return found(
                Finding::Unreadable,
                Some(format!("{location} is not on {}.", self.place.host)),
            );
        };
        match self.connected.sftp.metadata(path).await {
            Err(e) if is_status(&e, StatusCode::NoSuchFile) => {
                return found(Finding::Missing, Some(format!("No file at {location}.")));
            }
            Err(e) => {
                return found(
                    Finding::Unreadable,
                    Some(self.said(&e, "look at the copy").to_string()),
                )
            }
            Ok(meta) if !meta.file_type().is_file() || meta.len() != bytes => {
                let detail = format!("{location} is {} bytes, not {bytes}.", meta.len());
                return found(Finding::Changed, Some(detail));
            }
            Ok(_) => {}
        }
        if !read_back {
            return found(Finding::Intact, None);
        }
        match self.read_back(path).await {
            Ok((_, digest)) if digest == sha256 => found(Finding::Intact, None),
            Ok(_) => found(
                Finding::Changed,
                Some(format!("{location}: its SHA-256 is not the backup's.")),
            ),
            Err(e) => found(Finding::Unreadable, Some(e.to_string())),
        }
    }

    /// Deletes the copy at `location` (a retention rule's, after its check).
    pub async fn delete(&self, location: &str) -> Result<()> {
        let path = self.path_of(location).ok_or_else(|| {
            Error::Config(format!(
                "Copy target \"{}\": {location} is not on this server.",
                self.name
            ))
        })?;
        (self.connected.sftp.remove_file(path).await)
            .map_err(|e| self.said(&e, &format!("delete {path}")))
    }

    /// "Test": a small file written in the folder, read back and removed.
    pub async fn test(&self) -> Result<()> {
        let probe = format!(
            "{}/.kluis-test-{}",
            self.root.trim_end_matches('/'),
            uuid::Uuid::new_v4().simple()
        );
        let text = b"Kluis checks it can write here; this file is removed at once.";
        let sftp = &self.connected.sftp;
        let read = match write_new(sftp, &probe, text).await {
            Ok(()) => sftp.read(probe.as_str()).await,
            Err(e) => Err(e),
        };
        let _ = sftp.remove_file(probe.as_str()).await;
        match read {
            Ok(read) if read == text => Ok(()),
            Ok(_) => Err(Error::Io(format!(
                "Copy target \"{}\": a test file read back from {} differs from what was written.",
                self.name, self.root
            ))),
            Err(e) => Err(self.said(&e, &format!("write a test file in {}", self.root))),
        }
    }

    /// Removes from `folder` the part files killed copies left (see [`STALE_AFTER`]; the
    /// part of `job` is this copy's own, resumed): only Kluis's names, never a link.
    async fn remove_stale_parts(&self, folder: &str, job: uuid::Uuid) {
        let Ok(entries) = self.connected.sftp.read_dir(folder).await else {
            return;
        };
        let own = format!(".kluis-{}.part", job.simple());
        let now = SystemTime::now();
        for entry in entries {
            let name = entry.file_name();
            let meta = entry.metadata();
            let stale = (meta.modified().ok())
                .and_then(|m| now.duration_since(m).ok())
                .is_some_and(|age| age >= STALE_AFTER);
            let ours = kluis_core::download::is_part_file_name(&name) && name != own;
            if ours && stale && meta.file_type().is_file() {
                let _ = self
                    .connected
                    .sftp
                    .remove_file(format!("{folder}/{name}"))
                    .await;
            }
        }
    }

    fn no_folder(&self) -> Error {
        Error::Config(format!(
            "Copy target \"{}\": the folder {} is not on the SFTP server {} (or is not a folder). Create it there, or add the target again with the right folder. The backup is kept on this computer; the copy is made later.",
            self.name, self.place.path, self.place.host
        ))
    }

    /// An SFTP failure while doing `what`, in words.
    pub(crate) fn said(&self, e: &SftpError, what: &str) -> Error {
        match e {
            SftpError::Status(status) => {
                let why = match status.status_code {
                    StatusCode::PermissionDenied => {
                        format!("user {} may not do that there", self.place.user)
                    }
                    StatusCode::NoSuchFile => "it is not there".to_string(),
                    _ => format!("the server answered: {}", status.error_message),
                };
                Error::Io(format!(
                    "Copy target \"{}\": could not {what} on the SFTP server {} ({why}).",
                    self.name, self.place.host
                ))
            }
            other => connect::lost(&self.name, &self.place.host, &other.to_string()),
        }
    }

    pub(crate) fn lost(&self, e: &std::io::Error) -> Error {
        connect::lost(&self.name, &self.place.host, &e.to_string())
    }
}

/// A new file at `path` holding `text` (never over one that is there).
async fn write_new(sftp: &SftpSession, path: &str, text: &[u8]) -> Result<(), SftpError> {
    let flags = OpenFlags::CREATE | OpenFlags::EXCLUDE | OpenFlags::WRITE;
    let mut file = sftp.open_with_flags(path, flags).await?;
    file.write_all(text).await?;
    file.shutdown().await?;
    Ok(())
}

pub(crate) fn is_status(e: &SftpError, code: StatusCode) -> bool {
    matches!(e, SftpError::Status(status) if status.status_code == code)
}

/// `bytes` for a message: "3.0 MiB".
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
