//! Staged downloads: without "Always save to this folder", a backup downloads into its own
//! owner-only folder `<staging>/<job id>` and waits there for the save dialog.
//!
//! What is in such a folder is only ever removed when it is provably Kluis's leftover, never on
//! a guess: at start, a folder whose job is unfinished (the app's or `kluis resume`'s) is kept
//! for the resume; one that holds a file the history lists as saved is kept and offered to the
//! save dialog again ([`saved_in_staging`]); of any other folder only Kluis's own hidden part
//! files go, and the folder itself only when that leaves it empty.

use std::path::{Path, PathBuf};

use kluis_core::{History, Saved, Stage};
use uuid::Uuid;

use crate::error::AppResult;

/// Clears what earlier runs left in `staging_dir` (see the module's rules).
pub fn clear_leftovers(history: &History, staging_dir: &Path) -> AppResult<()> {
    let unfinished: Vec<Uuid> = history.unfinished()?.iter().map(|j| j.id()).collect();
    for (id, folder) in job_folders(staging_dir) {
        if unfinished.contains(&id) || staged_file(history, id, &folder)?.is_some() {
            continue;
        }
        remove_parts(&folder);
    }
    Ok(())
}

/// Removes a finished or failed job's folder: its hidden part files, then the folder if that
/// leaves it empty (a file the user put there stays, and so does the folder).
pub fn remove_parts(folder: &Path) {
    if let Ok(files) = std::fs::read_dir(folder) {
        for file in files.flatten() {
            let name = file.file_name();
            let name = name.to_string_lossy();
            let is_part = name.starts_with(".kluis-") && name.ends_with(".part");
            if is_part && file.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(file.path());
            }
        }
    }
    let _ = std::fs::remove_dir(folder);
}

/// Removes a staged job's folder once its file was moved out (or it was given up).
pub fn remove_folder_of(saved: &Saved, folder: &Path) {
    if saved.path.parent() == Some(folder) {
        let _ = std::fs::remove_file(&saved.path);
    }
    remove_parts(folder);
}

/// The verified file of job `id` that waits in `folder` for the save dialog, if the history
/// lists it as saved there and it is still there.
fn staged_file(history: &History, id: Uuid, folder: &Path) -> AppResult<Option<Saved>> {
    let Some(entry) = history.get(id)? else {
        return Ok(None);
    };
    let (Some(path), Some(bytes), Some(sha256)) = (&entry.path, entry.bytes, &entry.sha256) else {
        return Ok(None);
    };
    let path = PathBuf::from(path);
    let on_disk = entry.on_disk().map(|(len, _)| len);
    let waiting = entry.reached() == Stage::Saved
        && path.parent() == Some(folder)
        && std::fs::metadata(&path).is_ok_and(|m| m.is_file() && Some(m.len()) == on_disk);
    Ok(waiting.then(|| Saved {
        path,
        bytes,
        sha256: sha256.clone(),
        encrypted: entry.encrypted.clone(),
    }))
}

/// The saved backups still waiting in `staging_dir` for a place (the app was closed before the
/// user chose one, or `kluis resume --include-app` finished the job): job, file and folder.
pub fn saved_in_staging(
    history: &History,
    staging_dir: &Path,
) -> AppResult<Vec<(Uuid, Saved, PathBuf)>> {
    let mut waiting = Vec::new();
    for (id, folder) in job_folders(staging_dir) {
        if let Some(saved) = staged_file(history, id, &folder)? {
            waiting.push((id, saved, folder));
        }
    }
    Ok(waiting)
}

/// The folders in `staging_dir` named by a job id (any other entry is not ours to judge).
fn job_folders(staging_dir: &Path) -> Vec<(Uuid, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(staging_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let id = Uuid::parse_str(entry.file_name().to_str()?).ok()?;
            Some((id, entry.path()))
        })
        .collect()
}
