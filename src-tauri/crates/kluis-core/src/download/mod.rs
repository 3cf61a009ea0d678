//! Downloading the backup file: a plain GET of `data.url` (never with the service token),
//! streamed to a hidden part file beside the destination while SHA-256 is computed, resumed
//! with `Range` + `If-Range` after a cut connection, checked (length; digest when the server
//! sends one), fsynced and linked into place under a name that overwrites nothing.
//!
//! - [`writer`]: the thread that writes and hashes (constant memory); [`sealed`], the threads
//!   that encrypt and write when the profile asks for encryption; [`bandwidth`], the shared
//!   speed limit.
//! - [`destination`]: `--out` as folder or file, and the no-overwrite final step.
//! - [`turns`]: how many of a batch's backups download at once; [`address`]: the file's URL, and
//!   the one fresh address a job may ask for when the file host refuses it.
//! - `headers`: what the file host's headers say (resume validator, range, declared digest);
//!   `part`: the part file an earlier run left; `progress`: progress told, with its rate.
//! - this file: the HTTP side — status handling, resume, retries, progress.

pub mod address;
pub mod bandwidth;
pub mod destination;
mod disk;
mod headers;
mod part;
mod progress;
pub mod room;
mod sealed;
pub mod turns;
mod writer;
pub use writer::is_part_file_name;

use std::time::Duration;

use reqwest::header;
use reqwest::StatusCode;
use url::Url;

pub use address::Address;
pub use destination::Destination;
use headers::names_same_file;
pub(crate) use headers::{declared_sha256, header_text, parse_content_range, validator};
pub(crate) use part::ENCRYPTED_PART;
use part::{continue_part, is_our_part, remove_part};
use progress::Reporter;
pub use turns::{BatchLimits, DownloadTurn, DownloadTurns};
use writer::Writer;

use crate::config::ServiceConfig;
use crate::error::{Error, Peer, Result};
use crate::filename;
use crate::http::{download_client, RetryPolicy};

/// Limits of one download.
#[derive(Clone)]
pub struct DownloadOptions {
    /// Refuse files larger than this many bytes.
    pub max_bytes: Option<u64>,
    /// Connections tried in all (the first included) before giving up.
    pub retry: RetryPolicy,
    /// The speed limit this download shares with every other of the process, if any.
    pub bandwidth: Option<std::sync::Arc<bandwidth::Bandwidth>>,
    /// Encrypt the file as it arrives (the profile's choice), if set.
    pub encryption: Option<std::sync::Arc<crate::encryption::Encryption>>,
    /// No backup is asked for while the destination's disk has less free than this
    /// ([`room`]).
    pub min_free_bytes: u64,
}

impl std::fmt::Debug for DownloadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DownloadOptions")
            .field("max_bytes", &self.max_bytes)
            .field("retry", &self.retry)
            .field("bandwidth", &self.bandwidth.as_ref().map(|b| b.limit()))
            .field("encrypted", &self.encryption.is_some())
            .field("min_free_bytes", &self.min_free_bytes)
            .finish()
    }
}

impl Default for DownloadOptions {
    fn default() -> Self {
        Self {
            max_bytes: None,
            retry: RetryPolicy {
                attempts: 6,
                first_delay: Duration::from_millis(500),
                max_delay: Duration::from_secs(10),
            },
            bandwidth: None,
            encryption: None,
            min_free_bytes: room::DEFAULT_MIN_FREE_MIB * 1024 * 1024,
        }
    }
}

/// Progress of a download, reported at most about ten times a second.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Progress {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub total: Option<u64>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes_per_sec: u64,
}

/// A verified file in its final place.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Saved {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub path: std::path::PathBuf,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    /// Lower-case hex.
    pub sha256: String,
    /// When the backup was encrypted: the encrypted file's own length and SHA-256 (`bytes` and
    /// `sha256` are the plain stream's, as the service sent it).
    pub encrypted: Option<EncryptedFile>,
}

impl Saved {
    /// The length and SHA-256 of the file as it is on disk: the encrypted file's for an
    /// encrypted backup.
    pub fn on_disk(&self) -> (u64, &str) {
        match &self.encrypted {
            Some(encrypted) => (encrypted.bytes, &encrypted.sha256),
            None => (self.bytes, &self.sha256),
        }
    }
}

/// An encrypted backup file's length and SHA-256 (what is on disk).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EncryptedFile {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    /// Lower-case hex.
    pub sha256: String,
}

/// A download a stopped process left behind, journalled so another one can continue it: the
/// hidden part file, and what its bytes were checked against. Never the URL (it may carry a
/// signature); the resumed job redeems the callback again for a fresh one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartialDownload {
    pub part: std::path::PathBuf,
    /// The strong ETag or Last-Modified the part's bytes came with (sent as `If-Range`).
    pub validator: String,
    pub total: Option<u64>,
    pub disposition: Option<String>,
    /// The SHA-256 (hex) the server declared for the whole file, checked again after a
    /// resume: the bytes already in the part file are re-hashed, so a part file changed while
    /// no Kluis ran is caught.
    #[serde(default)]
    pub sha256: Option<String>,
    /// Whether the part holds encrypted bytes: such a part is never continued in plain.
    #[serde(default)]
    pub encrypted: bool,
}

const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// Downloads files with a client that has no token and follows only allowed redirects.
pub struct Downloader {
    http: reqwest::Client,
    options: DownloadOptions,
}

/// What is known about the file across tries.
#[derive(Default)]
struct Transfer {
    written: u64,
    total: Option<u64>,
    /// Strong ETag or Last-Modified of the first answer: a resume is only asked `If-Range` it.
    validator: Option<String>,
    disposition: Option<String>,
    final_url: Option<Url>,
    /// SHA-256 the server declared (Repr-Digest or Digest), if any.
    expected_sha256: Option<[u8; 32]>,
}

enum Failure {
    /// Worth another try (cut connection, 5xx).
    Transient(Error),
    /// The address refused (401, 403, 404, 410): worth one try with a fresh one ([`address`]).
    Refused(Error),
    Fatal(Error),
}

impl Downloader {
    /// What this downloader encrypts to, if anything (no secret in it).
    pub fn encryption(&self) -> Option<&crate::encryption::EncryptionSetting> {
        self.options.encryption.as_deref().map(|e| e.setting())
    }

    /// The free space a destination's disk must have before a backup is asked for.
    pub fn min_free_bytes(&self) -> u64 {
        self.options.min_free_bytes
    }

    pub fn new(config: &ServiceConfig, options: DownloadOptions) -> Result<Self> {
        Ok(Self {
            http: download_client(config)?,
            options,
        })
    }

    /// Downloads `url` to `destination`. On any failure, and when the future is dropped, no
    /// file is left behind.
    pub async fn download(
        &self,
        url: &Url,
        destination: &Destination,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<Saved> {
        let address = Address::fixed(url);
        (self.download_resumable(address, destination, None, None, &mut |_| {}, progress)).await
    }

    /// [`Downloader::download`] from `address` (asked for once more if refused), continuing
    /// `resume` (an earlier process's part file) when it is still there, holding `turn` (a batch's turn on the office's line: [`turns`]) until
    /// every byte has come in, and telling `checkpoint` how this download could be continued
    /// once that is known.
    pub async fn download_resumable(
        &self,
        address: Address<'_>,
        destination: &Destination,
        resume: Option<PartialDownload>,
        turn: Option<DownloadTurn>,
        checkpoint: &mut (dyn FnMut(&PartialDownload) + Send),
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<Saved> {
        let folder = destination.folder();
        let sealing = self.options.encryption.clone();
        let resume = match (resume, &sealing) {
            // An encrypted part cannot be continued by another process (its stream's key lived
            // in the one that began it): it is removed, and the download starts over.
            (Some(resume), Some(_)) => {
                remove_part(&resume, folder);
                None
            }
            // Plain bytes after encrypted ones would make a file that is neither: refused,
            // whatever the journal says (an older one does not say; the part's header does).
            (Some(resume), None)
                if resume.encrypted
                    || (is_our_part(&resume.part, folder)
                        && crate::encryption::looks_encrypted(&resume.part)) =>
            {
                return Err(Error::Config(ENCRYPTED_PART.into()));
            }
            (resume, _) => resume,
        };
        let (mut writer, mut transfer) = match resume.and_then(|r| continue_part(r, folder)) {
            Some(continued) => continued,
            None => (
                Writer::create(folder, sealing)
                    .map_err(|e| Error::io(format!("create a file in {}", folder.display()), e))?,
                Transfer::default(),
            ),
        };
        let url = address.url.clone();
        let fetched = self.fetch_all(address, &mut writer, &mut transfer, checkpoint, progress);
        let fetched = fetched.await;
        // Every byte is in (or the transfer failed): the line is the next klant's while this
        // file's last bytes are hashed, written, synced and named.
        drop(turn);
        if let Err(e) = fetched {
            writer.abandon().await;
            return Err(e);
        }
        let written = writer
            .finish()
            .await
            .map_err(|e| Error::io("write the downloaded file", e))?;
        // From here on `written.part` removes itself if anything fails.
        if let Some(total) = transfer.total {
            if written.bytes != total {
                return Err(Error::DownloadFailed(format!(
                    "The download ended at {} of {total} bytes; nothing was saved. Try the backup again.",
                    written.bytes
                )));
            }
        }
        if transfer
            .expected_sha256
            .is_some_and(|expected| expected != written.sha256)
        {
            return Err(Error::DownloadFailed(
                "The downloaded file does not match the checksum the server sent, so it was not saved. Try the backup again.".into(),
            ));
        }
        let now = time::OffsetDateTime::now_utc();
        let source = transfer.final_url.as_ref().unwrap_or(&url);
        let suggested = filename::choose(transfer.disposition.as_deref(), source, now);
        let mut name = destination.file_name(&suggested);
        let encrypted = written.sealed.map(|(bytes, sha256)| EncryptedFile {
            bytes,
            sha256: hex::encode(sha256),
        });
        if encrypted.is_some() {
            name.push('.');
            name.push_str(crate::encryption::EXTENSION);
        }
        let (bytes, sha256) = (written.bytes, hex::encode(written.sha256));
        let path = destination::persist_no_overwrite(written.part, folder, &name)
            .map_err(|e| Error::io(format!("save the file in {}", folder.display()), e))?;
        Ok(Saved {
            path,
            bytes,
            sha256,
            encrypted,
        })
    }

    /// Fetches the whole body into `writer`, retrying transient failures, and a refused address
    /// once with a fresh one.
    async fn fetch_all(
        &self,
        mut address: Address<'_>,
        writer: &mut Writer,
        transfer: &mut Transfer,
        checkpoint: &mut (dyn FnMut(&PartialDownload) + Send),
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<()> {
        let mut reporter = Reporter::new();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let url = &address.url;
            match self
                .fetch_once(url, writer, transfer, &mut reporter, checkpoint, progress)
                .await
            {
                Ok(()) => break,
                Err(Failure::Fatal(e)) => return Err(e),
                Err(Failure::Refused(e)) => match address.renew().await {
                    // (Not an attempt of the connection's: the address was the matter.)
                    true => attempt -= 1,
                    false => return Err(e),
                },
                Err(Failure::Transient(e)) if attempt >= self.options.retry.attempts => {
                    return Err(e)
                }
                Err(Failure::Transient(_)) => {
                    tracing::info!(
                        attempt,
                        bytes = transfer.written,
                        "download interrupted; trying again"
                    );
                    tokio::time::sleep(self.options.retry.delay(attempt)).await;
                }
            }
        }
        progress(reporter.progress(transfer.written, transfer.total));
        Ok(())
    }

    async fn fetch_once(
        &self,
        url: &Url,
        writer: &mut Writer,
        t: &mut Transfer,
        reporter: &mut Reporter,
        checkpoint: &mut (dyn FnMut(&PartialDownload) + Send),
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<(), Failure> {
        let write_failed = |e| Failure::Fatal(Error::io("write the downloaded file", e));
        let resume_from = match (&t.validator, t.written) {
            (Some(validator), written) if written > 0 => Some((written, validator.clone())),
            _ => None,
        };
        if resume_from.is_none() && t.written > 0 {
            // Without a validator a resumed part could belong to a changed file: start over.
            writer.restart().await.map_err(write_failed)?;
            t.written = 0;
        }
        let mut request = self.http.get(url.clone());
        if let Some((from, validator)) = &resume_from {
            request = request
                .header(header::RANGE, format!("bytes={from}-"))
                .header(header::IF_RANGE, validator);
        }
        let mut response = request
            .send()
            .await
            .map_err(|e| Failure::Transient(Error::unreachable(Peer::FileHost, e)))?;
        let status = response.status();
        match status {
            StatusCode::OK => {
                if t.written > 0 {
                    writer.restart().await.map_err(write_failed)?;
                    t.written = 0;
                }
                let headers = response.headers();
                t.total = response.content_length();
                t.validator = validator(headers);
                t.disposition = header_text(headers, header::CONTENT_DISPOSITION);
                t.expected_sha256 = declared_sha256(headers);
                t.final_url = Some(response.url().clone());
                if let (Some(validator), Some(part)) = (&t.validator, writer.path()) {
                    checkpoint(&PartialDownload {
                        part: part.to_path_buf(),
                        validator: validator.clone(),
                        total: t.total,
                        disposition: t.disposition.clone(),
                        sha256: t.expected_sha256.map(hex::encode),
                        encrypted: writer.seals(),
                    });
                }
            }
            StatusCode::PARTIAL_CONTENT if resume_from.is_some() => {
                let range = header_text(response.headers(), header::CONTENT_RANGE)
                    .and_then(|v| parse_content_range(&v));
                // The same file's rest (a host ignoring If-Range would splice two files).
                let same_file = (t.validator.as_deref())
                    .is_none_or(|ours| names_same_file(ours, response.headers()));
                match range {
                    Some((start, total))
                        if same_file
                            && start == t.written
                            && total.is_none_or(|n| Some(n) == t.total || t.total.is_none()) =>
                    {
                        t.total = total.or(t.total);
                    }
                    _ => {
                        // The server resumed somewhere else: forget the validator and start over.
                        t.validator = None;
                        return Err(Failure::Transient(Error::DownloadFailed(
                            "The file host resumed the download at another place or of another file; it is started again.".into(),
                        )));
                    }
                }
            }
            s if s.is_server_error()
                || s == StatusCode::TOO_MANY_REQUESTS
                || s == StatusCode::REQUEST_TIMEOUT =>
            {
                return Err(Failure::Transient(host_status_error(s)));
            }
            StatusCode::UNAUTHORIZED
            | StatusCode::FORBIDDEN
            | StatusCode::NOT_FOUND
            | StatusCode::GONE => return Err(Failure::Refused(host_status_error(status))),
            StatusCode::RANGE_NOT_SATISFIABLE => {
                t.validator = None;
                return Err(Failure::Transient(host_status_error(status)));
            }
            s => return Err(Failure::Fatal(host_status_error(s))),
        }
        if let (Some(max), Some(total)) = (self.options.max_bytes, t.total) {
            if total > max {
                return Err(Failure::Fatal(too_large(max)));
            }
        }
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => return Err(Failure::Transient(Error::unreachable(Peer::FileHost, e))),
            };
            t.written += chunk.len() as u64;
            if self.options.max_bytes.is_some_and(|max| t.written > max) {
                return Err(Failure::Fatal(too_large(self.options.max_bytes.unwrap())));
            }
            if t.total.is_some_and(|total| t.written > total) {
                return Err(Failure::Fatal(Error::DownloadFailed(
                    "The file host sent more bytes than it announced; nothing was saved. Try the backup again.".into(),
                )));
            }
            if let Some(bandwidth) = &self.options.bandwidth {
                // Not reading meanwhile: TCP slows the file host down to the limit.
                bandwidth.admit(chunk.len()).await;
            }
            writer.write(chunk).await.map_err(write_failed)?;
            if let Some(report) = reporter.tick(t.written, t.total) {
                progress(report);
            }
        }
        if t.total.is_some_and(|total| t.written < total) {
            return Err(Failure::Transient(Error::DownloadFailed(
                "The connection to the file host ended before the whole file arrived. Try the backup again.".into(),
            )));
        }
        Ok(())
    }
}

fn host_status_error(status: StatusCode) -> Error {
    Error::DownloadFailed(format!(
        "The file host answered {status} to the download. The link may have expired: run the backup again."
    ))
}

fn too_large(max: u64) -> Error {
    Error::DownloadFailed(format!(
        "The backup file is larger than the configured limit of {max} bytes; nothing was saved. Raise the limit to download it."
    ))
}
