//! Where a finished download goes, and how it gets there without overwriting anything.

use std::io;
use std::path::{Path, PathBuf};

use super::writer::PartFile;
use crate::error::{Error, Result};

/// `--out`: a folder (the file name comes from the download) or a file path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Folder(PathBuf),
    File(PathBuf),
}

impl Destination {
    /// An existing folder means "save in it"; anything else is a file path whose folder must
    /// exist.
    pub fn from_out(out: &Path) -> Result<Destination> {
        if out.is_dir() {
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
        if out.file_name().is_none() {
            return Err(Error::Config(format!(
                "{} does not name a file.",
                out.display()
            )));
        }
        Ok(Destination::File(out.to_path_buf()))
    }

    /// The folder the file lands in (the part file is made there too, so the final step is a
    /// same-file-system link or rename).
    pub fn folder(&self) -> &Path {
        match self {
            Destination::Folder(dir) => dir,
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
        }
    }
}

/// `name`, or `name (n)` with the counter before the extension (`backup (2).zip`,
/// `data (2).tar.gz`).
pub fn numbered(name: &str, n: u32) -> String {
    if n == 0 {
        return name.to_string();
    }
    let lower = name.to_ascii_lowercase();
    let double = [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst"]
        .iter()
        .find(|ext| lower.ends_with(*ext));
    let split = match double {
        Some(ext) => Some(name.len() - ext.len()),
        None => name.rfind('.').filter(|&dot| dot > 0),
    };
    match split {
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
