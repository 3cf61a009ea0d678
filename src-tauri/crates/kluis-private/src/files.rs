//! Owner-only files and folders, whatever the umask.
//!
//! Everything a Kluis program creates — backups and their part files, staging folders, the
//! history and relay databases, profile and settings files — holds an organisation's books or
//! what leads to them, so it is made readable by its owner only: files 0600, folders 0700. The
//! mode is given when the file or folder is created (never a window in which it is 0644), and
//! Kluis's own databases are tightened when an older version left them open. Folders the user
//! chose are never changed: only what Kluis creates in them.
//!
//! On Windows "owner-only" is an ACL (`acl`): a protected DACL that grants the running user
//! full control and nobody else anything. Folders Kluis creates pass it on to what is created
//! in them; a file Kluis creates elsewhere (a part file in the user's backup folder) gets it
//! while still empty, and keeps it when it is renamed into the backup.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

#[cfg(windows)]
mod acl;
#[cfg(windows)]
pub use acl::{ObjectSecurity, OwnerOnlySecurity};

/// Mode of every file Kluis creates.
pub const FILE_MODE: u32 = 0o600;
/// Mode of every folder Kluis creates.
pub const FOLDER_MODE: u32 = 0o700;

/// Whether a file or folder belongs to the user running Kluis (always so where the system has
/// no Unix owners).
pub fn is_own(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        meta.uid() == unsafe { libc::geteuid() }
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// Whether no other user may read, write or enter it (its group and other bits are clear;
/// always so where the system has no Unix modes).
pub fn is_closed_to_others(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.mode() & 0o077 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// `OpenOptions` whose `create`/`create_new` makes an owner-only file (on Windows: in a folder
/// Kluis made, whose ACL it inherits; elsewhere, [`restrict`] it while it is empty).
pub fn options() -> OpenOptions {
    #[allow(unused_mut)]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options
}

/// Creates `path` and any missing parents as owner-only folders (existing ones are left as
/// they are).
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    #[cfg(windows)]
    let missing: Vec<&Path> = path
        .ancestors()
        .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
        .collect();
    #[allow(unused_mut)]
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(FOLDER_MODE);
    }
    builder.create(path)?;
    // Outermost first: each then passes its entry on to the next.
    #[cfg(windows)]
    for folder in missing.into_iter().rev() {
        acl::restrict_path(folder, true)?;
    }
    Ok(())
}

/// Writes `contents` to a new owner-only file beside `path` and renames it over `path`, so a
/// reader sees the old or the new file, whole, and never a file others may read.
///
/// The file beside it has a random name and is created exclusively (`O_EXCL`, as `tempfile`
/// does): in a folder others can write (a group or network share), whatever they plant there
/// — a link to one of the user's files above all — is never opened, truncated or chmodded.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let (temp, mut file) = create_beside(folder, &name)?;
    let result = (|| {
        restrict(&file)?;
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// A new owner-only file `.{name}.{random}.tmp` in `folder`, created exclusively: a name that
/// is taken (by anything, a link included) is never opened, and another is tried.
fn create_beside(folder: &Path, name: &str) -> io::Result<(std::path::PathBuf, File)> {
    let mut tries = 0;
    loop {
        let temp = folder.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
        match options().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Makes an existing file of Kluis's own (a database an older version created 0644) owner-only.
pub fn restrict_path(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::symlink_metadata(path)?;
        let mode = if meta.is_dir() {
            FOLDER_MODE
        } else {
            FILE_MODE
        };
        if meta.permissions().mode() & 0o777 != mode {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(windows)]
    acl::restrict_path(path, std::fs::symlink_metadata(path)?.is_dir())?;
    #[cfg(not(any(unix, windows)))]
    let _ = path;
    Ok(())
}

/// Makes an open file owner-only (it may have been created by an older version).
pub fn restrict(file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if file.metadata()?.permissions().mode() & 0o777 != FILE_MODE {
            file.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
        }
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        acl::restrict_handle(file.as_raw_handle())?;
    }
    #[cfg(not(any(unix, windows)))]
    let _ = file;
    Ok(())
}

/// Creates an empty owner-only file at `path` if there is none, and makes an existing one
/// owner-only: called before a library (SQLite) opens the path with its own default mode.
/// SQLite gives its `-wal` and `-shm` files the database file's mode.
pub fn prepare_file(path: &Path) -> io::Result<()> {
    match options().write(true).create_new(true).open(path) {
        Ok(file) => restrict(&file),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            restrict_path(path)?;
            for suffix in ["-wal", "-shm", "-journal"] {
                let mut side = path.as_os_str().to_owned();
                side.push(suffix);
                match restrict_path(Path::new(&side)) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// New folders are 0700 and new files 0600 whatever the umask (the process's umask is 022
    /// in CI, which would give 0755/0644); an old 0644 database is tightened.
    #[test]
    fn creates_owner_only() {
        // SAFETY: umask only sets the process's creation mask; 022 is the usual default.
        unsafe { libc::umask(0o022) };
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        create_dir_all(&nested).unwrap();
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(&nested), 0o700);
        let file = nested.join("f");
        options().write(true).create_new(true).open(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        let written = nested.join("w.json");
        write_atomic(&written, b"{}").unwrap();
        assert_eq!(mode(&written), 0o600);
        let old = nested.join("old.sqlite3");
        std::fs::write(&old, b"").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        prepare_file(&old).unwrap();
        assert_eq!(mode(&old), 0o600);
    }

    /// In a folder another user can write, a link planted at the name the file beside the
    /// target used to have (`.{name}.{pid}.tmp`, guessable) does not make `write_atomic`
    /// overwrite or chmod the file it points to (it did); the target is written, a file.
    #[test]
    fn write_atomic_never_follows_a_planted_link() {
        let shared = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let victim = home.path().join("thesis.txt");
        std::fs::write(&victim, b"the user's own words").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let target = shared.path().join("report.csv");
        let planted = shared
            .path()
            .join(format!(".report.csv.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();

        write_atomic(&target, b"klant,status\n").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"the user's own words");
        assert_eq!(mode(&victim), 0o644, "not chmodded");
        assert!(std::fs::symlink_metadata(&target).unwrap().is_file());
        assert_eq!(std::fs::read(&target).unwrap(), b"klant,status\n");
        assert!(
            std::fs::symlink_metadata(&planted).unwrap().is_symlink(),
            "the planted link is left alone"
        );
    }
}
