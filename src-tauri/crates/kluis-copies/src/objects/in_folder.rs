//! Recovery's objects in a folder target: files under its root, written whole, never made
//! where the root itself is missing.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use kluis_core::{Error, Result};

pub(super) fn folder_put(
    name: &str,
    root: &Path,
    relative: &str,
    bytes: &[u8],
    replace: bool,
) -> Result<()> {
    // A root that is not there, or not marked as the target, is a disk unplugged or a share
    // not mounted: writing (or making it) would put recovery's objects on this computer's own
    // disk — and the next copies after them, taking it for the target. See `folder`.
    crate::folder::ready(name, root)?;
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

pub(super) fn folder_get(root: &Path, relative: &str, most: u64) -> Result<Option<Vec<u8>>> {
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

pub(super) fn folder_list(root: &Path, relative: &str) -> Vec<(String, u64)> {
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
