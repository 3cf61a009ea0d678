//! [`Shared`]: what every part of the app reads — where its files are, the profiles file, the
//! history, kluis-core's engine that runs the jobs, the native dialogs, and this run's fixed
//! choices (a save folder the tests impose, the CA of `KLUIS_CA_CERT`, the callback's wait,
//! the retries of unattended backups). It holds no command: each part owns its own.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use kluis_core::engine::Retry;
use kluis_core::{Engine, Error, History};

use crate::dialogs::Dialogs;
use crate::error::{AppError, AppResult};
use crate::profiles::{Profile, ProfileStore, ProfileView, Settings};
use crate::AppPaths;

/// See the module's text.
pub(crate) struct Shared {
    pub paths: AppPaths,
    pub profiles: Arc<ProfileStore>,
    pub history: Arc<History>,
    /// Runs the jobs (and holds the callback transports they share).
    pub engine: Engine,
    /// The native dialogs (see [`crate::dialogs`]): set by the shell once it runs.
    dialogs: RwLock<Arc<dyn Dialogs>>,
    /// A save folder that overrides the settings (the e2e tests' stand-in for a save dialog).
    save_folder_override: Option<PathBuf>,
    /// `KLUIS_CA_CERT`'s certificates, read at start: trusted by profiles without their own.
    pub env_ca_pem: Option<String>,
    /// How long a backup waits for the service's callback.
    pub callback_timeout: Duration,
    /// How unattended backups (plans, Backup all) are tried again after a passing failure
    /// before their klant counts as failed; a backup someone started is tried once.
    pub retry: Retry,
}

impl Shared {
    pub fn new(
        paths: AppPaths,
        profiles: Arc<ProfileStore>,
        history: Arc<History>,
        dialogs: Arc<dyn Dialogs>,
        save_folder_override: Option<PathBuf>,
        retry: Retry,
    ) -> Shared {
        Shared {
            engine: Engine::new(history.clone()),
            paths,
            profiles,
            history,
            dialogs: RwLock::new(dialogs),
            save_folder_override,
            env_ca_pem: std::env::var("KLUIS_CA_CERT")
                .ok()
                .and_then(|path| std::fs::read_to_string(path).ok()),
            callback_timeout: Duration::from_secs(30 * 60),
            retry,
        }
    }

    pub fn dialogs(&self) -> Arc<dyn Dialogs> {
        self.dialogs.read().unwrap().clone()
    }

    pub fn set_dialogs(&self, dialogs: Arc<dyn Dialogs>) {
        *self.dialogs.write().unwrap() = dialogs;
    }

    /// The settings as the app applies them (a save folder the tests impose counts).
    pub fn settings(&self) -> Settings {
        let mut settings = self.profiles.settings();
        if let Some(folder) = &self.save_folder_override {
            settings.save_folder = Some(folder.to_string_lossy().into_owned());
        }
        settings
    }

    /// "Always save to this folder", if chosen.
    pub fn save_folder(&self) -> Option<PathBuf> {
        self.settings().save_folder.map(PathBuf::from)
    }

    /// Where unattended backups go: the save folder (nobody answers a save dialog).
    pub fn unattended_folder(&self) -> AppResult<PathBuf> {
        self.save_folder().ok_or_else(|| {
            AppError::Core(Error::Config(
                "A backup nobody watches cannot ask where to save: first choose a folder under Settings → “Where backups are saved”.".into(),
            ))
        })
    }

    /// What the UI sees of `profile`, with its next planned backup (ms since the epoch; now
    /// when it is due; none without a running plan).
    pub fn view(&self, profile: &Profile) -> ProfileView {
        let now = jiff::Zoned::now();
        ProfileView {
            next_backup_ms: kluis_profiles::plan_due(profile, &self.history, &now).next_ms(&now),
            ..ProfileView::from(profile)
        }
    }
}
