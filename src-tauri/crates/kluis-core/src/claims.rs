//! Claims: which process runs a job. A claim is an exclusive lock on a small file beside the
//! database, held for as long as the job runs; the operating system lets go of it when the
//! process ends in any way (even `kill -9` or a power cut), so a job is never run twice at once
//! and never left waiting for a process that is gone. A leaf: the history holds its
//! [`Claims`], the journal and the job take [`Claim`]s through the history.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use crate::error::{Error, Result};

/// Where claims are kept.
pub(crate) enum Claims {
    /// Lock files in this folder (beside the database).
    Folder(PathBuf),
    /// In this process only (an in-memory history).
    Memory(Arc<Mutex<HashSet<Uuid>>>),
}

impl Claims {
    pub(crate) fn beside(db: &Path) -> Claims {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".running");
        Claims::Folder(db.with_file_name(name))
    }

    pub(crate) fn in_memory() -> Claims {
        Claims::Memory(Arc::default())
    }
}

/// The right to run one job, held until dropped.
pub struct Claim {
    _lock: Option<File>,
    memory: Option<(Arc<Mutex<HashSet<Uuid>>>, Uuid)>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some((set, id)) = self.memory.take() {
            set.lock().unwrap().remove(&id);
        }
        // A lock file is left in place: removing it could let two processes lock two
        // different files of the same name. `Claims::forget` removes it once the job
        // has ended, and a claimant always re-reads the job after locking.
    }
}

impl Claims {
    /// Claims job `id` for this process; `None` when another process (or task) runs it.
    pub(crate) fn take(&self, id: Uuid) -> Result<Option<Claim>> {
        match self {
            Claims::Memory(set) => Ok(set.lock().unwrap().insert(id).then(|| Claim {
                _lock: None,
                memory: Some((set.clone(), id)),
            })),
            Claims::Folder(folder) => {
                let io = |e| Error::io(format!("use {}", folder.display()), e);
                kluis_private::files::create_dir_all(folder).map_err(io)?;
                let file = kluis_private::files::options()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(folder.join(format!("{id}.lock")))
                    .map_err(io)?;
                match file.try_lock() {
                    Ok(()) => Ok(Some(Claim {
                        _lock: Some(file),
                        memory: None,
                    })),
                    Err(std::fs::TryLockError::WouldBlock) => Ok(None),
                    Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
                }
            }
        }
    }

    /// Removes an ended job's lock file.
    pub(crate) fn forget(&self, id: Uuid) {
        if let Claims::Folder(folder) = self {
            let _ = std::fs::remove_file(folder.join(format!("{id}.lock")));
        }
    }
}
