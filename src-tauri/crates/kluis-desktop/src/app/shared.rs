//! [`Shared`]: what every part of the app reads — where its files are, the profiles file, the
//! history, kluis-core's engine that runs the jobs, the native dialogs, and this run's fixed
//! choices (a save folder the tests impose, the CA of `KLUIS_CA_CERT`, the callback's wait,
//! the retries of unattended backups). It holds no command: each part owns its own.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::encryption::DecryptKey;
use kluis_core::engine::Retry;
use kluis_core::{Engine, Error, History};

use kluis_copies::CopyTarget;
use kluis_profiles::secrets::off_thread;

use crate::dialogs::{Dialogs, NoDialogs};
use crate::error::{AppError, AppResult};
use crate::owner::TrayRequest;
use crate::profiles::{Profile, ProfileStore, ProfileView, Settings};
use crate::secrets::{MemoryStore, SecretKind, SecretStore};
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
    /// Where the copy targets' and the klanten's secrets are (the app's keyring).
    pub(super) keyring: Arc<dyn SecretStore>,
    /// The demo profiles' secrets: in memory, gone with the app.
    pub demo_secrets: Arc<MemoryStore>,
    /// The copies' uploads' budget: the download speed limit (Settings → Download speed) for
    /// the line's other direction, shared by every upload.
    pub upload_pace: Arc<Bandwidth>,
    /// The unattended backups running, whose last writes the recovery catalogs.
    pub catalog_round: Arc<super::catalog_round::CatalogRound>,
    /// The office this PC joined, as last read ([`Shared::office`]).
    pub(super) office: tokio::sync::Mutex<super::office::OfficeRead>,
    /// Something the office's report says changed (a backup ended, a plan set, a restore
    /// tested): the report goes out soon rather than at the hour ([`OfficeHub::keep_telling`]).
    ///
    /// [`OfficeHub::keep_telling`]: super::office::OfficeHub::keep_telling
    pub(super) office_changed: tokio::sync::Notify,
    /// While this window follows `kluis-tray`'s backups (`DesktopApp::follow_tray`): where a
    /// *Cancel* of one of them, or *Cancel all*, is sent.
    pub(super) tray_requests:
        std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<TrayRequest>>>,
}

impl Shared {
    pub fn new(
        paths: AppPaths,
        profiles: Arc<ProfileStore>,
        history: Arc<History>,
        save_folder_override: Option<PathBuf>,
        retry: Retry,
        keyring: Arc<dyn SecretStore>,
        upload_pace: Arc<Bandwidth>,
    ) -> Shared {
        Shared {
            keyring,
            catalog_round: Arc::default(),
            office: Default::default(),
            office_changed: tokio::sync::Notify::new(),
            tray_requests: std::sync::Mutex::default(),
            demo_secrets: Arc::default(),
            upload_pace,
            engine: Engine::new(history.clone()),
            paths,
            profiles,
            history,
            // None until the shell sets the real ones (`set_dialogs`).
            dialogs: RwLock::new(Arc::new(NoDialogs)),
            save_folder_override,
            env_ca_pem: std::env::var("KLUIS_CA_CERT")
                .ok()
                .and_then(|path| std::fs::read_to_string(path).ok()),
            callback_timeout: Duration::from_secs(30 * 60),
            retry,
        }
    }

    /// Where a (`demo`) profile's secrets are kept.
    pub fn secrets_for(&self, demo: bool) -> Arc<dyn SecretStore> {
        match demo {
            true => self.demo_secrets.clone(),
            false => self.keyring.clone(),
        }
    }

    /// What opens `profile`'s passphrase-encrypted backups for their restore test: its
    /// passphrase from where it is kept; none when it encrypts with no passphrase.
    pub async fn opener(&self, profile: &Profile) -> kluis_core::Result<Option<DecryptKey>> {
        match &profile.encryption {
            Some(setting) if setting.needs_passphrase() => {}
            _ => return Ok(None),
        }
        let id = profile.id.clone();
        let read = off_thread(self.secrets_for(profile.demo), move |store| {
            store.get(&id, SecretKind::EncryptionPassphrase)
        });
        let passphrase = read.await.map_err(|e| AppError::from(e).into_core())?;
        Ok(passphrase.map(DecryptKey::Passphrase))
    }

    /// What writes the recovery catalogs after the copies: none until the office's recovery
    /// kit is made (the demo's klanten are not in them: their secrets are the demo's).
    pub fn catalogs_after(&self) -> Option<kluis_profiles::unattended::CatalogsAfter> {
        let recovery = self.settings().recovery?;
        let profiles = (self.profiles.list().into_iter())
            .filter(|p| !p.demo)
            .collect();
        Some(kluis_profiles::unattended::CatalogsAfter {
            recovery,
            profiles,
            secrets: self.secrets_for(false),
            state: self
                .paths
                .history_db
                .with_file_name("recovery-written.json"),
        })
    }

    /// The settings' copy targets, each with the secret it needs from the keyring (off the
    /// async threads). A keyring that cannot be read is logged; such a target then says that
    /// its secret is missing when it is used.
    pub async fn copy_targets(&self) -> Vec<CopyTarget> {
        let targets = self.settings().copy_targets;
        if !targets.iter().any(|t| t.place.keeps_secret()) {
            return targets;
        }
        let read = targets.clone();
        let with = off_thread(self.keyring.clone(), move |store| {
            kluis_profiles::secrets::with_target_secrets(store, read)
        });
        match with.await {
            Ok(with) => with,
            Err(e) => {
                tracing::warn!(code = %e.code(), "the copy targets' secrets could not be read");
                targets
            }
        }
    }

    /// Sends `request` to `kluis-tray`, when this window follows its backups; whether it went.
    pub fn ask_tray(&self, request: TrayRequest) -> bool {
        let requests = self.tray_requests.lock().unwrap();
        requests.as_ref().is_some_and(|r| r.send(request).is_ok())
    }

    pub fn dialogs(&self) -> Arc<dyn Dialogs> {
        self.dialogs.read().unwrap().clone()
    }

    pub fn set_dialogs(&self, dialogs: Arc<dyn Dialogs>) {
        *self.dialogs.write().unwrap() = dialogs;
    }

    /// The language Kluis speaks where the window does not (the tray, notifications): the
    /// window's, else the OS's.
    pub fn language(&self) -> kluis_profiles::Language {
        self.profiles.settings().language()
    }

    /// The settings as the app applies them (a save folder the tests impose counts).
    pub fn settings(&self) -> Settings {
        let mut settings = self.profiles.settings();
        // The e-mail section is kluis-reporting's, read typed through `Alerts::mail`: the
        // window is not sent it raw (whatever a hand-edited file put there).
        settings.mail = None;
        if let Some(folder) = &self.save_folder_override {
            settings.save_folder = Some(folder.to_string_lossy().into_owned());
        }
        settings
    }

    /// "Always save to this folder", if chosen.
    pub fn save_folder(&self) -> Option<PathBuf> {
        self.settings().save_folder.map(PathBuf::from)
    }

    /// Refuses a backup nobody watches for `profile` when it has no folder to go to: neither
    /// its own nor the office's save folder (nobody is there to answer a save dialog).
    pub fn check_unattended_folder(&self, profile: &Profile) -> AppResult<()> {
        match profile.backup_folder(None, self.save_folder().as_deref()) {
            Some(_) => Ok(()),
            None => Err(AppError::Core(Error::Config(
                kluis_profiles::store::NO_FOLDER.into(),
            ))),
        }
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
