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

use std::io::Write;
use std::path::Path;

use kluis_core::{Error, Result};
use russh_sftp::protocol::StatusCode;

use crate::{on_runtime, sftp, Opened};

mod in_bucket;
mod in_folder;
mod on_sftp;

use in_bucket::{bucket_get, bucket_key, bucket_list, bucket_put};
use in_folder::{folder_get, folder_list, folder_put};
use on_sftp::{sftp_get, sftp_list, sftp_put};

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
    /// unplugged) or not marked as the target: refused, saying so, and nothing made in its
    /// place on this computer's disk.
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
        crate::folder::test("USB disk", &root).unwrap(); // plugged in: the disk, as it was added
        opened
            .put("kluis-recovery/office-key.txt", b"age1...", true)
            .expect("written once the disk is there");
    }
}
