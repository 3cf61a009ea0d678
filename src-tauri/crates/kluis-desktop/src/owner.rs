//! Which process runs a data folder's background work — the plans, the copies left to make, the
//! look for overdue klanten, the office's report, the look for updates and the tray icon — and
//! how the two programs that can run it start each other.
//!
//! Two programs share one data folder: `kluis-app`, the window (a web-engine process of
//! hundreds of MiB: WebKitGTK on Linux, WebView2 on Windows), and `kluis-tray`, the small process without a web engine that keeps the
//! plans while the window is closed. Exactly one of them runs the background work, the one that
//! holds [`BackgroundOwner`]: an exclusive lock on `background.lock` beside the history, which
//! the OS lets go of however the process ends (as kluis-core's job claims are). So a window
//! that closes and the tray process that takes over never both start the plans, and neither
//! waits for a process that is gone.
//!
//! `kluis-tray` itself runs once per data folder: [`TrayInstance`] (`tray.lock`), which also
//! carries a `kluis-tray --quit` to an instance that cannot hear it yet.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use crate::error::AppResult;
use crate::AppPaths;

mod tray_instance;
pub use tray_instance::{HandedOver, QuitAsked, TrayInstance};

/// The program that keeps the plans while the window is closed (beside `kluis-app`).
pub const TRAY_PROGRAM: &str = "kluis-tray";
/// The window's program (beside `kluis-tray`).
pub const WINDOW_PROGRAM: &str = "kluis-app";
/// `kluis-tray`'s flag when a closing window started it: it says once where Kluis went.
pub const AFTER_WINDOW_FLAG: &str = "--after-window";

/// What a window asks of the `kluis-tray` whose backups it follows (`mirror`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrayRequest {
    /// *Cancel* on one of its backups.
    Cancel(uuid::Uuid),
    /// *Cancel all*.
    CancelAll,
    /// *Quit Kluis* (`kluis-tray --quit`: where no tray icon shows its menu).
    Quit,
}

/// The right to run a data folder's background work (see the module's text), held until
/// dropped or the process ends.
#[derive(Debug)]
pub struct BackgroundOwner {
    _lock: File,
}

impl BackgroundOwner {
    /// The right, if no other process holds it now.
    pub fn try_take(paths: &AppPaths) -> AppResult<Option<BackgroundOwner>> {
        Ok(try_lock(paths, "background.lock")?.map(|lock| BackgroundOwner { _lock: lock }))
    }

    /// The right, waited for (on this thread) until the process that holds it lets go.
    pub fn take(paths: &AppPaths) -> AppResult<BackgroundOwner> {
        let lock = open_lock(&lock_path(paths, "background.lock"))?;
        lock.lock().map_err(|e| lock_error(paths, e))?;
        Ok(BackgroundOwner { _lock: lock })
    }
}

/// Starts `program` (one of Kluis's, in this program's own folder) with `args`; it inherits
/// this process's environment (so `KLUIS_DATA_DIR`, and with it the data folder) and outlives
/// it. Nothing secret is in its arguments.
pub fn start_beside(program: &str, args: &[&str]) -> std::io::Result<Child> {
    let here = std::env::current_exe()?;
    let folder = here.parent().unwrap_or(Path::new("."));
    let path = folder.join(format!("{program}{}", std::env::consts::EXE_SUFFIX));
    let mut command = Command::new(path);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    command.spawn()
}

/// Whether plans are set in `paths`' profiles file (paused as a whole or not): then they are
/// to be kept while the window is closed. A file that cannot be read counts as none set.
pub fn plans_set(paths: &AppPaths) -> bool {
    crate::profiles::ProfileStore::open(paths.profiles_file.clone())
        .is_ok_and(|profiles| profiles.plans_active())
}

/// Lock file `name` locked, if no other process holds it now.
fn try_lock(paths: &AppPaths, name: &str) -> AppResult<Option<File>> {
    let lock = open_lock(&lock_path(paths, name))?;
    match lock.try_lock() {
        Ok(()) => Ok(Some(lock)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(lock_error(paths, e)),
    }
}

/// A lock file beside the history (the data folder of this computer).
fn lock_path(paths: &AppPaths, name: &str) -> PathBuf {
    paths.history_db.with_file_name(name)
}

fn open_lock(path: &Path) -> AppResult<File> {
    if let Some(dir) = path.parent() {
        kluis_private::files::create_dir_all(dir)
            .map_err(|e| kluis_core::Error::io(format!("create {}", dir.display()), e))?;
    }
    let file = kluis_private::files::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| kluis_core::Error::io(format!("open {}", path.display()), e))?;
    Ok(file)
}

fn lock_error(paths: &AppPaths, e: std::io::Error) -> crate::AppError {
    let dir = paths.history_db.parent().unwrap_or(Path::new("."));
    kluis_core::Error::io(format!("lock a file in {}", dir.display()), e).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One owner at a time: a second process (here: a second open of the lock, which the OS
    /// treats alike) is refused while the first holds it, and one waiting for it takes it once
    /// the first lets go.
    #[test]
    fn one_owner_at_a_time_and_the_next_takes_over() {
        let dir = tempfile::tempdir().unwrap();
        let paths = AppPaths::under(dir.path());
        let first = BackgroundOwner::try_take(&paths).unwrap();
        assert!(first.is_some(), "nobody held it");
        assert!(
            BackgroundOwner::try_take(&paths).unwrap().is_none(),
            "held by the first"
        );
        let waiting = {
            let paths = paths.clone();
            std::thread::spawn(move || BackgroundOwner::take(&paths).map(|_| ()))
        };
        drop(first);
        waiting.join().unwrap().expect("the waiting one takes over");
        assert!(BackgroundOwner::try_take(&paths).unwrap().is_some());

        let tray = TrayInstance::try_take(&paths, HandedOver::default()).unwrap();
        assert!(tray.is_some());
        assert!(
            TrayInstance::try_take(&paths, HandedOver::default())
                .unwrap()
                .is_none(),
            "one kluis-tray per data folder"
        );
        assert!(
            BackgroundOwner::try_take(&paths).unwrap().is_some(),
            "the tray's own instance is not the background's right"
        );
    }
}
