//! Where a finished download goes, and how it gets there without overwriting anything.

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::writer::PartFile;
use super::Saved;
use crate::error::{Error, Result};

/// `--out`: a folder (the file name comes from the download) or a file path. Always absolute,
/// so a journalled job saves to the same place whatever folder `kluis resume` runs in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Destination {
    Folder(PathBuf),
    File(PathBuf),
    /// In `folder`, named `stem` plus the download's own extension (`Bakker B.V. 2026-11-23
    /// 0200.zip`): the app's unattended backups, named by klant and date.
    Named {
        folder: PathBuf,
        stem: String,
    },
}

impl Destination {
    /// `--out`, as people who use `cp` and `mkdir -p` expect it:
    ///
    /// - an existing folder: save in it (the file keeps the service's name);
    /// - a path ending in a separator (`Backups/`), or one that does not exist and whose name
    ///   has no extension (`~/Backups`, `Bakker B.V.`, `2026.11`): a folder, made (with its
    ///   missing parents, owner-only) before anything is asked of the service;
    /// - any other path (`backup.zip`, an existing file): the file to save, in a folder that
    ///   must exist (a name that is taken gets ` (1)`, as always).
    pub fn from_out(out: &Path) -> Result<Destination> {
        let says_folder = out
            .as_os_str()
            .to_string_lossy()
            .ends_with(std::path::is_separator);
        let out = &absolute(out)?;
        if out.is_dir() {
            return Ok(Destination::Folder(out.to_path_buf()));
        }
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned());
        let folder_to_make =
            !out.exists() && (says_folder || name.as_deref().is_some_and(|n| !has_extension(n)));
        if folder_to_make {
            kluis_private::files::create_dir_all(out).map_err(|e| {
                Error::io(
                    format!("make the folder {} to save the backup in", out.display()),
                    e,
                )
            })?;
            return Ok(Destination::Folder(out.to_path_buf()));
        }
        let parent = match out.parent() {
            Some(p) if p.as_os_str().is_empty() => Path::new("."),
            Some(p) => p,
            None => {
                return Err(Error::Config(format!(
                    "{} is not a place a file can be saved.",
                    out.display()
                )))
            }
        };
        if !parent.is_dir() {
            return Err(Error::Config(format!(
                "The folder {} does not exist. Create it or choose another place to save the backup.",
                parent.display()
            )));
        }
        if name.is_none() {
            return Err(Error::Config(format!(
                "{} does not name a file.",
                out.display()
            )));
        }
        Ok(Destination::File(out.to_path_buf()))
    }

    /// In `folder` (made absolute, like every destination), named `stem` and the download's
    /// extension.
    pub fn named(folder: &Path, stem: String) -> Result<Destination> {
        Ok(Destination::Named {
            folder: absolute(folder)?,
            stem,
        })
    }

    /// The folder the file lands in (the part file is made there too, so the final step is a
    /// same-file-system link or rename).
    pub fn folder(&self) -> &Path {
        match self {
            Destination::Folder(dir) | Destination::Named { folder: dir, .. } => dir,
            Destination::File(path) => path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
        }
    }

    /// The file name to use, given the one the download suggests.
    pub fn file_name(&self, suggested: &str) -> String {
        match self {
            Destination::Folder(_) => suggested.to_string(),
            Destination::File(path) => path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| suggested.to_string()),
            Destination::Named { stem, .. } => format!("{stem}{}", extension(suggested)),
        }
    }
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| Error::io(format!("find {}", path.display()), e))
}

/// Whether `name` ends in a file extension: a dot, then one to eight letters and digits with a
/// letter among them (`.zip`, `.age`, `.tar.gz`, `.bak2`) — not a name's own trailing dot
/// (`Bakker B.V.`) or a number (`archief.2026`).
fn has_extension(name: &str) -> bool {
    name.rfind('.').filter(|&dot| dot > 0).is_some_and(|dot| {
        let ext = &name[dot + 1..];
        (1..=8).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// Where `name`'s extension starts (`.tar.gz` counted whole), if it has one.
fn extension_at(name: &str) -> Option<usize> {
    let lower = name.to_ascii_lowercase();
    let double = [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst"]
        .iter()
        .find(|ext| lower.ends_with(*ext));
    match double {
        Some(ext) => Some(name.len() - ext.len()),
        None => name.rfind('.').filter(|&dot| dot > 0),
    }
}

/// `name`'s extension with its dot (`.zip`, `.tar.gz`), or nothing.
fn extension(name: &str) -> &str {
    extension_at(name).map_or("", |at| &name[at..])
}

/// `name`, or `name (n)` with the counter before the extension (`backup (2).zip`,
/// `data (2).tar.gz`).
pub fn numbered(name: &str, n: u32) -> String {
    if n == 0 {
        return name.to_string();
    }
    match extension_at(name) {
        Some(at) => format!("{} ({n}){}", &name[..at], &name[at..]),
        None => format!("{name} ({n})"),
    }
}

/// Moves `part` to `folder/name`, or the first free `name (n)`, never replacing a file. The
/// link is atomic: the name appears with the whole, fsynced content or not at all.
pub(crate) fn persist_no_overwrite(
    part: PartFile,
    folder: &Path,
    name: &str,
) -> io::Result<PathBuf> {
    for n in 0..10_000 {
        let target = folder.join(numbered(name, n));
        match std::fs::hard_link(part.path(), &target) {
            Ok(()) => {
                std::fs::remove_file(part.path())?;
                part.keep();
                sync_folder(folder);
                return Ok(target);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            // Some file systems (FAT, some network shares) have no hard links: rename instead,
            // after checking the name is free. The window between check and rename is tiny
            // and only matters if another program writes the same name at the same moment.
            Err(_) if !target.exists() => {
                std::fs::rename(part.path(), &target)?;
                part.keep();
                sync_folder(folder);
                return Ok(target);
            }
            Err(_) => continue,
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free file name",
    ))
}

/// Moves a verified, saved file to `target`, where the user chose to keep it.
///
/// `replace`: the user already confirmed replacing an existing file (a save dialog asks);
/// otherwise an existing name gets a ` (n)`. On one file system this is a rename or link.
/// Across file systems the file is copied to a part file beside `target`, hashed again and
/// compared with the recorded SHA-256, fsynced, and only then put in place — the original is
/// removed last, so a failure at any point loses nothing.
pub fn relocate(saved: &Saved, target: &Path, replace: bool) -> Result<Saved> {
    let folder = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Error::Config(format!("{} does not name a file.", target.display())))?;
    let fail = |e: io::Error| Error::io(format!("save the file as {}", target.display()), e);
    if replace {
        match std::fs::rename(&saved.path, target) {
            Ok(()) => {
                sync_folder(folder);
                return Ok(Saved {
                    path: target.to_path_buf(),
                    ..saved.clone()
                });
            }
            Err(e) if e.kind() != io::ErrorKind::CrossesDevices => return Err(fail(e)),
            Err(_) => {}
        }
    } else {
        for n in 0..10_000 {
            let candidate = folder.join(numbered(&name, n));
            match std::fs::hard_link(&saved.path, &candidate) {
                Ok(()) => {
                    std::fs::remove_file(&saved.path).map_err(fail)?;
                    sync_folder(folder);
                    return Ok(Saved {
                        path: candidate,
                        ..saved.clone()
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(_) => break, // another file system, or no hard links there: copy
            }
        }
    }
    let path = match replace {
        true => {
            let part = copy_to_part(&saved.path, saved.on_disk(), folder)?;
            std::fs::rename(part.path(), target).map_err(fail)?;
            part.keep();
            sync_folder(folder);
            target.to_path_buf()
        }
        false => copy_verified(&saved.path, saved.on_disk(), folder, &name)?,
    };
    std::fs::remove_file(&saved.path).map_err(fail)?;
    Ok(Saved {
        path,
        ..saved.clone()
    })
}

/// Copies `source` into `folder` as `name`, or the first free `name (n)`, never replacing a
/// file: written to a part file there, hashed as it is written and compared with `expected`
/// (length, SHA-256), fsynced, and only then given its name. A copy that does not match is
/// removed with its part file; `source` is left as it is. Blocking.
pub fn copy_verified(
    source: &Path,
    expected: (u64, &str),
    folder: &Path,
    name: &str,
) -> Result<PathBuf> {
    let part = copy_to_part(source, expected, folder)?;
    persist_no_overwrite(part, folder, name)
        .map_err(|e| Error::io(format!("save the copy in {}", folder.display()), e))
}

/// `source` copied to a new part file in `folder`, checked against `expected` and fsynced.
fn copy_to_part(source: &Path, expected: (u64, &str), folder: &Path) -> Result<PartFile> {
    let fail = |e: io::Error| Error::io(format!("copy the file into {}", folder.display()), e);
    let (mut file, part) = PartFile::create_in(folder).map_err(fail)?;
    let mut source = std::fs::File::open(source).map_err(fail)?;
    let mut hasher = HashingWriter {
        file: &mut file,
        hasher: Sha256::new(),
    };
    let bytes = io::copy(&mut source, &mut hasher).map_err(fail)?;
    let sha256 = hex::encode(hasher.hasher.finalize());
    if (bytes, sha256.as_str()) != expected {
        return Err(Error::Io(format!(
            "The copy at {} did not match the downloaded file; the download was kept where it was. Try another place.",
            folder.display()
        )));
    }
    file.sync_all().map_err(fail)?;
    Ok(part)
}

struct HashingWriter<'a> {
    file: &'a mut std::fs::File,
    hasher: Sha256,
}

impl io::Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Makes the new directory entry durable (POSIX); a no-op where folders cannot be opened.
fn sync_folder(folder: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(folder) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counter goes before the (double) extension.
    #[test]
    fn numbers_names() {
        assert_eq!(numbered("backup.zip", 0), "backup.zip");
        assert_eq!(numbered("backup.zip", 2), "backup (2).zip");
        assert_eq!(numbered("data.tar.gz", 1), "data (1).tar.gz");
        assert_eq!(numbered("README", 1), "README (1)");
    }

    /// A named destination keeps the download's extension (double ones whole), and has none
    /// when the download has none; it is stored in the journal as it is.
    #[test]
    fn a_named_destination_keeps_the_downloads_extension() {
        let named = Destination::Named {
            folder: "/backups/Bakker".into(),
            stem: "Bakker 2026-11-23 0200".into(),
        };
        assert_eq!(named.folder(), Path::new("/backups/Bakker"));
        assert_eq!(
            named.file_name("owner-backup.zip"),
            "Bakker 2026-11-23 0200.zip"
        );
        assert_eq!(
            named.file_name("export.tar.gz"),
            "Bakker 2026-11-23 0200.tar.gz"
        );
        assert_eq!(named.file_name("owner-backup"), "Bakker 2026-11-23 0200");
        let json = serde_json::to_string(&named).unwrap();
        assert_eq!(serde_json::from_str::<Destination>(&json).unwrap(), named);
    }

    /// Relocating keeps the content, never overwrites unless asked, and removes the original.
    #[test]
    fn relocates_without_overwriting() {
        let dir = tempfile::tempdir().unwrap();
        let staged = dir.path().join("staged.zip");
        std::fs::write(&staged, b"payload").unwrap();
        let saved = Saved {
            path: staged.clone(),
            bytes: 7,
            sha256: hex::encode(Sha256::digest(b"payload")),
            encrypted: None,
        };
        let target = dir.path().join("kept.zip");
        std::fs::write(&target, b"older").unwrap();
        let moved = relocate(&saved, &target, false).unwrap();
        assert_eq!(moved.path, dir.path().join("kept (1).zip"));
        assert_eq!(std::fs::read(&target).unwrap(), b"older");
        assert_eq!(std::fs::read(&moved.path).unwrap(), b"payload");
        assert!(!staged.exists());
        let replaced = relocate(&moved, &target, true).unwrap();
        assert_eq!(std::fs::read(&replaced.path).unwrap(), b"payload");
    }

    /// `--out` to a path that does not exist: a name without an extension, or one ending in a
    /// separator, is a folder, made with its missing parents (it became a file named like the
    /// folder); a name with an extension is a file, and its folder must exist; an existing
    /// file stays a file path.
    #[test]
    fn out_to_a_missing_path_is_the_folder_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let backups = dir.path().join("Backups");
        assert_eq!(
            Destination::from_out(&backups).unwrap(),
            Destination::Folder(backups.clone())
        );
        assert!(backups.is_dir(), "made before the service is asked");
        let nested = dir.path().join("klanten/Bakker B.V.");
        assert_eq!(
            Destination::from_out(&nested).unwrap(),
            Destination::Folder(nested.clone()),
            "a name's own trailing dot is no extension"
        );
        let numbered = dir.path().join("archief.2026");
        assert_eq!(
            Destination::from_out(&numbered).unwrap(),
            Destination::Folder(numbered.clone())
        );
        let trailing = dir.path().join("kopie.zip/");
        assert_eq!(
            Destination::from_out(&trailing).unwrap(),
            Destination::Folder(dir.path().join("kopie.zip")),
            "a separator at the end says folder"
        );
        let file = dir.path().join("backup.zip");
        assert_eq!(
            Destination::from_out(&file).unwrap(),
            Destination::File(file.clone())
        );
        assert!(!file.exists(), "a file path makes nothing");
        assert_eq!(
            Destination::from_out(&dir.path().join("missing/backup.zip"))
                .unwrap_err()
                .code(),
            "config"
        );
        std::fs::write(&file, b"older").unwrap();
        assert_eq!(
            Destination::from_out(&file).unwrap(),
            Destination::File(file.clone()),
            "an existing file stays a file path"
        );
    }

    /// A folder, a file in an existing folder, and a file in a missing folder.
    #[test]
    fn resolves_out() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Destination::from_out(dir.path()).unwrap(),
            Destination::Folder(dir.path().into())
        );
        let file = dir.path().join("x.zip");
        assert_eq!(Destination::from_out(&file).unwrap().folder(), dir.path());
        assert_eq!(
            Destination::from_out(&dir.path().join("missing/x.zip"))
                .unwrap_err()
                .code(),
            "config"
        );
    }
}
