//! Whether Kluis may look for updates on this computer, and whether it did today.
//!
//! IT turns updates off machine-wide as it does for other software: on Windows the registry
//! value `HKLM\SOFTWARE\Policies\Kluis\DisableUpdates` (a DWORD, 1; Group Policy Preferences
//! or Intune set it); on any system a file named `updates-disabled` beside the program (the
//! installation folder), or on Linux `/etc/kluis/updates-disabled`. Then Kluis never asks the
//! update server, and says so when asked to.

use std::path::{Path, PathBuf};

/// The file beside the program that turns updates off.
pub const DISABLED_FILE: &str = "updates-disabled";

/// Why updates are off on this computer (what turned them off), or none.
pub fn disabled() -> Option<String> {
    if registry_disabled() {
        return Some(r"the registry value HKLM\SOFTWARE\Policies\Kluis\DisableUpdates".into());
    }
    let program_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let system = cfg!(target_os = "linux").then(|| PathBuf::from("/etc/kluis"));
    disabled_by_file(program_dir.into_iter().chain(system))
}

/// The first of `folders` holding [`DISABLED_FILE`], said as the reason.
fn disabled_by_file(folders: impl IntoIterator<Item = PathBuf>) -> Option<String> {
    (folders.into_iter())
        .map(|folder| folder.join(DISABLED_FILE))
        .find(|file| file.exists())
        .map(|file| format!("the file {}", file.display()))
}

#[cfg(windows)]
fn registry_disabled() -> bool {
    use windows_sys::Win32::System::Registry::{
        RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD,
    };
    let wide = |s: &str| s.encode_utf16().chain(Some(0)).collect::<Vec<u16>>();
    let (key, value) = (wide(r"SOFTWARE\Policies\Kluis"), wide("DisableUpdates"));
    let mut data: u32 = 0;
    let mut size = std::mem::size_of::<u32>() as u32;
    // SAFETY: the key and value names are NUL-terminated UTF-16; `data` holds a DWORD and
    // `size` says so; no other pointer is passed.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_DWORD,
            std::ptr::null_mut(),
            (&mut data as *mut u32).cast(),
            &mut size,
        )
    };
    status == 0 && data != 0
}

#[cfg(not(windows))]
fn registry_disabled() -> bool {
    false
}

/// Whether the daily look is due: not when `stamp` (a file Kluis touches after each look)
/// was written less than a day ago. A stamp from the future (a clock set back) counts as due.
pub fn due(stamp: &Path) -> bool {
    let age = std::fs::metadata(stamp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|written| std::time::SystemTime::now().duration_since(written).ok());
    !matches!(age, Some(age) if age < std::time::Duration::from_secs(24 * 3600))
}

/// The stamp of the looks, beside the history database `history_db` (the CLI's and the app's
/// alike: one look a day between them).
pub fn stamp_beside(history_db: &Path) -> PathBuf {
    history_db.with_file_name("update-looked")
}

/// Notes that a look was made now, and the newer version it found (none: up to date), for
/// [`known_newer`].
pub fn looked(stamp: &Path, newer: Option<&semver::Version>) -> std::io::Result<()> {
    let text = newer.map(|v| v.to_string()).unwrap_or_default();
    kluis_private::files::write_atomic(stamp, text.as_bytes())
}

/// The newer version the last look found, if it is still newer than `current` (none when
/// there was no look, or the stamp is not one).
pub fn known_newer(stamp: &Path, current: &semver::Version) -> Option<semver::Version> {
    let text = std::fs::read_to_string(stamp).ok()?;
    semver::Version::parse(text.trim())
        .ok()
        .filter(|newer| newer > current)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn written(stamp: &Path, at: SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(stamp)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }

    /// A look is due with no stamp, a day after the last, and when the stamp is from the
    /// future (a clock set back must not stop updates for good); not within the day.
    #[test]
    fn a_look_is_due_once_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = dir.path().join("update-looked");
        assert!(due(&stamp), "no look yet");
        looked(&stamp, None).unwrap();
        assert!(!due(&stamp), "just looked");
        let now = SystemTime::now();
        written(&stamp, now - Duration::from_secs(23 * 3600));
        assert!(!due(&stamp), "23 hours ago");
        written(&stamp, now - Duration::from_secs(25 * 3600));
        assert!(due(&stamp), "25 hours ago");
        written(&stamp, now + Duration::from_secs(3600));
        assert!(due(&stamp), "a stamp from the future");
    }

    /// What the last look found is known until this Kluis is that version or newer.
    #[test]
    fn the_newer_version_found_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = dir.path().join("update-looked");
        let v = |t| semver::Version::parse(t).unwrap();
        assert_eq!(known_newer(&stamp, &v("0.1.0")), None, "no look yet");
        looked(&stamp, Some(&v("0.2.0"))).unwrap();
        assert_eq!(known_newer(&stamp, &v("0.1.0")), Some(v("0.2.0")));
        assert_eq!(known_newer(&stamp, &v("0.2.0")), None, "installed since");
        looked(&stamp, None).unwrap();
        assert_eq!(known_newer(&stamp, &v("0.1.0")), None, "up to date");
    }

    /// The file beside the program (or in /etc/kluis) turns updates off, and is named as why.
    #[test]
    fn a_file_turns_updates_off() {
        let (program, system) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let folders = || [program.path().to_path_buf(), system.path().to_path_buf()];
        assert_eq!(disabled_by_file(folders()), None);
        std::fs::write(system.path().join(DISABLED_FILE), "").unwrap();
        let why = disabled_by_file(folders()).unwrap();
        assert!(why.contains(&system.path().display().to_string()), "{why}");
    }
}
