//! Where Kluis keeps its files: the same for the app and the CLI, so both see one set of
//! profiles and one history.

use std::path::{Path, PathBuf};

use crate::error::{ProfileError, ProfileResult};

#[derive(Debug, Clone)]
pub struct KluisPaths {
    pub profiles_file: PathBuf,
    pub history_db: PathBuf,
    /// The app's downloads wait here, verified, until the user chooses where to keep them.
    pub staging_dir: PathBuf,
}

impl KluisPaths {
    /// The platform's config and data folders. The profiles are settings (on Windows under
    /// %APPDATA%, which roams with the user); the history and the staged downloads belong to
    /// this computer and its disks (on Windows under %LOCALAPPDATA%, which does not roam: a
    /// staged backup of gigabytes must not be copied to a server at log-off). On Linux and
    /// macOS both are the one data folder.
    pub fn platform() -> ProfileResult<Self> {
        let dirs = directories::ProjectDirs::from("nl", "Kluis", "kluis").ok_or_else(|| {
            ProfileError::Core(kluis_core::Error::Config(
                "No home folder was found for Kluis's settings.".into(),
            ))
        })?;
        Ok(Self {
            profiles_file: dirs.config_dir().join("profiles.json"),
            history_db: dirs.data_local_dir().join("history.sqlite3"),
            staging_dir: dirs.data_local_dir().join("staging"),
        })
    }

    /// `KLUIS_DATA_DIR`'s files when it is set (everything below that one folder), else the
    /// platform's: what the window, `kluis-tray` and the login start all open.
    pub fn from_env() -> ProfileResult<Self> {
        match std::env::var_os("KLUIS_DATA_DIR") {
            // (Set but empty is unset: not the folder the program happens to start in.)
            Some(dir) if !dir.is_empty() => Ok(Self::under(Path::new(&dir))),
            _ => Self::platform(),
        }
    }

    /// The demo's own files (`kluis-app --demo`): everything in a folder `demo` beside this
    /// history, so that nothing the demo does reaches these profiles, settings or history.
    pub fn demo(&self) -> Self {
        let data = self.history_db.parent().unwrap_or(Path::new("."));
        // Absolute: its copy target's folder is checked to be one.
        let data = std::path::absolute(data).unwrap_or_else(|_| data.to_path_buf());
        Self::under(&data.join("demo"))
    }

    /// Everything below one folder (tests, portable use).
    pub fn under(dir: &Path) -> Self {
        Self {
            profiles_file: dir.join("profiles.json"),
            history_db: dir.join("history.sqlite3"),
            staging_dir: dir.join("staging"),
        }
    }
}
