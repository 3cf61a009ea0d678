//! One copy sent to the bucket: in a single request up to [`PART`] bytes, else in parts.
//!
//! Each request carries the SHA-256 of its bytes (`x-amz-checksum-sha256`), which the server
//! checks before it keeps them, and the object carries the whole backup's SHA-256 as user
//! metadata ([`super::SHA256_META`]), the proof that a later look compares. The local file is
//! hashed as it is read: a backup that changed since it was saved is not completed on the
//! target (an upload in parts is aborted; nothing appears under the copy's name).
//!
//! Up to four parts (in the whole process) are in memory at once, on their way or being read
//! and hashed.
//!
//! An upload in parts is journalled in the history (its key and the server's upload id) as soon
//! as the server has begun it. A copy interrupted by a crash or kill -9 asks the server which
//! parts it holds (`ListParts`) and sends only the others — a held part counts only when its
//! length and SHA-256 are those of the part read again here.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::Path;

use aws_sdk_s3::primitives::DateTime;
use aws_sdk_s3::types::{
    ChecksumAlgorithm, CompletedMultipartUpload, CompletedPart, ObjectLockMode,
};
use base64::Engine as _;
use bytes::Bytes;
use kluis_core::copies::UnfinishedUpload;
use kluis_core::{Error, History, Result};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use uuid::Uuid;

use super::connect::failure;
use super::{sha256_base64, Bucket, LockMode, SHA256_META};

/// Largest copy sent in one request, and the size of each part of a larger one (S3 wants parts
/// of 5 MiB or more, at most 10,000 of them): small enough to hold in memory and to send
/// again after a broken connection, large enough that requests cost little.
pub const PART: u64 = 8 * 1024 * 1024;

/// Most parts S3 takes in one upload.
const MAX_PARTS: u64 = 10_000;

/// Parts in memory at once, in the whole process — read, hashed or on their way — however
/// many copies run (a Backup all copies several klanten at a time): a single stream of
/// requests leaves the line idle while each is answered; four keep it busy (rclone's and the
/// AWS CLI's default too), at four parts of memory.
static PARTS: Semaphore = Semaphore::const_new(4);

/// A copy to send (see the module's text).
pub struct Upload<'a> {
    pub bucket: &'a Bucket,
    pub history: &'a History,
    pub job: Uuid,
    pub target_id: &'a str,
    pub key: &'a str,
    pub source: &'a Path,
    pub expected: (u64, &'a str),
}

impl Upload<'_> {
    /// Sends the copy (going on with `unfinished`, an upload in parts begun earlier). Gives
    /// the server's SHA-256 of the whole object when it was sent in one request and the server
    /// said it.
    pub async fn run(&self, unfinished: Option<UnfinishedUpload>) -> Result<Option<String>> {
        if self.expected.0 <= PART && unfinished.is_none() {
            return self.single().await;
        }
        self.in_parts(unfinished).await?;
        Ok(None)
    }

    async fn single(&self) -> Result<Option<String>> {
        let data = tokio::fs::read(self.source)
            .await
            .map_err(|e| Error::io(format!("read {}", self.source.display()), e))?;
        self.same_as_saved(data.len() as u64, &hex::encode(Sha256::digest(&data)))?;
        let (mode, until) = self.lock();
        let put = (self.bucket.client.put_object())
            .bucket(&self.bucket.place.bucket)
            .key(self.key)
            .content_length(data.len() as i64)
            // The algorithm named as well as its value: Object Lock requires the header.
            .checksum_algorithm(ChecksumAlgorithm::Sha256)
            .checksum_sha256(sha256_base64(self.expected.1)?)
            .metadata(SHA256_META, self.expected.1)
            .set_object_lock_mode(mode)
            .set_object_lock_retain_until_date(until)
            .body(self.bucket.body(data.into()))
            .send()
            .await
            .map_err(|e| failure(e).said(&self.bucket.name, "write"))?;
        Ok(put.checksum_sha256().map(str::to_string))
    }

    async fn in_parts(&self, unfinished: Option<UnfinishedUpload>) -> Result<()> {
        let (upload_id, held) = match unfinished {
            Some(upload) => match self.held_parts(&upload.upload_id).await {
                Some(held) => (upload.upload_id, held),
                // The server no longer knows it (aborted, or expired by a lifecycle rule).
                None => (self.begin().await?, HashMap::new()),
            },
            None => (self.begin().await?, HashMap::new()),
        };
        let part_size = PART.max(
            self.expected
                .0
                .div_ceil(MAX_PARTS)
                .next_multiple_of(1 << 20),
        );
        let mut file = tokio::fs::File::open(self.source)
            .await
            .map_err(|e| Error::io(format!("read {}", self.source.display()), e))?;
        let mut whole = Sha256::new();
        let mut sent = 0u64;
        let mut parts = BTreeMap::new();
        // Parts on their way while the next is read and hashed (see PARTS); a part that fails
        // ends the copy (the others are dropped, and the server keeps those it got for the
        // next try).
        let mut sending = JoinSet::new();
        for number in 1i32.. {
            // A part's place in memory first; it is given back when its request has ended.
            let place = PARTS.acquire().await.map_err(|_| {
                Error::Io("The upload's parts could not be counted (an internal error).".into())
            })?;
            while let Some(done) = sending.try_join_next() {
                let (number, e_tag, checksum) = joined(Some(done))?;
                parts.insert(number, completed(number, e_tag, checksum));
            }
            let mut buffer = Vec::with_capacity(part_size as usize);
            let read = (&mut file).take(part_size).read_to_end(&mut buffer).await;
            read.map_err(|e| Error::io(format!("read {}", self.source.display()), e))?;
            if buffer.is_empty() && number > 1 {
                break;
            }
            let last = (buffer.len() as u64) < part_size;
            whole.update(&buffer);
            sent += buffer.len() as u64;
            let checksum =
                base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&buffer));
            match held.get(&number) {
                Some(part) if part.is(&buffer, &checksum) => {
                    parts.insert(number, completed(number, part.e_tag.clone(), checksum));
                }
                _ => {
                    let request = self.send_part(&upload_id, number, buffer.into(), checksum);
                    sending.spawn(async move {
                        let sent = request.await;
                        drop(place);
                        sent
                    });
                }
            }
            if last {
                break;
            }
        }
        while let Some(done) = sending.join_next().await {
            let (number, e_tag, checksum) = joined(Some(done))?;
            parts.insert(number, completed(number, e_tag, checksum));
        }
        let parts: Vec<CompletedPart> = parts.into_values().collect();
        if let Err(e) = self.same_as_saved(sent, &hex::encode(whole.finalize())) {
            self.abort(&upload_id).await;
            return Err(e);
        }
        let completed = (self.bucket.client.complete_multipart_upload())
            .bucket(&self.bucket.place.bucket)
            .key(self.key)
            .upload_id(&upload_id)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(parts))
                    .build(),
            )
            .send()
            .await;
        if let Err(e) = completed {
            let failure = failure(e);
            if failure.is_no_such_upload() {
                self.history.copy_upload_ended(self.job, self.target_id)?;
            }
            return Err(failure.said(&self.bucket.name, "complete the upload"));
        }
        Ok(())
    }

    /// Begins an upload in parts and journals it.
    async fn begin(&self) -> Result<String> {
        let (mode, until) = self.lock();
        let begun = (self.bucket.client.create_multipart_upload())
            .bucket(&self.bucket.place.bucket)
            .key(self.key)
            .checksum_algorithm(ChecksumAlgorithm::Sha256)
            .metadata(SHA256_META, self.expected.1)
            .set_object_lock_mode(mode)
            .set_object_lock_retain_until_date(until)
            .send()
            .await
            .map_err(|e| failure(e).said(&self.bucket.name, "begin the upload"))?;
        let upload_id = (begun.upload_id().map(str::to_string)).ok_or_else(|| {
            Error::BadResponse(format!(
                "Copy target \"{}\": the server began an upload without an id.",
                self.bucket.name
            ))
        })?;
        let upload = UnfinishedUpload {
            location: self.bucket.location(self.key),
            upload_id: upload_id.clone(),
        };
        self.history
            .copy_upload_started(self.job, self.target_id, &upload)?;
        Ok(upload_id)
    }

    /// The parts the server holds of upload `upload_id`, or `None` when it knows no such upload.
    async fn held_parts(&self, upload_id: &str) -> Option<HashMap<i32, HeldPart>> {
        let mut held = HashMap::new();
        let mut marker = None;
        loop {
            let listed = (self.bucket.client.list_parts())
                .bucket(&self.bucket.place.bucket)
                .key(self.key)
                .upload_id(upload_id)
                .set_part_number_marker(marker.take())
                .send()
                .await
                .ok()?;
            for part in listed.parts() {
                if let Some(number) = part.part_number() {
                    let part = HeldPart {
                        bytes: part.size().unwrap_or(-1),
                        checksum: part.checksum_sha256().map(str::to_string),
                        e_tag: part.e_tag().map(str::to_string),
                    };
                    held.insert(number, part);
                }
            }
            match (listed.is_truncated(), listed.next_part_number_marker()) {
                (Some(true), Some(next)) => marker = Some(next.to_string()),
                _ => return Some(held),
            }
        }
    }

    /// Sends part `number` (`bytes`, whose SHA-256 is `checksum`); the request owns all it
    /// needs, so it can run beside the others. Gives the part's number, ETag and checksum.
    fn send_part(
        &self,
        upload_id: &str,
        number: i32,
        bytes: Bytes,
        checksum: String,
    ) -> impl Future<Output = Result<SentPart>> + Send + 'static {
        let request = (self.bucket.client.upload_part())
            .bucket(&self.bucket.place.bucket)
            .key(self.key)
            .upload_id(upload_id)
            .part_number(number)
            .content_length(bytes.len() as i64)
            .checksum_algorithm(ChecksumAlgorithm::Sha256)
            .checksum_sha256(&checksum)
            .body(self.bucket.body(bytes));
        let name = self.bucket.name.clone();
        async move {
            let sent = (request.send().await)
                .map_err(|e| failure(e).said(&name, &format!("send part {number}")))?;
            Ok((number, sent.e_tag().map(str::to_string), checksum))
        }
    }

    /// Gives up the upload on the server (its parts are deleted) and in the journal.
    async fn abort(&self, upload_id: &str) {
        let _ = (self.bucket.client.abort_multipart_upload())
            .bucket(&self.bucket.place.bucket)
            .key(self.key)
            .upload_id(upload_id)
            .send()
            .await;
        let _ = self.history.copy_upload_ended(self.job, self.target_id);
    }

    /// The local file read now is the backup as saved, or the copy is refused.
    fn same_as_saved(&self, bytes: u64, sha256: &str) -> Result<()> {
        match (bytes, sha256) == (self.expected.0, self.expected.1) {
            true => Ok(()),
            false => Err(Error::Io(format!(
                "{} did not match the backup as saved (its length or SHA-256 changed since); it is not copied to \"{}\". Verify the backups.",
                self.source.display(),
                self.bucket.name
            ))),
        }
    }

    /// The lock each new copy gets: the place's mode, from now for its days.
    fn lock(&self) -> (Option<ObjectLockMode>, Option<DateTime>) {
        match self.bucket.place.lock {
            Some(lock) => {
                let until = kluis_core::clock::now_ms() + i64::from(lock.days) * 86_400_000;
                let mode = match lock.mode {
                    LockMode::Governance => ObjectLockMode::Governance,
                    LockMode::Compliance => ObjectLockMode::Compliance,
                };
                (Some(mode), Some(DateTime::from_millis(until)))
            }
            None => (None, None),
        }
    }
}

/// Part `number` as the completion lists it.
fn completed(number: i32, e_tag: Option<String>, checksum: String) -> CompletedPart {
    CompletedPart::builder()
        .part_number(number)
        .set_e_tag(e_tag)
        .checksum_sha256(checksum)
        .build()
}

/// A part sent: its number, ETag and checksum.
type SentPart = (i32, Option<String>, String);

/// What a part's request gave, or why it failed (a task that could not finish is said as a
/// failure, never a panic).
fn joined(
    done: Option<std::result::Result<Result<SentPart>, tokio::task::JoinError>>,
) -> Result<SentPart> {
    match done {
        Some(Ok(sent)) => sent,
        Some(Err(e)) => Err(Error::Io(format!(
            "Sending a part stopped unexpectedly ({e})."
        ))),
        None => Err(Error::Io(
            "No part was on its way (an internal error).".into(),
        )),
    }
}

/// A part the server holds of an unfinished upload.
struct HeldPart {
    bytes: i64,
    checksum: Option<String>,
    e_tag: Option<String>,
}

impl HeldPart {
    /// Whether it holds exactly `bytes` (whose SHA-256 is `checksum`): by the SHA-256 the
    /// server lists, or — where it lists none — by its ETag, which for a part is the MD5 of
    /// its bytes (an ETag of another form, as with some server-side encryption, never matches:
    /// the part is sent again).
    fn is(&self, bytes: &[u8], checksum: &str) -> bool {
        if self.bytes != bytes.len() as i64 {
            return false;
        }
        match (&self.checksum, &self.e_tag) {
            (Some(listed), _) => listed == checksum,
            (None, Some(e_tag)) => {
                use md5::Digest as _;
                e_tag
                    .trim_matches('"')
                    .eq_ignore_ascii_case(&hex::encode(md5::Md5::digest(bytes)))
            }
            (None, None) => false,
        }
    }
}
