//! The program file this process was started from, and whether a new one stands in its place,
//! ready to run: a package upgrade (dpkg, apt) puts the new `kluis-tray` under the same name as
//! a new file, while the old one runs on from the file it opened. Without this, the old program
//! would keep the plans until the next log-out or *Quit*; with it the keeper hands over to the
//! new one (see `keeper`).

use std::path::{Path, PathBuf};

/// A program file, the file this process runs, and the new file last seen in its place.
pub struct ProgramFile {
    path: PathBuf,
    running: Option<FileState>,
    /// A new file seen at the last look: it is taken once it is the same at the next one (an
    /// upgrade still writing it, or writing the files it needs, is left to finish).
    seen: Option<FileState>,
}

/// What tells one file from another, and a file being written from a finished one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct FileState {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl ProgramFile {
    /// This process's own program; `None` where it cannot be told.
    pub fn this_process() -> Option<ProgramFile> {
        let path = std::env::current_exe().ok()?;
        // The file this process runs, even if another was put at its name since it started
        // (on Linux the process's own link still leads to it); elsewhere the name's file now.
        let running = ["/proc/self/exe", path.to_str().unwrap_or_default()]
            .iter()
            .find_map(|p| look(Path::new(p)))
            .map(|(file, _)| file);
        Some(ProgramFile::new(path, running))
    }

    /// The program at `path`, as it is now (tests).
    pub fn at(path: PathBuf) -> ProgramFile {
        let running = look(&path).map(|(file, _)| file);
        ProgramFile::new(path, running)
    }

    fn new(path: PathBuf, running: Option<FileState>) -> ProgramFile {
        ProgramFile {
            path,
            running,
            seen: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a new program stands at the path, ready to run in this one's place: another file
    /// than the one running, unchanged since the last look, executable, its owner root or this
    /// user, and writable by no one else. A program removed (the package removed) is not
    /// replaced: there is nothing to start in its place.
    pub fn replaced(&mut self) -> bool {
        let now = look(&self.path).filter(|(file, _)| Some(*file) != self.running);
        let seen = std::mem::replace(&mut self.seen, now.map(|(file, _)| file));
        now.is_some_and(|(file, may_run)| Some(file) == seen && may_run)
    }
}

/// The regular file at `path`, from one look at it: which file it is, and whether it may run —
/// executable, and no one but root and this user can have put what is in it.
#[cfg(target_os = "linux")]
fn look(path: &Path) -> Option<(FileState, bool)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let file = FileState {
        device: meta.dev(),
        inode: meta.ino(),
        len: meta.len(),
        modified: meta.modified().ok(),
    };
    // SAFETY: getuid has no preconditions and cannot fail.
    let me = unsafe { libc::getuid() };
    let mode = meta.mode();
    let may_run = mode & 0o111 != 0 && mode & 0o022 == 0 && (meta.uid() == 0 || meta.uid() == me);
    meta.is_file().then_some((file, may_run))
}

// (Elsewhere a replaced program is not noticed: on Windows the setup asks kluis-tray to quit
// before it replaces it, and starts it again — src-tauri/windows/kluis.nsi.)
#[cfg(not(target_os = "linux"))]
fn look(_path: &Path) -> Option<(FileState, bool)> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn put(path: &Path, content: &[u8], mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        let new = path.with_extension("new");
        std::fs::write(&new, content).unwrap();
        std::fs::set_permissions(&new, std::fs::Permissions::from_mode(mode)).unwrap();
        std::fs::rename(&new, path).unwrap();
    }

    /// A file put in place under the program's name (as dpkg does: a new file renamed over the
    /// old) is a replacement once it is the same at two looks; the file it started from is not,
    /// nor one still changing, nor one that is not executable or that others may write, nor
    /// none at all.
    #[test]
    fn a_new_program_in_its_place_is_taken_once_it_is_ready() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kluis-tray");
        put(&path, b"old", 0o755);
        let mut program = ProgramFile::at(path.clone());
        assert!(!program.replaced(), "the file it started from");
        assert!(!program.replaced(), "the file it started from, again");

        put(&path, b"new", 0o755);
        assert!(!program.replaced(), "a new file, at its first look");
        put(&path, b"newer", 0o755);
        assert!(!program.replaced(), "changed since the last look");
        assert!(program.replaced(), "the same at two looks: taken");

        put(&path, b"not executable", 0o644);
        program.replaced();
        assert!(!program.replaced(), "not executable");
        put(&path, b"anyone may write it", 0o757);
        program.replaced();
        assert!(!program.replaced(), "others may write it");

        std::fs::remove_file(&path).unwrap();
        program.replaced();
        assert!(
            !program.replaced(),
            "removed: nothing to start in its place"
        );
    }
}
