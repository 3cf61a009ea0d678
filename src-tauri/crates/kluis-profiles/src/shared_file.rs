//! One JSON file that several Kluis processes change: the app, which stays open for days, and
//! `kluis` commands run beside it (`kluis plan`, `kluis mail set`, a timer's `run-due`). Each
//! keeps a copy in memory; without care the app's next write would put back its old copy over
//! what a command just saved. So:
//! - a read first looks whether the file changed since it was last read or written (its
//!   length, modification time and, on Unix, inode — an atomic write is a new file) and reads
//!   it again if so;
//! - a change is made under an exclusive lock on a file beside it (`<name>.lock`; the OS lets
//!   go of it however the process ends), to the file's newest content, and written atomically
//!   before the lock is let go — so two changes at the same moment both land.

use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::ProfileResult;

/// What tells one version of the file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl Stamp {
    fn of(meta: &Metadata) -> Stamp {
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(meta);
        #[cfg(not(unix))]
        let inode = 0;
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode,
        }
    }
}

struct Cached<T> {
    value: T,
    /// The file's stamp when `value` was read or written (`None`: no file yet).
    seen: Option<Stamp>,
}

/// A JSON file shared between processes, or memory only (tests).
pub(crate) struct SharedJson<T> {
    path: Option<PathBuf>,
    copy: Mutex<Cached<T>>,
}

impl<T: Serialize + DeserializeOwned + Default + Clone> SharedJson<T> {
    /// Reads `path` (none yet: the default). A file that cannot be parsed is kept aside as
    /// `*.unreadable`, so nothing is lost, and the default is used.
    pub fn open(path: PathBuf) -> ProfileResult<Self> {
        let mut copy = Cached {
            value: T::default(),
            seen: None,
        };
        refresh(&path, &mut copy)?;
        Ok(SharedJson {
            path: Some(path),
            copy: Mutex::new(copy),
        })
    }

    pub fn in_memory() -> Self {
        SharedJson {
            path: None,
            copy: Mutex::new(Cached {
                value: T::default(),
                seen: None,
            }),
        }
    }

    /// `look` at the newest content. A file that cannot be read now (a moment's I/O error)
    /// leaves the copy last read: a read never fails.
    pub fn read<R>(&self, look: impl FnOnce(&T) -> R) -> R {
        let mut copy = self.copy.lock().unwrap();
        if let Some(path) = &self.path {
            if let Err(e) = refresh(path, &mut copy) {
                tracing::warn!(%e, "the profiles file could not be read again; using the copy read before");
            }
        }
        look(&copy.value)
    }

    /// Applies `change` to the newest content and writes the result, all under the file's
    /// lock. When `change` fails, nothing is written and the error is returned.
    pub fn change<R>(&self, change: impl FnOnce(&mut T) -> ProfileResult<R>) -> ProfileResult<R> {
        let mut copy = self.copy.lock().unwrap();
        let _lock = match &self.path {
            Some(path) => {
                let dir = path.parent().unwrap_or(Path::new("."));
                kluis_private::files::create_dir_all(dir)
                    .map_err(|e| io_error("write", path, e))?;
                let lock = lock(path)?;
                refresh(path, &mut copy)?;
                Some(lock)
            }
            None => None,
        };
        // Changed on a copy, so a change that fails half-way leaves nothing behind (in
        // memory too).
        let mut value = copy.value.clone();
        let answer = change(&mut value)?;
        if let Some(path) = &self.path {
            let bytes = serde_json::to_vec_pretty(&value).expect("settings serialise");
            kluis_private::files::write_atomic(path, &bytes)
                .map_err(|e| io_error("write", path, e))?;
            copy.seen = Some(Stamp::of(
                &std::fs::metadata(path).map_err(|e| io_error("write", path, e))?,
            ));
        }
        copy.value = value;
        Ok(answer)
    }
}

/// Reads `path` again into `copy` when it changed since `copy` was taken. An unparsable file
/// (written by hand, or by something else) is kept aside and `copy` kept as it was.
fn refresh<T: DeserializeOwned>(path: &Path, copy: &mut Cached<T>) -> ProfileResult<()> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error("read", path, e)),
    };
    let stamp = Stamp::of(&meta);
    if copy.seen == Some(stamp) {
        return Ok(());
    }
    let bytes = std::fs::read(path).map_err(|e| io_error("read", path, e))?;
    match serde_json::from_slice(&bytes) {
        Ok(value) => copy.value = value,
        Err(e) => {
            tracing::warn!(%e, "the profiles file is unreadable; keeping it aside");
            let _ = std::fs::rename(path, path.with_extension("unreadable"));
        }
    }
    copy.seen = Some(stamp);
    Ok(())
}

/// The exclusive lock beside `path`, held until the returned file is dropped. A change takes
/// milliseconds, so waiting for another process's is short.
fn lock(path: &Path) -> ProfileResult<File> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let lock_path = path.with_file_name(name);
    let file = kluis_private::files::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| io_error("lock", &lock_path, e))?;
    file.lock().map_err(|e| io_error("lock", &lock_path, e))?;
    Ok(file)
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> crate::ProfileError {
    kluis_core::Error::io(format!("{what} {}", path.display()), e).into()
}
