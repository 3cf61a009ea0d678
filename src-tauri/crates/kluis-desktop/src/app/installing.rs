//! How a verified setup is run over the installed Kluis, and what stands in its way:
//! [`UpdateInstaller`] (the host's: Tauri's updater plugin in the window, kluis-tray's setup
//! runner, [`PackageManagerUpdates`] where the package manager or IT updates Kluis) is handed a
//! [`VerifiedSetup`]; [`program_in_the_way`] says which of Kluis's programs a setup run now
//! would stop at, and [`setup_folder_argument`] names the install's folder to the setup.

use std::path::{Path, PathBuf};

use crate::error::{AppError, AppResult};

/// What an installer is handed: the setup, downloaded and verified, and what Tauri's updater
/// checks it against once more (the manifest it came with, the publisher's key).
pub struct VerifiedSetup {
    pub file: PathBuf,
    /// The version it was downloaded and verified as (the release's).
    pub version: String,
    /// Where the manifest was read (the plugin's endpoint: it is not asked again).
    pub manifest_url: String,
    pub manifest: serde_json::Value,
    pub tauri_pubkey: String,
}

/// Runs a verified setup over the installed Kluis (the host's part: on Windows the window's
/// shell hands it to Tauri's updater plugin, which ends the app; kluis-tray starts the setup,
/// which asks it to quit).
pub trait UpdateInstaller: Send + Sync {
    fn installs_here(&self) -> bool;
    /// Whether IT installs this Kluis's updates (installed for every user of the computer).
    fn managed_by_it(&self) -> bool {
        false
    }
    /// Whether this Kluis was unpacked from the zip (Windows), and so updated by hand.
    fn unpacked(&self) -> bool {
        false
    }
    /// Why this installer may not install now, besides the backups and plans (kluis-tray: a
    /// window follows it, and the setup would stop at its program).
    fn not_now(&self) -> Option<String> {
        None
    }
    /// Starts the setup so that it installs over this Kluis once this process has ended.
    fn install(&self, setup: &VerifiedSetup) -> AppResult<()>;
}

/// Where no setup is run: Linux and macOS, whose package manager updates Kluis; and until
/// the host sets its own.
pub struct PackageManagerUpdates;

impl UpdateInstaller for PackageManagerUpdates {
    fn installs_here(&self) -> bool {
        false
    }

    fn install(&self, _: &VerifiedSetup) -> AppResult<()> {
        Err(PackageManagerUpdates::refusal(self))
    }
}

impl PackageManagerUpdates {
    /// Who installs the update, where `installer` does not.
    pub(super) fn refusal(installer: &dyn UpdateInstaller) -> AppError {
        AppError::InvalidState(if installer.managed_by_it() {
            "Your IT installed Kluis for every user of this computer, and installs its updates."
                .into()
        } else if installer.unpacked() {
            "This Kluis was unpacked from a zip: install the new version with the publisher's setup, or unpack its zip in this one's place.".into()
        } else {
            "Kluis is updated by this computer's package manager (on Debian and Ubuntu: sudo apt upgrade, or the Software Updater).".into()
        })
    }
}

/// Kluis's programs a setup replaces, with what each is in the words a user knows it by.
const PROGRAMS: [(&str, &str); 4] = [
    ("kluis-app", "Kluis's window"),
    ("kluis-tray", "Kluis in the notification area"),
    ("kluis", "a scheduled or command-line backup"),
    ("kluis-relay", "the office relay"),
];

/// Why a setup run now would stop (it refuses to replace a program in use, and changes
/// nothing): the first of `programs` (Kluis's, by name: `kluis-relay`) beside `exe` that runs,
/// or whose file cannot be replaced. Windows keeps a running program's file from being opened
/// to write, which is what the setup looks at. (Elsewhere nothing is in the way: the package
/// manager updates Kluis.)
pub fn program_in_the_way(exe: &Path, programs: &[&str]) -> Option<String> {
    let folder = exe.parent()?;
    programs.iter().find_map(|program| {
        let what = (PROGRAMS.iter())
            .find(|(name, _)| name == program)
            .map_or("", |(_, what)| *what);
        let file = format!("{program}{}", std::env::consts::EXE_SUFFIX);
        let in_use = in_use(&folder.join(&file))?;
        Some(match in_use {
            InUse::Running => {
                format!("{file} ({what}) is running: the update is installed once it has ended.")
            }
            InUse::Unwritable(e) => {
                format!("{file} ({what}) cannot be replaced ({e}): the update waits until it can.")
            }
        })
    })
}

/// `/D=` and the folder of the program `exe` — as the setup takes it: never quoted, last, so
/// that a folder with spaces is whole — without the `\\?\` (or `\\?\UNC\`) a resolved path may
/// begin with. It names the install's folder for a setup run over it (the Apps list's entry
/// names it too, but only a folder given is sure to be this one).
pub fn setup_folder_argument(exe: &Path) -> std::ffi::OsString {
    let folder = exe.parent().unwrap_or(Path::new("")).as_os_str();
    let plain = match folder.to_str() {
        Some(text) if text.starts_with(r"\\?\UNC\") => format!(r"\\{}", &text[8..]).into(),
        Some(text) if text.starts_with(r"\\?\") => text[4..].into(),
        _ => folder.to_os_string(),
    };
    let mut argument = std::ffi::OsString::from("/D=");
    argument.push(plain);
    argument
}

/// How a program's file is in a setup's way.
enum InUse {
    Running,
    Unwritable(std::io::Error),
}

/// Whether the program at `path` is in a setup's way: running (a sharing or lock violation),
/// or its file not writable for another reason. Not there at all is no obstacle.
fn in_use(path: &Path) -> Option<InUse> {
    #[cfg(windows)]
    {
        /// ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION.
        const HELD: [i32; 2] = [32, 33];
        match std::fs::OpenOptions::new().write(true).open(path) {
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) if e.raw_os_error().is_some_and(|code| HELD.contains(&code)) => {
                Some(InUse::Running)
            }
            Err(e) => Some(InUse::Unwritable(e)),
        }
    }
    #[cfg(not(windows))]
    {
        let _ = (path, InUse::Running, InUse::Unwritable);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The setup is told the install's folder as NSIS reads it: `/D=` and the path as it is
    /// (spaces and all), without a resolved path's `\\?\` or `\\?\UNC\`.
    #[test]
    fn the_setup_is_told_the_folder() {
        let at = |folder: &str| setup_folder_argument(&Path::new(folder).join("kluis-tray.exe"));
        let plain = r"C:\Users\Jan de Vries\AppData\Local\Programs\Kluis";
        assert_eq!(at(plain), format!("/D={plain}").as_str());
        assert_eq!(at(&format!(r"\\?\{plain}")), format!("/D={plain}").as_str());
        assert_eq!(at(r"\\?\UNC\srv\kantoor\Kluis"), r"/D=\\srv\kantoor\Kluis");
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    /// A program that runs is in a setup's way (its file cannot be opened to write); one that
    /// does not run, and one that is not there, are not. (tests/windows/run.sh runs it under
    /// Wine.)
    #[test]
    fn a_running_program_is_in_the_setups_way() {
        let this = std::env::current_exe().unwrap();
        let stem = this.file_stem().unwrap().to_str().unwrap().to_string();
        let said = program_in_the_way(&this, &[&stem]).expect("this test binary runs");
        assert!(said.contains("is running"), "{said}");

        let dir = tempfile::tempdir().unwrap();
        let beside = dir.path().join("kluis-tray.exe");
        std::fs::write(dir.path().join("kluis.exe"), b"MZ").unwrap();
        assert_eq!(program_in_the_way(&beside, &["kluis", "kluis-relay"]), None);
    }
}
