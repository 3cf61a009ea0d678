//! Small objects beside the copies on a target — recovery's catalogs, each copy's record, the
//! office key's public half (kluis-recovery decides what they are) — named relative to the
//! target's root (a folder's path, a bucket's prefix, an SFTP server's folder): written new
//! (never over another object, unless asked to replace one of recovery's own), read within a
//! bound, listed, removed. Blocking, as the rest of this crate.
//!
//! On a bucket with Object Lock, each of these objects is locked briefly when written
//! ([`DOCUMENT_LOCK_DAYS`], governance mode): someone holding the bucket's keys (ransomware on
//! an office computer) cannot delete the newest catalogs and records at once, while they do not
//! pile up for the copies' whole lock.
//!
//! Names are checked before anything is asked of a target: relative, `/`-separated, no empty,
//! `.` or `..` part, nothing Windows would read as a drive or a device — a name from a listing
//! or a catalog cannot climb out of the target's root.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use aws_sdk_s3::primitives::ByteStream;
use kluis_core::{Error, Result};
use russh_sftp::protocol::{OpenFlags, StatusCode};

use crate::{on_runtime, s3, sftp, Opened};

/// How long recovery's objects on a bucket with Object Lock are locked (or the bucket's own
/// lock days, when fewer): see the module's text.
pub const DOCUMENT_LOCK_DAYS: u32 = 7;

/// A name under a target's root, checked (see the module's text).
fn checked(relative: &str) -> Result<&str> {
    let ok = !relative.is_empty()
        && relative.len() <= 1024
        && !relative.starts_with('/')
        && relative.split('/').all(is_plain_part);
    ok.then_some(relative).ok_or_else(|| {
        Error::Config(format!(
            "\"{}\" is not a name under a copy target's folder.",
            relative.chars().take(80).collect::<String>()
        ))
    })
}

/// One part of a name: not empty, `.` or `..`, no `\\` or `:` (on Windows a drive, `C:x`, or
/// a stream), no control character, and no device name of Windows (`CON`, `COM1.txt`, …),
/// which a folder target on Windows would open instead of a file.
fn is_plain_part(part: &str) -> bool {
    const DEVICES: [&str; 4] = ["con", "prn", "aux", "nul"];
    let stem = part
        .split('.')
        .next()
        .unwrap_or("")
        .trim_end()
        .to_ascii_lowercase();
    let numbered = (stem.len() == 4)
        && (stem.starts_with("com") || stem.starts_with("lpt"))
        && stem.as_bytes()[3].is_ascii_digit();
    !part.is_empty()
        && part != "."
        && part != ".."
        && !part.contains(['\\', ':'])
        && !part.chars().any(char::is_control)
        && !DEVICES.contains(&stem.as_str())
        && !numbered
}

/// A sink that takes at most `left` bytes: an object larger than the caller expects stops
/// being fetched there, instead of filling the disk.
struct AtMost<'a> {
    into: &'a mut (dyn Write + Send),
    left: u64,
}

impl Write for AtMost<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() as u64 > self.left {
            return Err(std::io::Error::other(
                "the object is larger than its catalog says",
            ));
        }
        let n = self.into.write(buf)?;
        self.left -= n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.into.flush()
    }
}

impl Opened {
    /// Where the copy at `location` (as the history records it) is under the target's root.
    pub fn relative(&self, location: &str) -> Option<String> {
        match self {
            Opened::Folder { root, .. } => {
                let path = Path::new(location).strip_prefix(root).ok()?;
                let parts: Vec<String> = (path.components())
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                (!parts.is_empty()).then(|| parts.join("/"))
            }
            Opened::Bucket(bucket) => {
                let key = bucket.key_of(location)?;
                let prefix = bucket.place.prefix.trim_matches('/');
                match prefix.is_empty() {
                    true => Some(key.to_string()),
                    false => key.strip_prefix(&format!("{prefix}/")).map(str::to_string),
                }
            }
            Opened::Sftp(server) => {
                let path = server.path_of(location)?;
                path.strip_prefix(&format!("{}/", server.root.trim_end_matches('/')))
                    .map(str::to_string)
            }
        }
    }

    /// The location the history records for the object at `relative` (under the root): what
    /// [`Opened::relative`] reads back — for copies another computer made, adopted.
    pub fn location(&self, relative: &str) -> Result<String> {
        let relative = checked(relative)?;
        Ok(match self {
            Opened::Folder { root, .. } => {
                let path = (relative.split('/')).fold(root.clone(), |path, part| path.join(part));
                path.to_string_lossy().into_owned()
            }
            Opened::Bucket(bucket) => bucket.location(&bucket_key(bucket, relative)),
            Opened::Sftp(server) => {
                server.location(&format!("{}/{relative}", server.root.trim_end_matches('/')))
            }
        })
    }

    /// Writes `bytes` at `relative`: a new object (refused, naming it, when one is there), or
    /// with `replace` over the one there (written whole first, so that a reader sees the old or
    /// the new).
    pub fn put(&self, relative: &str, bytes: &[u8], replace: bool) -> Result<()> {
        let relative = checked(relative)?;
        match self {
            Opened::Folder { name, root } => folder_put(name, root, relative, bytes, replace),
            Opened::Bucket(bucket) => on_runtime(bucket_put(bucket, relative, bytes, replace))?,
            Opened::Sftp(server) => on_runtime(sftp_put(server, relative, bytes, replace))?,
        }
    }

    /// The object at `relative`, read whole — none when there is none; refused when it is
    /// larger than `most` bytes.
    pub fn get(&self, relative: &str, most: u64) -> Result<Option<Vec<u8>>> {
        let relative = checked(relative)?;
        let read = match self {
            Opened::Folder { root, .. } => folder_get(root, relative, most),
            Opened::Bucket(bucket) => on_runtime(bucket_get(bucket, relative, most))?,
            Opened::Sftp(server) => on_runtime(sftp_get(server, relative, most))?,
        }?;
        match read {
            Some(bytes) if bytes.len() as u64 > most => Err(Error::Io(format!(
                "{relative} on copy target \"{}\" is larger than it can be ({most} bytes at most).",
                self.name()
            ))),
            read => Ok(read),
        }
    }

    /// Every object under `relative` (a folder's name, or "" for all), each with its length,
    /// by its name relative to the root.
    pub fn list(&self, relative: &str) -> Result<Vec<(String, u64)>> {
        let relative = match relative.trim_matches('/') {
            "" => "",
            r => checked(r)?,
        };
        match self {
            Opened::Folder { root, .. } => Ok(folder_list(root, relative)),
            Opened::Bucket(bucket) => on_runtime(bucket_list(bucket, relative))?,
            Opened::Sftp(server) => on_runtime(sftp_list(server, relative))?,
        }
    }

    /// The object at `relative` read in full into `into` (a large one too: a copy of a
    /// backup) — refused past `most` bytes —, its length and SHA-256 said for the caller to
    /// check against what it expects.
    pub fn fetch_object(
        &self,
        relative: &str,
        most: u64,
        into: &mut (dyn Write + Send),
    ) -> Result<(u64, String)> {
        let relative = checked(relative)?;
        let into = &mut AtMost { into, left: most };
        match self {
            Opened::Folder { name, root } => {
                crate::folder::read_back_into(&root.join(relative), into)
                    .map_err(|e| Error::io(format!("read {relative} on copy target \"{name}\""), e))
            }
            Opened::Bucket(bucket) => {
                let key = bucket_key(bucket, relative);
                on_runtime(bucket.read_back_into(&key, None, into))?
            }
            Opened::Sftp(server) => {
                let path = format!("{}/{relative}", server.root.trim_end_matches('/'));
                on_runtime(server.read_back_into(&path, into))?
            }
        }
    }

    /// Removes the object at `relative` (nothing there: done).
    pub fn remove(&self, relative: &str) -> Result<()> {
        let relative = checked(relative)?;
        match self {
            Opened::Folder { root, .. } => match std::fs::remove_file(root.join(relative)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(
                    format!("remove {relative} from the copy target"),
                    e,
                )),
                _ => Ok(()),
            },
            Opened::Bucket(bucket) => {
                let key = bucket_key(bucket, relative);
                on_runtime(bucket.delete(&bucket.location(&key), None))?
            }
            Opened::Sftp(server) => {
                let path = format!("{}/{relative}", server.root.trim_end_matches('/'));
                match on_runtime(server.connected.sftp.remove_file(path.clone()))? {
                    Err(e) if !sftp::is_status(&e, StatusCode::NoSuchFile) => {
                        Err(server.said(&e, &format!("remove {path}")))
                    }
                    _ => Ok(()),
                }
            }
        }
    }

    /// The target's name, as the user named it.
    pub fn name(&self) -> &str {
        match self {
            Opened::Folder { name, .. } => name,
            Opened::Bucket(bucket) => &bucket.name,
            Opened::Sftp(server) => &server.name,
        }
    }
}

fn folder_put(name: &str, root: &Path, relative: &str, bytes: &[u8], replace: bool) -> Result<()> {
    // A root that is not there is a disk unplugged or a share not mounted: making it would
    // write recovery's objects to this computer's own disk — and the next copies after them,
    // taking it for the target.
    if let Some(away) = crate::folder::away(name, root) {
        return Err(away);
    }
    let path = root.join(relative);
    let said =
        |e: std::io::Error| Error::io(format!("write {relative} on copy target \"{name}\""), e);
    if let Some(parent) = path.parent() {
        kluis_private::files::create_dir_all(parent).map_err(said)?;
    }
    if replace {
        return kluis_private::files::write_atomic(&path, bytes).map_err(said);
    }
    let mut file = (kluis_private::files::options().write(true).create_new(true))
        .open(&path)
        .map_err(said)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        drop(file);
        let _ = std::fs::remove_file(&path);
        return Err(said(e));
    }
    Ok(())
}

fn folder_get(root: &Path, relative: &str, most: u64) -> Result<Option<Vec<u8>>> {
    let path = root.join(relative);
    let mut file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("read {}", path.display()), e)),
    };
    let mut bytes = Vec::new();
    (&mut file)
        .take(most + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("read {}", path.display()), e))?;
    Ok(Some(bytes))
}

fn folder_list(root: &Path, relative: &str) -> Vec<(String, u64)> {
    let mut found = Vec::new();
    let mut folders: Vec<(PathBuf, String)> = vec![(root.join(relative), relative.to_string())];
    while let Some((folder, name)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            // (`DirEntry::metadata` does not follow a link: a link is no object of ours.)
            let Ok(meta) = entry.metadata() else { continue };
            let child = match name.is_empty() {
                true => entry.file_name().to_string_lossy().into_owned(),
                false => format!("{name}/{}", entry.file_name().to_string_lossy()),
            };
            if meta.is_dir() {
                folders.push((entry.path(), child));
            } else if meta.is_file() {
                found.push((child, meta.len()));
            }
        }
    }
    found.sort();
    found
}

fn bucket_key(bucket: &s3::Bucket, relative: &str) -> String {
    match bucket.place.prefix.trim_matches('/') {
        "" => relative.to_string(),
        prefix => format!("{prefix}/{relative}"),
    }
}

async fn bucket_put(
    bucket: &s3::Bucket,
    relative: &str,
    bytes: &[u8],
    replace: bool,
) -> Result<()> {
    let key = bucket_key(bucket, relative);
    let mut put = (bucket.client.put_object())
        .bucket(&bucket.place.bucket)
        .key(&key)
        .content_length(bytes.len() as i64)
        // The algorithm named as well as its value: a bucket with Object Lock requires it.
        .checksum_algorithm(aws_sdk_s3::types::ChecksumAlgorithm::Sha256)
        .body(ByteStream::from(bytes.to_vec()));
    if !replace {
        // Refused by the server when an object is there (S3's conditional write).
        put = put.if_none_match("*");
    }
    if let Some(lock) = bucket.place.lock {
        let days = lock.days.clamp(1, DOCUMENT_LOCK_DAYS);
        let until = kluis_core::clock::now_ms() + i64::from(days) * 86_400_000;
        put = (put.object_lock_mode(aws_sdk_s3::types::ObjectLockMode::Governance))
            .object_lock_retain_until_date(aws_sdk_s3::primitives::DateTime::from_millis(until));
    }
    put.send()
        .await
        .map(|_| ())
        .map_err(|e| s3::connect::failure(e).said(&bucket.name, &format!("write {key}")))
}

async fn bucket_get(bucket: &s3::Bucket, relative: &str, most: u64) -> Result<Option<Vec<u8>>> {
    let key = bucket_key(bucket, relative);
    let got = (bucket.client.get_object())
        .bucket(&bucket.place.bucket)
        .key(&key)
        .send()
        .await;
    let mut object = match got {
        Ok(object) => object,
        Err(e) if s3::connect::is_not_found(&e) => return Ok(None),
        Err(e) => return Err(s3::connect::failure(e).said(&bucket.name, &format!("read {key}"))),
    };
    let mut bytes = Vec::new();
    while let Some(chunk) = object.body.try_next().await.map_err(|e| {
        Error::Network(format!(
            "Copy target \"{}\": reading {key} stopped ({e}).",
            bucket.name
        ))
    })? {
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > most {
            break;
        }
    }
    Ok(Some(bytes))
}

async fn bucket_list(bucket: &s3::Bucket, relative: &str) -> Result<Vec<(String, u64)>> {
    let root = bucket_key(bucket, "x");
    let root = &root[..root.len() - 1]; // the prefix with its slash (or nothing)
    let under = match relative {
        "" => root.to_string(),
        r => format!("{root}{r}/"),
    };
    let mut found = Vec::new();
    let mut pages = (bucket.client.list_objects_v2())
        .bucket(&bucket.place.bucket)
        .prefix(&under)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page =
            page.map_err(|e| s3::connect::failure(e).said(&bucket.name, "list the copies"))?;
        for object in page.contents() {
            let (Some(key), Some(size)) = (object.key(), object.size()) else {
                continue;
            };
            if let Some(name) = key.strip_prefix(root) {
                found.push((name.to_string(), size.max(0) as u64));
            }
        }
    }
    Ok(found)
}

async fn sftp_put(
    server: &sftp::Server,
    relative: &str,
    bytes: &[u8],
    replace: bool,
) -> Result<()> {
    use tokio::io::AsyncWriteExt;
    let sftp_client = &server.connected.sftp;
    let root = server.root.trim_end_matches('/');
    let path = format!("{root}/{relative}");
    // Its folders, one by one (SFTP makes one level at a time).
    let mut folder = root.to_string();
    for part in relative
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map_or(&[][..], |(_, f)| f)
    {
        folder = format!("{folder}/{part}");
        if !matches!(sftp_client.metadata(folder.as_str()).await, Ok(m) if m.is_dir()) {
            if let Err(e) = sftp_client.create_dir(folder.as_str()).await {
                return Err(server.said(&e, &format!("create the folder {folder}")));
            }
        }
    }
    // Replacing: written beside under a name of its own, then renamed over the old one (SFTP's
    // plain rename never replaces: the old one is removed just before).
    let written = match replace {
        true => format!("{path}.{}.part", uuid::Uuid::new_v4().simple()),
        false => path.clone(),
    };
    let flags = OpenFlags::CREATE | OpenFlags::EXCLUDE | OpenFlags::WRITE;
    let mut file = (sftp_client.open_with_flags(written.as_str(), flags).await)
        .map_err(|e| server.said(&e, &format!("write {written}")))?;
    let sent = async {
        file.write_all(bytes).await?;
        file.shutdown().await
    }
    .await;
    if let Err(e) = sent {
        let _ = sftp_client.remove_file(written.as_str()).await;
        return Err(server.lost(&e));
    }
    if replace {
        let _ = sftp_client.remove_file(path.as_str()).await;
        if let Err(e) = sftp_client.rename(written.as_str(), path.as_str()).await {
            let _ = sftp_client.remove_file(written.as_str()).await;
            return Err(server.said(&e, &format!("write {path}")));
        }
    }
    Ok(())
}

async fn sftp_get(server: &sftp::Server, relative: &str, most: u64) -> Result<Option<Vec<u8>>> {
    use tokio::io::AsyncReadExt;
    let path = format!("{}/{relative}", server.root.trim_end_matches('/'));
    let mut file = match server.connected.sftp.open(path.as_str()).await {
        Ok(file) => file,
        Err(e) if sftp::is_status(&e, StatusCode::NoSuchFile) => return Ok(None),
        Err(e) => return Err(server.said(&e, &format!("read {path}"))),
    };
    let mut bytes = Vec::new();
    (&mut file)
        .take(most + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| server.lost(&e))?;
    Ok(Some(bytes))
}

async fn sftp_list(server: &sftp::Server, relative: &str) -> Result<Vec<(String, u64)>> {
    let root = server.root.trim_end_matches('/');
    let mut found = Vec::new();
    let mut folders = vec![relative.to_string()];
    while let Some(name) = folders.pop() {
        let folder = match name.is_empty() {
            true => root.to_string(),
            false => format!("{root}/{name}"),
        };
        let entries = match server.connected.sftp.read_dir(folder.as_str()).await {
            Ok(entries) => entries,
            Err(e) if sftp::is_status(&e, StatusCode::NoSuchFile) => continue,
            Err(e) => return Err(server.said(&e, &format!("list {folder}"))),
        };
        for entry in entries {
            let file_name = entry.file_name();
            if file_name == "." || file_name == ".." {
                continue;
            }
            let child = match name.is_empty() {
                true => file_name,
                false => format!("{name}/{file_name}"),
            };
            let meta = entry.metadata();
            if meta.is_dir() {
                folders.push(child);
            } else if meta.is_regular() {
                found.push((child, meta.size.unwrap_or(0)));
            }
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names from a listing or a catalog cannot climb out of the target's root, nor name a
    /// drive or a device of Windows.
    #[test]
    fn a_name_stays_under_the_root() {
        for bad in [
            "",
            "/etc/passwd",
            "a/../../b",
            "a//b",
            "./a",
            "a\\..\\b",
            "a/.",
            "C:/Users/x/secret.txt",
            "C:x",
            "Bakker/b.zip:stream",
            "Bakker/CON",
            "Bakker/com1.zip",
            "LPT9 .txt/a",
            "Bakker/a\u{7}b",
        ] {
            assert!(checked(bad).is_err(), "{bad:?}");
        }
        for good in [
            "kluis-recovery/catalogs/aa/000000000001.age",
            "Bakker B.V/Bakker 2026-11-26 1946.zip",
            "Console/com10.zip",
            "contoso/nul-ish.zip",
        ] {
            assert_eq!(checked(good).unwrap(), good);
        }
    }

    /// A fetch stops where the caller said the object ends.
    #[test]
    fn a_fetch_stops_at_its_bound() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("b.zip"), vec![7u8; 1000]).unwrap();
        let opened = Opened::Folder {
            name: "NAS".into(),
            root: root.path().to_path_buf(),
        };
        let mut into = Vec::new();
        assert_eq!(
            opened.fetch_object("b.zip", 1000, &mut into).unwrap().0,
            1000
        );
        let mut into = Vec::new();
        assert!(opened.fetch_object("b.zip", 999, &mut into).is_err());
        assert!(into.len() <= 999, "no byte past the bound");
    }

    /// Recovery's objects are not written to a folder target that is not there (a USB disk
    /// unplugged): refused, saying so, and nothing made in its place on this computer's disk.
    #[test]
    fn nothing_is_written_where_an_absent_target_would_be() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("USB disk");
        let opened = Opened::Folder {
            name: "USB disk".into(),
            root: root.clone(),
        };
        let refused = opened
            .put("kluis-recovery/office-key.txt", b"age1...", true)
            .unwrap_err();
        assert!(refused.to_string().contains("is not there"), "{refused}");
        assert!(
            !root.exists(),
            "the disk's folder is not made on this computer"
        );
        std::fs::create_dir(&root).unwrap();
        opened
            .put("kluis-recovery/office-key.txt", b"age1...", true)
            .expect("written once the disk is there");
    }
}
