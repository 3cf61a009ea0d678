//! Copies to S3-compatible object storage (AWS, Wasabi, Backblaze B2's S3 API, a MinIO at the
//! office), through the AWS SDK — no signing of our own.
//!
//! Parts and data flow:
//! - [`place`]: [`S3Place`], the bucket as the office set it (endpoint, region, bucket, prefix,
//!   addressing style, access key id, Object Lock rule); the secret key lives in the keyring.
//! - [`connect`]: the SDK client for a place (rustls with ring, the system's roots plus the
//!   place's own CA), and each failure said in words naming the target.
//! - [`paced`]: a request body sent no faster than the bandwidth limit allows.
//! - [`upload`]: a copy made — in one request up to [`upload::PART`] bytes, else in parts,
//!   each part's SHA-256 checked by the server; an upload in parts is journalled in the
//!   history, so that after a crash or kill -9 the parts the server holds are not sent again.
//! - This file: the copy's key, the proof afterwards (the object's length and recorded
//!   SHA-256, and for a single request the server-checked SHA-256 of the whole), checks for
//!   verification, a test, deletion for a retention rule, and renewing a lock.
//!
//! Where the document of a provider is silent, we do what a careful client of an unknown
//! server does: never overwrite an object (a key holding something else takes the next free
//! name), trust only what the server confirmed, and leave nothing half-made under a copy's
//! name — an unfinished upload in parts is no object at all until it is completed.

pub mod connect;
pub mod paced;
pub mod place;
pub mod upload;

use std::io::Write;
use std::sync::Arc;

use aws_sdk_s3::primitives::DateTime;
use aws_sdk_s3::types::{ChecksumMode, ObjectLockRetention, ObjectLockRetentionMode};
use aws_sdk_s3::Client;
use base64::Engine as _;
use kluis_core::copies::{CopyRecord, MadeCopy};
use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::history::Check;
use kluis_core::verify::Finding;
use kluis_core::{Error, History, HistoryEntry, Result, Secret};
use sha2::{Digest, Sha256};

use crate::checked::found;
use connect::{failure, Failure};
pub use place::{LockMode, ObjectLock, S3Place};

/// The user metadata key under which each copy carries its SHA-256 (hex): the proof of a copy
/// made in parts, whose server checksum is one of parts.
pub const SHA256_META: &str = "kluis-sha256";

/// A place and its client, named as the user named the target.
pub struct Bucket {
    pub name: String,
    pub place: S3Place,
    pub client: Client,
    /// The budget uploads draw on (the download limit's rate, its own budget), if any.
    pace: Option<Arc<Bandwidth>>,
}

impl Bucket {
    pub fn new(name: &str, place: &S3Place, secret: Option<&Secret>) -> Result<Bucket> {
        Ok(Bucket {
            name: name.to_string(),
            place: place.clone(),
            client: connect::client(name, place, secret)?,
            pace: None,
        })
    }

    /// The same, its uploads drawing on `pace`.
    pub fn paced(self, pace: Option<Arc<Bandwidth>>) -> Bucket {
        Bucket { pace, ..self }
    }

    /// `bytes` as a request body, paced by the budget when there is one.
    pub(crate) fn body(&self, bytes: bytes::Bytes) -> aws_sdk_s3::primitives::ByteStream {
        match &self.pace {
            Some(pace) => paced::body(bytes, pace.clone()),
            None => bytes.into(),
        }
    }

    /// The key for `file_name` in klant folder `folder`, the `n`th free-name variant:
    /// `PREFIX/Klant/backup.zip`, `PREFIX/Klant/backup (1).zip`, …
    fn key(&self, folder: &str, file_name: &str, n: u32) -> String {
        let name = match n {
            0 => file_name.to_string(),
            n => match file_name.rsplit_once('.') {
                Some((stem, ext)) if !stem.is_empty() => format!("{stem} ({n}).{ext}"),
                _ => format!("{file_name} ({n})"),
            },
        };
        let prefix = self.place.prefix.trim_matches('/');
        match prefix.is_empty() {
            true => format!("{folder}/{name}"),
            false => format!("{prefix}/{folder}/{name}"),
        }
    }

    /// Where a copy is, as the history records it: `s3://bucket/key`.
    pub fn location(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.place.bucket)
    }

    /// The key of `location` in this bucket, when it is one of its objects.
    pub(crate) fn key_of<'a>(&self, location: &'a str) -> Option<&'a str> {
        location
            .strip_prefix("s3://")?
            .strip_prefix(self.place.bucket.as_str())?
            .strip_prefix('/')
    }

    /// What the bucket holds at `key` (the newest version): its length, recorded SHA-256 and
    /// version — or nothing there.
    async fn head(&self, key: &str) -> std::result::Result<Option<Held>, Failure> {
        let ask = || {
            (self.client.head_object())
                .bucket(&self.place.bucket)
                .key(key)
                .checksum_mode(ChecksumMode::Enabled)
                .send()
        };
        let mut asked = ask().await;
        // S3 refuses a request signed more than 15 minutes off its own clock. The SDK then
        // learns the offset from the refusal's `Date` and signs by the server's clock (kept
        // for the client), and tries again itself when the refusal names the fault; a HEAD's
        // refusal has no body to name it. So a refused HEAD from a server whose clock is off
        // is asked once more, signed right this time: a PC whose clock is wrong (a dead CMOS
        // battery, a missed daylight-saving change) must not seem to hold the wrong keys.
        if matches!(&asked, Err(e) if connect::refused_by_clock(e.raw_response())) {
            asked = ask().await;
        }
        match asked {
            Ok(head) => Ok(Some(Held {
                bytes: head.content_length().unwrap_or(-1),
                sha256: (head.metadata())
                    .and_then(|m| m.get(SHA256_META))
                    .map(|s| s.to_ascii_lowercase()),
                version: head.version_id().map(str::to_string),
                locked_until_ms: (head.object_lock_retain_until_date())
                    .and_then(|d| d.to_millis().ok()),
            })),
            Err(e) if connect::is_not_found(&e) => Ok(None),
            Err(e) => Err(failure(e)),
        }
    }

    /// [`Bucket::head`], its failure said as the target's.
    async fn looked(&self, key: &str) -> Result<Option<Held>> {
        self.head(key).await.map_err(|f| f.said(&self.name, "look"))
    }

    /// Copies `entry`'s saved file (`source`, of `expected` length and SHA-256) into the klant's
    /// folder in the bucket, or finds the copy an earlier try made; recorded in `history`'s
    /// upload journal while it is in parts.
    pub async fn copy(
        &self,
        history: &History,
        target_id: &str,
        entry: &HistoryEntry,
        source: &std::path::Path,
        expected: (u64, &str),
    ) -> Result<MadeCopy> {
        let job = crate::job_of(entry)?;
        let folder = crate::folder::klant_folder_name(source);
        let file_name = crate::folder::file_name_of(source)?;
        // An upload in parts interrupted earlier goes on at its own key — unless an earlier
        // try made the copy there, or something else appeared there since (never replaced).
        let unfinished = history.copy_upload(job, target_id)?;
        let journalled = unfinished.as_ref().and_then(|u| self.key_of(&u.location));
        let resumed = match journalled {
            Some(key) => match self.looked(key).await? {
                Some(held) if held.is(expected) => return Ok(self.made(key, expected, held)),
                Some(_) => None,
                None => Some(key.to_string()),
            },
            None => None,
        };
        let (key, unfinished) = match resumed {
            Some(key) => (key, unfinished),
            None => {
                if unfinished.is_some() {
                    history.copy_upload_ended(job, target_id)?;
                }
                match self.free_key(&folder, &file_name, expected).await? {
                    (key, Some(held)) => return Ok(self.made(&key, expected, held)),
                    (key, None) => (key, None),
                }
            }
        };
        let upload = upload::Upload {
            bucket: self,
            history,
            job,
            target_id,
            key: &key,
            source,
            expected,
        };
        let single_request_checksum = upload.run(unfinished).await?;
        let held = (self.looked(&key).await?).ok_or_else(|| {
                Error::Io(format!(
                    "Copy target \"{}\": the server accepted the copy but does not show it at {key}; it is tried again later.",
                    self.name
                ))
            })?;
        // The proof: what the server now holds is the backup's length and SHA-256 (for a
        // single request, the server checked that SHA-256 of the bytes it received).
        let server_checked = match single_request_checksum {
            Some(base64) => base64 == sha256_base64(expected.1)?,
            None => true,
        };
        if !held.is(expected) || !server_checked {
            return Err(Error::Io(format!(
                "Copy target \"{}\": the copy at {key} is not the backup as sent (length or SHA-256 differ); it is tried again later.",
                self.name
            )));
        }
        Ok(self.made(&key, expected, held))
    }

    fn made(&self, key: &str, expected: (u64, &str), held: Held) -> MadeCopy {
        MadeCopy {
            location: self.location(key),
            bytes: expected.0,
            sha256: expected.1.to_string(),
            locked_until_ms: held.locked_until_ms,
            version: held.version,
        }
    }

    /// The first key for the file that holds nothing — or holds this very copy already (an
    /// earlier try made it and stopped before the history heard): the key, and that copy.
    async fn free_key(
        &self,
        folder: &str,
        file_name: &str,
        expected: (u64, &str),
    ) -> Result<(String, Option<Held>)> {
        for n in 0..1000 {
            let key = self.key(folder, file_name, n);
            match self.looked(&key).await? {
                None => return Ok((key, None)),
                Some(held) if held.is(expected) => return Ok((key, Some(held))),
                Some(_) => continue,
            }
        }
        Err(Error::Io(format!(
            "Copy target \"{}\": a thousand objects named like {file_name} are already there; clean up the folder {folder}.",
            self.name
        )))
    }

    /// What the copy `record` names is now: missing, of another length or SHA-256 as the
    /// server records it, or (with `read_back`, read in full) other bytes — or as made.
    pub async fn check(&self, record: &CopyRecord, read_back: bool) -> Check {
        let (location, bytes, sha256) = match crate::checked::recorded(record) {
            Ok(recorded) => recorded,
            Err(check) => return check,
        };
        let Some(key) = self.key_of(location) else {
            return found(
                Finding::Unreadable,
                Some(format!(
                    "{location} is not in bucket {}.",
                    self.place.bucket
                )),
            );
        };
        let held = match self.head(key).await {
            Ok(Some(held)) => held,
            Ok(None) => return found(Finding::Missing, Some(format!("No object at {location}."))),
            Err(f) => {
                return found(
                    Finding::Unreadable,
                    Some(f.said(&self.name, "look").to_string()),
                )
            }
        };
        if !held.is((bytes, sha256)) {
            let detail = format!(
                "{location} is {} bytes with another SHA-256 than the backup's.",
                held.bytes
            );
            return found(Finding::Changed, Some(detail));
        }
        if !read_back {
            return found(Finding::Intact, None);
        }
        match self.read_back(key, record.version.as_deref()).await {
            Ok((n, digest)) if n == bytes && digest == *sha256 => found(Finding::Intact, None),
            Ok(_) => found(
                Finding::Changed,
                Some(format!("{location}: its content is not the backup's.")),
            ),
            Err(e) => found(Finding::Unreadable, Some(e.to_string())),
        }
    }

    /// The object at `key` read in full: its length and SHA-256.
    async fn read_back(&self, key: &str, version: Option<&str>) -> Result<(u64, String)> {
        self.read_back_into(key, version, &mut std::io::sink())
            .await
    }

    /// The object at `key` read in full into `sink`: its length and SHA-256.
    pub(crate) async fn read_back_into(
        &self,
        key: &str,
        version: Option<&str>,
        sink: &mut (dyn Write + Send),
    ) -> Result<(u64, String)> {
        let object = (self.client.get_object())
            .bucket(&self.place.bucket)
            .key(key)
            .set_version_id(version.map(str::to_string))
            .send()
            .await
            .map_err(|e| failure(e).said(&self.name, "read"))?;
        let mut body = object.body;
        let mut hasher = Sha256::new();
        let mut bytes = 0u64;
        while let Some(chunk) = body.try_next().await.map_err(|e| {
            Error::Network(format!(
                "Copy target \"{}\": reading {key} stopped ({e}).",
                self.name
            ))
        })? {
            hasher.update(&chunk);
            sink.write_all(&chunk)
                .map_err(|e| Error::io("write the copy read from the bucket", e))?;
            bytes += chunk.len() as u64;
        }
        Ok((bytes, hex::encode(hasher.finalize())))
    }

    /// Deletes the copy at `location` (its `version`, where the bucket keeps versions).
    pub async fn delete(&self, location: &str, version: Option<&str>) -> Result<()> {
        let key = self.key_of(location).ok_or_else(|| {
            Error::Config(format!(
                "{location} is not in bucket {}.",
                self.place.bucket
            ))
        })?;
        (self.client.delete_object())
            .bucket(&self.place.bucket)
            .key(key)
            .set_version_id(version.map(str::to_string))
            .send()
            .await
            .map_err(|e| failure(e).said(&self.name, "delete"))?;
        Ok(())
    }

    /// Locks the copy at `location` (`version`) until `until_ms` under the place's lock mode.
    pub async fn lock_until(
        &self,
        location: &str,
        version: Option<&str>,
        until_ms: i64,
    ) -> Result<()> {
        let (Some(key), Some(lock)) = (self.key_of(location), &self.place.lock) else {
            return Ok(());
        };
        let mode = match lock.mode {
            LockMode::Governance => ObjectLockRetentionMode::Governance,
            LockMode::Compliance => ObjectLockRetentionMode::Compliance,
        };
        let retention = ObjectLockRetention::builder()
            .mode(mode)
            .retain_until_date(DateTime::from_millis(until_ms))
            .build();
        (self.client.put_object_retention())
            .bucket(&self.place.bucket)
            .key(key)
            .set_version_id(version.map(str::to_string))
            .retention(retention)
            .send()
            .await
            .map_err(|e| failure(e).said(&self.name, "lock"))?;
        Ok(())
    }

    /// "Test": a small object written, read back and deleted (with its version: a bucket
    /// that keeps versions keeps no test object).
    pub async fn test(&self) -> Result<()> {
        let key = self.key(".kluis-test", &uuid::Uuid::new_v4().simple().to_string(), 0);
        let text = b"Kluis checks it can write here; this object is removed at once.".to_vec();
        let put = (self.client.put_object())
            .bucket(&self.place.bucket)
            .key(&key)
            .checksum_sha256(
                base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&text)),
            )
            .body(text.clone().into())
            .send()
            .await
            .map_err(|e| failure(e).said(&self.name, "write"))?;
        let read = self.read_back(&key, put.version_id()).await;
        // Governance and compliance locks apply to copies only (each carries its own date):
        // the test object has none unless the bucket locks every object by default.
        let _ = self.delete(&self.location(&key), put.version_id()).await;
        match read? == (text.len() as u64, hex::encode(Sha256::digest(&text))) {
            true => Ok(()),
            false => Err(Error::Io(format!(
                "Copy target \"{}\": a test object read back differs from what was written.",
                self.name
            ))),
        }
    }
}

/// An object as the bucket shows it.
struct Held {
    bytes: i64,
    sha256: Option<String>,
    version: Option<String>,
    locked_until_ms: Option<i64>,
}

impl Held {
    /// Whether it is the copy of a backup of `expected` length and SHA-256.
    fn is(&self, expected: (u64, &str)) -> bool {
        u64::try_from(self.bytes) == Ok(expected.0) && self.sha256.as_deref() == Some(expected.1)
    }
}

/// A SHA-256 given in hex, in the base64 that S3's checksum headers use.
pub(crate) fn sha256_base64(hex_digest: &str) -> Result<String> {
    let bytes = hex::decode(hex_digest)
        .map_err(|_| Error::Io("The history holds a SHA-256 that is not hexadecimal.".into()))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}
