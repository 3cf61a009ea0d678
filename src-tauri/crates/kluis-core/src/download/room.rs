//! Whether a backup can be saved where it is to go, checked before the service is asked for
//! it: a `POST /backup/owner` costs the service minutes of work, and a backup that cannot be
//! saved would only fail after that wait. The folder must exist or be made (owner-only), a
//! file must be creatable in it, and its disk must have at least the minimum free that the
//! office set (Settings, `--min-free-mib`; [`DEFAULT_MIN_FREE_MIB`] unless set).
//!
//! The free space is a floor, not a promise: the backup's size is unknown until the service
//! answers, and the download checks its own writes as always.

use std::io;
use std::path::Path;

use crate::error::{Error, Result};

/// The free space below which no backup is asked for, unless the office sets another.
pub const DEFAULT_MIN_FREE_MIB: u64 = 100;

const MIB: u64 = 1024 * 1024;

/// Checks `folder` as the module says, making it if it is missing. The error names the folder
/// and what to do.
pub fn check_room(folder: &Path, min_free_bytes: u64) -> Result<()> {
    let shown = folder.display();
    kluis_private::files::create_dir_all(folder).map_err(|e| {
        Error::Io(format!(
            "The folder {shown} to save the backup in cannot be made ({e}). Choose another folder; the service was not asked for a backup."
        ))
    })?;
    probe(folder).map_err(|e| {
        Error::Io(format!(
            "No file can be saved in {shown} ({e}). Check that the folder is writable, or choose another; the service was not asked for a backup."
        ))
    })?;
    let free = available(folder).map_err(|e| {
        Error::Io(format!(
            "The free space in {shown} cannot be read ({e}); the service was not asked for a backup."
        ))
    })?;
    if free < min_free_bytes {
        return Err(Error::Io(format!(
            "Only {} MiB is free on the disk of {shown}; Kluis asks for a backup only with at least {} MiB free. Make room, choose another folder, or lower the minimum (Settings, or --min-free-mib).",
            free / MIB,
            min_free_bytes.div_ceil(MIB)
        )));
    }
    Ok(())
}

/// Creates and removes an empty file of a random name in `folder`, exclusively (never an
/// existing name, never through a link).
fn probe(folder: &Path) -> io::Result<()> {
    let path = folder.join(format!(".kluis-probe-{}", uuid::Uuid::new_v4().simple()));
    kluis_private::files::options()
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)
}

/// Bytes this user may still write on `folder`'s file system.
#[cfg(unix)]
pub fn available(folder: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(folder.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a NUL-terminated path; statvfs fills `stats`, read only on success.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut stats) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64))
}

/// Bytes this user may still write on `folder`'s volume (quotas included).
#[cfg(windows)]
pub fn available(folder: &Path) -> io::Result<u64> {
    use std::os::windows::ffi::OsStrExt;
    let wide: Vec<u16> = folder.as_os_str().encode_wide().chain([0]).collect();
    let mut free_to_caller = 0u64;
    // SAFETY: a NUL-terminated wide path; the other outputs may be null.
    let ok = unsafe {
        windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW(
            wide.as_ptr(),
            &mut free_to_caller,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    match ok {
        0 => Err(io::Error::last_os_error()),
        _ => Ok(free_to_caller),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing folder is made and passes; a minimum above what the disk has is refused with
    /// the folder and the figures named; a folder under a file cannot be made; and the probe
    /// leaves nothing behind.
    #[test]
    fn a_folder_is_checked_before_anything_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("klanten").join("Bakker B.V.");
        check_room(&folder, 0).unwrap();
        assert!(folder.is_dir(), "made");
        assert_eq!(
            std::fs::read_dir(&folder).unwrap().count(),
            0,
            "no probe left"
        );

        let free = available(&folder).unwrap();
        let refused = check_room(&folder, free + 1024 * MIB).unwrap_err();
        let message = refused.to_string();
        assert_eq!(refused.code(), crate::Code::Io);
        assert!(message.contains(&folder.display().to_string()), "{message}");
        assert!(message.contains("MiB is free"), "{message}");

        let file = dir.path().join("a file");
        std::fs::write(&file, b"x").unwrap();
        let under_a_file = check_room(&file.join("klant"), 0).unwrap_err();
        assert!(under_a_file.to_string().contains("cannot be made"));
    }

    /// A folder no file can be created in is refused before the service is asked. (As root,
    /// permissions do not stop a write; /proc refuses every new file, also to root.)
    #[cfg(target_os = "linux")]
    #[test]
    fn a_folder_that_takes_no_file_is_refused() {
        let refused = check_room(Path::new("/proc"), 0).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("No file can be saved in /proc"),
            "{refused}"
        );
    }
}
