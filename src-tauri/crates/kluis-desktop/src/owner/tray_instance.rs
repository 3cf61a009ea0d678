//! [`TrayInstance`]: the one `kluis-tray` of a data folder (`tray.lock`, held while it runs),
//! and how `kluis-tray --quit` reaches it when its socket cannot: while it waits for the
//! background right (a closing window still finishing its backups), while an upgrade hands
//! it over to the new program (Linux), and before its socket or pipe listens.
//!
//! The instance writes a fresh token into `tray.token` as it takes the lock (a file of its
//! own: on Windows the locked file cannot be read by another process). `--quit`
//! ([`TrayInstance::ask_to_quit`]) leaves that token in `tray.quit` before it asks over the
//! socket; the instance looks for its token there once it has the background right, once its
//! socket listens, and at each of its looks ([`TrayInstance::quit_asked`]). A request left for
//! an instance that is gone names another token: the next one ignores it (the small file
//! stays until the next `--quit` writes over it).
//!
//! Across an upgrade's `exec` the lock is not let go of: its descriptor stays open in the same
//! process ([`TrayInstance::keep_across_exec`]), named in `KLUIS_TRAY_INSTANCE_FD`, and the new
//! program takes it up. So there is no moment in which a `--quit` finds no kluis-tray while the
//! new program is about to start.

use std::fs::File;
use std::path::Path;
use std::path::PathBuf;

use super::{lock_path, try_lock};
use crate::error::AppResult;
use crate::AppPaths;

const LOCK: &str = "tray.lock";
const TOKEN: &str = "tray.token";
const QUIT: &str = "tray.quit";
/// Names the lock's descriptor for the program an upgrade runs in this process's place.
#[cfg(unix)]
const HANDED_OVER_FD: &str = "KLUIS_TRAY_INSTANCE_FD";

/// The one `kluis-tray` of a data folder, held until dropped or the process ends.
#[derive(Debug)]
pub struct TrayInstance {
    /// Held open: the lock lasts as long as the descriptor.
    #[cfg_attr(not(unix), allow(dead_code))]
    lock: File,
    token: String,
    quit_path: PathBuf,
}

/// What `kluis-tray --quit` found.
#[derive(Debug, PartialEq, Eq)]
pub enum QuitAsked {
    /// No `kluis-tray` runs for this data folder.
    NoneRuns,
    /// The request is left for the one that runs (ask it over its socket too: it may be
    /// listening).
    LeftForIt,
}

/// The lock descriptor the program before this one (in the same process) kept across its
/// `exec`, as the environment names it: read — and the variable removed, so that the windows
/// this process starts do not get it — first thing in `main`, before any thread starts.
#[derive(Debug, Default)]
pub struct HandedOver(#[cfg(unix)] Option<std::os::fd::RawFd>);

impl HandedOver {
    pub fn from_env() -> HandedOver {
        #[cfg(unix)]
        {
            let value = std::env::var_os(HANDED_OVER_FD);
            std::env::remove_var(HANDED_OVER_FD);
            let fd = value.and_then(|v| v.to_str()?.parse().ok());
            HandedOver(fd.filter(|fd| *fd >= 0))
        }
        #[cfg(not(unix))]
        HandedOver()
    }
}

impl TrayInstance {
    /// This process as the data folder's `kluis-tray` — the lock `handed_over` by the program
    /// an upgrade replaced in this same process, or taken now; `None` when another one runs.
    pub fn try_take(paths: &AppPaths, handed_over: HandedOver) -> AppResult<Option<TrayInstance>> {
        #[cfg(unix)]
        if let Some(instance) = handed_over.0.and_then(|fd| Self::take_up(paths, fd)) {
            return Ok(Some(instance));
        }
        let _ = handed_over;
        let Some(lock) = try_lock(paths, LOCK)? else {
            return Ok(None);
        };
        Ok(Some(TrayInstance {
            lock,
            token: new_token(paths)?,
            quit_path: lock_path(paths, QUIT),
        }))
    }

    /// `kluis-tray --quit`: the request left for the data folder's `kluis-tray`, if one runs.
    pub fn ask_to_quit(paths: &AppPaths) -> AppResult<QuitAsked> {
        if try_lock(paths, LOCK)?.is_some() {
            return Ok(QuitAsked::NoneRuns);
        }
        let (token_path, quit) = (lock_path(paths, TOKEN), lock_path(paths, QUIT));
        // Read again once the request is written: an instance that had just taken the lock
        // writes its token right after, and the request must name that one.
        let mut token = read_token(&token_path)?;
        for _ in 0..3 {
            kluis_private::files::write_atomic(&quit, token.as_bytes())
                .map_err(|e| io_error("write", &quit, e))?;
            let now = read_token(&token_path)?;
            if now == token {
                break;
            }
            token = now;
        }
        Ok(QuitAsked::LeftForIt)
    }

    /// Whether `kluis-tray --quit` left its request for this instance.
    pub fn quit_asked(&self) -> bool {
        std::fs::read_to_string(&self.quit_path).is_ok_and(|token| token == self.token)
    }

    /// Keeps the lock through the `exec` of the program an upgrade put in place: its
    /// descriptor stays open there, and [`TrayInstance::try_take`] takes it up. Answers the
    /// environment variable to give the new program.
    #[cfg(unix)]
    pub fn keep_across_exec(&self) -> std::io::Result<(&'static str, String)> {
        use std::os::fd::AsRawFd;
        set_close_on_exec(self.lock.as_raw_fd(), false)?;
        Ok((HANDED_OVER_FD, self.lock.as_raw_fd().to_string()))
    }

    /// The `exec` failed: the descriptor is closed at the next one again (a window started
    /// later must not hold the lock).
    #[cfg(unix)]
    pub fn close_on_exec_again(&self) {
        use std::os::fd::AsRawFd;
        let _ = set_close_on_exec(self.lock.as_raw_fd(), true);
    }

    /// Descriptor `fd`, handed over, as this instance: only when it is the data folder's own
    /// `tray.lock` and holds its lock (a stray or hostile variable adopts nothing). Whatever
    /// it is, it is not passed on to the windows this process starts; one that is not taken up
    /// is left open (not this code's to close).
    #[cfg(unix)]
    fn take_up(paths: &AppPaths, fd: std::os::fd::RawFd) -> Option<TrayInstance> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        use std::os::unix::fs::MetadataExt;
        let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: fstat only writes the stat buffer, and only reads the descriptor number.
        if unsafe { libc::fstat(fd, stat.as_mut_ptr()) } != 0 {
            return None;
        }
        set_close_on_exec(fd, true).ok()?;
        // SAFETY: fstat succeeded, so it filled the buffer.
        let stat = unsafe { stat.assume_init() };
        let lock_file = std::fs::metadata(lock_path(paths, LOCK)).ok()?;
        #[allow(clippy::unnecessary_cast)] // (other types than u64 on some unix systems)
        if stat.st_dev as u64 != lock_file.dev() || stat.st_ino as u64 != lock_file.ino() {
            return None;
        }
        // SAFETY: the descriptor is open and is this data folder's lock file, handed over to
        // this process's new program; given back below unless it holds the lock.
        let lock = unsafe { File::from_raw_fd(fd) };
        // (Locking again through the description that holds the lock succeeds; through
        // another one, while the lock is held, it does not.)
        if lock.try_lock().is_err() {
            let _ = lock.into_raw_fd();
            return None;
        }
        // The instance's token goes on (a request left for it during the exec names it).
        let token = match read_token(&lock_path(paths, TOKEN)) {
            Ok(token) if !token.is_empty() => token,
            // (The lock is kept whatever: a token only in memory is heard by no `--quit`
            // until the next instance, but nothing else starts meanwhile.)
            _ => new_token(paths).unwrap_or_else(|_| uuid::Uuid::new_v4().simple().to_string()),
        };
        Some(TrayInstance {
            lock,
            token,
            quit_path: lock_path(paths, QUIT),
        })
    }
}

impl Drop for TrayInstance {
    /// A request that was for this instance is answered as it ends.
    fn drop(&mut self) {
        if self.quit_asked() {
            let _ = std::fs::remove_file(&self.quit_path);
        }
    }
}

/// A fresh token for the instance that took the lock, written (whole, owner-only) where
/// `--quit` reads it.
fn new_token(paths: &AppPaths) -> AppResult<String> {
    let token = uuid::Uuid::new_v4().simple().to_string();
    let path = lock_path(paths, TOKEN);
    kluis_private::files::write_atomic(&path, token.as_bytes())
        .map_err(|e| io_error("write", &path, e))?;
    Ok(token)
}

/// The token of the instance holding the lock (none: one of a version before tokens).
fn read_token(path: &Path) -> AppResult<String> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        read => read.map_err(|e| io_error("read", path, e)),
    }
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> crate::AppError {
    kluis_core::Error::io(format!("{what} {}", path.display()), e).into()
}

#[cfg(unix)]
fn set_close_on_exec(fd: std::os::fd::RawFd, close: bool) -> std::io::Result<()> {
    // SAFETY: F_GETFD/F_SETFD on a descriptor this process owns change only its flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let flags = if close {
            flags | libc::FD_CLOEXEC
        } else {
            flags & !libc::FD_CLOEXEC
        };
        if libc::fcntl(fd, libc::F_SETFD, flags) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--quit` with no kluis-tray running leaves nothing; with one, its request names that
    /// instance — which sees it, and removes it as it ends; the next instance does not take
    /// up a request left for one that is gone.
    #[test]
    fn a_quit_request_names_the_instance_that_runs() {
        let dir = tempfile::tempdir().unwrap();
        let paths = AppPaths::under(dir.path());
        assert_eq!(
            TrayInstance::ask_to_quit(&paths).unwrap(),
            QuitAsked::NoneRuns
        );
        let quit = lock_path(&paths, QUIT);
        assert!(!quit.exists(), "no request left when none runs");

        let first = TrayInstance::try_take(&paths, HandedOver::default())
            .unwrap()
            .unwrap();
        assert!(!first.quit_asked());
        assert_eq!(
            TrayInstance::ask_to_quit(&paths).unwrap(),
            QuitAsked::LeftForIt
        );
        assert!(first.quit_asked(), "the request names the running instance");
        drop(first);
        assert!(!quit.exists(), "answered as it ended");

        let second = TrayInstance::try_take(&paths, HandedOver::default())
            .unwrap()
            .unwrap();
        TrayInstance::ask_to_quit(&paths).unwrap();
        let stale = std::fs::read(&quit).unwrap();
        drop(second);
        std::fs::write(&quit, stale).unwrap(); // (as if the second had been killed)
        let third = TrayInstance::try_take(&paths, HandedOver::default())
            .unwrap()
            .unwrap();
        assert!(
            !third.quit_asked(),
            "a request left for an instance that is gone is not the next one's"
        );
    }

    /// A descriptor handed over is taken up only when it is the data folder's `tray.lock`
    /// holding the lock (then with the instance's token); another file, another open of the
    /// lock file that holds nothing, or no descriptor at all adopts nothing. Each that is open
    /// stays open, and none is passed on to a program this process starts.
    #[cfg(unix)]
    #[test]
    fn a_handed_over_descriptor_is_taken_up_only_when_it_holds_the_lock() {
        use std::os::fd::{AsRawFd, IntoRawFd};
        let dir = tempfile::tempdir().unwrap();
        let paths = AppPaths::under(dir.path());
        let running = TrayInstance::try_take(&paths, HandedOver::default())
            .unwrap()
            .unwrap();
        let close_on_exec = |fd| {
            // SAFETY: reads a descriptor's flags.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            assert!(flags >= 0, "descriptor {fd} is still open");
            flags & libc::FD_CLOEXEC != 0
        };

        // The same open description, as an exec keeps it (a dup shares it, without
        // close-on-exec).
        // SAFETY: dup of a descriptor this test owns.
        let kept = unsafe { libc::dup(running.lock.as_raw_fd()) };
        let taken = TrayInstance::take_up(&paths, kept).expect("taken up");
        assert_eq!(taken.token, running.token, "the same instance");
        assert!(close_on_exec(kept), "not passed on to a window");

        let other_open = File::open(lock_path(&paths, LOCK)).unwrap().into_raw_fd();
        assert!(
            TrayInstance::take_up(&paths, other_open).is_none(),
            "an open of tray.lock that does not hold the lock"
        );
        assert!(close_on_exec(other_open), "left open, not passed on");
        let not_the_lock = File::create(dir.path().join("other"))
            .unwrap()
            .into_raw_fd();
        assert!(TrayInstance::take_up(&paths, not_the_lock).is_none());
        assert!(close_on_exec(not_the_lock));
        assert!(
            TrayInstance::take_up(&paths, 1 << 20).is_none(),
            "no such descriptor"
        );
        // SAFETY: closes the two descriptors this test opened.
        unsafe {
            libc::close(other_open);
            libc::close(not_the_lock);
        }
        drop(taken);
    }
}
