//! Whether Kluis may look for updates on this computer, and whether it did today.
//!
//! IT turns updates off machine-wide as it does for other software: on Windows the registry
//! value `HKLM\SOFTWARE\Policies\Kluis\DisableUpdates` (a DWORD, 1; Group Policy Preferences
//! or Intune set it); on any system a file named `updates-disabled` beside the program (the
//! installation folder), or on Linux `/etc/kluis/updates-disabled`. Then Kluis never asks the
//! update server, and says so when asked to. IT also names an office's own update server here
//! ([`machine_publisher`]), in places only an administrator can write.

use std::path::{Path, PathBuf};

use crate::error::UpdateError;
use crate::registry::Hive;

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

/// The update server IT's machine policy names — an office's own, instead of the one Kluis
/// was built with: on Windows the string values `UpdateUrl` and `UpdatePublicKey` under
/// `HKLM\SOFTWARE\Policies\Kluis`, on Linux the files `update-url` and `update-pubkey` in
/// `/etc/kluis` (owned by root and writable by nobody else, or not taken). Only a machine-wide
/// place that needs an administrator counts: what a user's programs can write (the
/// environment, HKCU, the per-user program folder) would let any of them name a server whose
/// "verified" setup the app then installs by itself.
pub fn machine_publisher() -> Result<Option<(String, String)>, UpdateError> {
    let named = match cfg!(windows) {
        true => (
            registry_string("UpdateUrl"),
            registry_string("UpdatePublicKey"),
        ),
        false => match cfg!(target_os = "linux") {
            true => return publisher_in(Path::new("/etc/kluis"), 0),
            false => (None, None),
        },
    };
    both(
        named,
        r"the registry values UpdateUrl and UpdatePublicKey under HKLM\SOFTWARE\Policies\Kluis",
    )
}

/// The two halves of a policy's update server, or neither; one alone is said.
fn both(
    named: (Option<String>, Option<String>),
    place: &str,
) -> Result<Option<(String, String)>, UpdateError> {
    match named {
        (Some(url), Some(key)) => Ok(Some((url, key))),
        (None, None) => Ok(None),
        _ => Err(UpdateError::Config(format!(
            "IT's policy names only half of an update server: {place} go together."
        ))),
    }
}

/// [`machine_publisher`] from the files in `folder`, taken only when they and the folder are
/// owned by `owner` (root) and writable by nobody else.
fn publisher_in(folder: &Path, owner: u32) -> Result<Option<(String, String)>, UpdateError> {
    let read = |name: &str| -> Result<Option<String>, UpdateError> {
        let file = folder.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&file) else {
            return Ok(None);
        };
        if !administered(&meta, owner)
            || !std::fs::metadata(folder).is_ok_and(|m| administered(&m, owner))
        {
            return Err(UpdateError::Config(format!(
                "{} names an update server, but others than the administrator can change it (or it is a link): Kluis does not take it. Make it and its folder owned by root and writable only by root.",
                file.display()
            )));
        }
        let text = std::fs::read_to_string(&file)
            .map_err(|e| UpdateError::Config(format!("{}: {e}", file.display())))?;
        Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty()))
    };
    let place = format!(
        "the files update-url and update-pubkey in {}",
        folder.display()
    );
    both((read("update-url")?, read("update-pubkey")?), &place)
}

/// Whether `meta` is a plain file or folder of `owner` that nobody else may write to.
#[cfg(unix)]
fn administered(meta: &std::fs::Metadata, owner: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    !meta.file_type().is_symlink() && meta.uid() == owner && meta.mode() & 0o022 == 0
}

#[cfg(not(unix))]
fn administered(_: &std::fs::Metadata, _: u32) -> bool {
    false
}

/// Where IT's machine policy for Kluis lives in the registry.
const POLICIES: &str = r"SOFTWARE\Policies\Kluis";

fn registry_string(value: &str) -> Option<String> {
    crate::registry::string(Hive::Machine, POLICIES, value)
}

fn registry_disabled() -> bool {
    crate::registry::dword(Hive::Machine, POLICIES, "DisableUpdates").is_some_and(|v| v != 0)
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

    /// IT's files name an update server only together, and only when nobody but their owner
    /// (root; here this test's user) can change them or their folder: a file others may write
    /// is refused and said, never taken.
    #[cfg(unix)]
    #[test]
    fn an_update_server_is_taken_only_from_what_the_administrator_owns() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        let me = std::fs::metadata(folder).unwrap().uid();
        assert_eq!(publisher_in(folder, me).unwrap(), None, "nothing named");
        let write = |name: &str, text: &str, mode: u32| {
            let file = folder.join(name);
            std::fs::write(&file, text).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write(
            "update-url",
            "https://updates.office.example/kluis.json\n",
            0o644,
        );
        assert!(publisher_in(folder, me)
            .unwrap_err()
            .to_string()
            .contains("go together"));
        write("update-pubkey", "RWQ-the-key\n", 0o644);
        assert_eq!(
            publisher_in(folder, me).unwrap(),
            Some((
                "https://updates.office.example/kluis.json".into(),
                "RWQ-the-key".into()
            ))
        );
        assert!(
            publisher_in(folder, me + 1).is_err(),
            "owned by someone else"
        );
        write("update-pubkey", "RWQ-the-key\n", 0o666);
        let refused = publisher_in(folder, me).unwrap_err().to_string();
        assert!(
            refused.contains("others than the administrator"),
            "{refused}"
        );
        write("update-pubkey", "RWQ-the-key\n", 0o644);
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(
            publisher_in(folder, me).is_err(),
            "a folder anyone can write to"
        );
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
