//! [`DesktopApp`]: every command of the desktop app, as plain async methods. The Tauri shell
//! calls each in one line; tests call them directly against the simulator.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kluis_core::{
    BackupJob, BackupRequest, Destination, DownloadOptions, Downloader, Error, History,
    HistoryEntry, ListenerTransport, Saved, Secret, ServiceClient, ServiceConfig, Session, Stage,
};
use kluis_sim::{Sim, SimConfig};
use serde::Serialize;
use serde_json::Value;
use tokio::task::AbortHandle;
use uuid::Uuid;

use crate::error::{AppError, AppResult};
use crate::events::{AppJobEvent, EventSink};
use crate::permissions::{Endpoint, Permissions};
use crate::profiles::{Profile, ProfileInput, ProfileStore, ProfileView, Settings};
use crate::secrets::{MemoryStore, SecretKind, SecretStore};

/// Where the app keeps its files.
#[derive(Debug, Clone)]
pub struct AppPaths {
    pub profiles_file: PathBuf,
    pub history_db: PathBuf,
    /// Downloads wait here, verified, until the user chooses where to keep them.
    pub staging_dir: PathBuf,
}

impl AppPaths {
    /// The platform's config and data folders.
    pub fn platform() -> AppResult<Self> {
        let dirs = directories::ProjectDirs::from("nl", "Kluis", "kluis").ok_or_else(|| {
            AppError::Core(Error::Config(
                "No home folder was found for Kluis's settings.".into(),
            ))
        })?;
        Ok(Self {
            profiles_file: dirs.config_dir().join("profiles.json"),
            history_db: dirs.data_dir().join("history.sqlite3"),
            staging_dir: dirs.data_dir().join("staging"),
        })
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

/// How the app was started (`kluis-app --demo`).
#[derive(Debug, Clone, Copy, Serialize, ts_rs::TS)]
pub struct LaunchInfo {
    pub demo: bool,
}

/// Who is signed in.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct SessionInfo {
    pub profile_id: String,
    pub username: String,
}

/// About the running demo.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct DemoInfo {
    pub base_url: String,
    pub profiles: Vec<ProfileView>,
}

enum JobSlot {
    Running {
        task: AbortHandle,
        staging: Option<PathBuf>,
    },
    /// Verified in the staging folder; waiting for a save dialog's answer.
    Staged { saved: Saved, staging: PathBuf },
}

struct Connection {
    session: Arc<Session>,
    downloader: Arc<Downloader>,
}

/// The desktop app's state and commands.
pub struct DesktopApp {
    paths: AppPaths,
    profiles: Arc<ProfileStore>,
    keyring: Arc<dyn SecretStore>,
    demo_secrets: Arc<MemoryStore>,
    history: Arc<History>,
    connections: Mutex<HashMap<String, Arc<Connection>>>,
    transport: tokio::sync::OnceCell<Arc<ListenerTransport>>,
    jobs: Arc<Mutex<HashMap<Uuid, JobSlot>>>,
    demo: tokio::sync::Mutex<Option<Sim>>,
    /// A save folder that overrides the settings (the e2e tests' stand-in for a save dialog).
    save_folder_override: Option<PathBuf>,
    /// How long a backup waits for the service's callback.
    pub callback_timeout: Duration,
}

const DEMO_ID: &str = "demo";
const DEMO_RESTRICTED_ID: &str = "demo-restricted";

impl DesktopApp {
    pub fn open(
        paths: AppPaths,
        keyring: Arc<dyn SecretStore>,
        save_folder_override: Option<PathBuf>,
    ) -> AppResult<Self> {
        let history = History::open(&paths.history_db)?;
        let profiles = Arc::new(ProfileStore::open(paths.profiles_file.clone())?);
        // Staged downloads of an earlier run were never chosen a place: they are not the
        // user's files yet, so they are cleared rather than left to pile up.
        let _ = std::fs::remove_dir_all(&paths.staging_dir);
        Ok(Self {
            paths,
            profiles,
            keyring,
            demo_secrets: Arc::default(),
            history: Arc::new(history),
            connections: Mutex::default(),
            transport: tokio::sync::OnceCell::new(),
            jobs: Arc::default(),
            demo: tokio::sync::Mutex::new(None),
            save_folder_override,
            callback_timeout: Duration::from_secs(30 * 60),
        })
    }

    // ---- profiles -------------------------------------------------------------------------

    pub fn profiles(&self) -> Vec<ProfileView> {
        self.profiles.list().iter().map(ProfileView::from).collect()
    }

    /// Creates or updates a profile; the secrets go to the keyring, the rest to the file.
    pub async fn save_profile(&self, input: ProfileInput) -> AppResult<ProfileView> {
        let existing = match &input.id {
            Some(id) => Some(self.profiles.get(id)?),
            None => None,
        };
        let id = existing
            .as_ref()
            .map(|p| p.id.clone())
            .unwrap_or_else(|| Uuid::new_v4().to_string());
        let demo = existing.as_ref().is_some_and(|p| p.demo);
        let given = |v: &Option<String>| {
            v.as_ref()
                .filter(|s| !s.is_empty())
                .map(|s| Secret::new(s.clone()))
        };
        let api_key = match given(&input.api_key) {
            Some(key) => key,
            None => self
                .secret(&id, SecretKind::ApiKey, demo)
                .await?
                .ok_or_else(|| {
                    AppError::Core(Error::Config(
                        "Enter the api key the service operator gave your organisation.".into(),
                    ))
                })?,
        };
        let password = match given(&input.password) {
            Some(password) => password,
            None => self
                .secret(&id, SecretKind::Password, demo)
                .await?
                .ok_or_else(|| {
                    AppError::Core(Error::Config("Enter the klant's password.".into()))
                })?,
        };
        // Validates the URL and the key's form before anything is stored.
        let config = ServiceConfig::new(
            &input.base_url,
            api_key.clone(),
            input.username.trim().to_string(),
            password.clone(),
            false,
        )?;
        let openapi_url = input
            .openapi_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(|u| check_openapi_url(u, &config))
            .transpose()?;
        let name = if input.name.trim().is_empty() {
            input.username.trim().to_string()
        } else {
            input.name.trim().to_string()
        };
        let profile = Profile {
            id: id.clone(),
            name,
            base_url: config.base_url.to_string(),
            username: config.username.clone(),
            openapi_url,
            denied: Vec::new(),
            demo,
            extra_ca_pem: existing.and_then(|p| p.extra_ca_pem),
        };
        self.store_secret(&id, SecretKind::ApiKey, api_key, demo)
            .await?;
        self.store_secret(&id, SecretKind::Password, password, demo)
            .await?;
        self.profiles.put(profile.clone())?;
        self.connections.lock().unwrap().remove(&id);
        Ok(ProfileView::from(&profile))
    }

    /// Signs out and removes the profile and its secrets from the keyring.
    pub async fn forget_profile(&self, id: &str) -> AppResult<()> {
        let profile = self.profiles.get(id)?;
        self.sign_out(id).await?;
        for kind in [SecretKind::ApiKey, SecretKind::Password] {
            let store = self.store_for(profile.demo);
            let id = id.to_string();
            tokio::task::spawn_blocking(move || store.delete(&id, kind))
                .await
                .expect("keyring task")?;
        }
        self.profiles.remove(id)
    }

    // ---- session --------------------------------------------------------------------------

    pub async fn sign_in(&self, id: &str) -> AppResult<SessionInfo> {
        let connection = self.connection(id).await?;
        if let Err(e) = connection.session.sign_in().await {
            self.connections.lock().unwrap().remove(id);
            return Err(e.into());
        }
        Ok(SessionInfo {
            profile_id: id.to_string(),
            username: self.profiles.get(id)?.username,
        })
    }

    pub async fn sign_out(&self, id: &str) -> AppResult<()> {
        let removed = self.connections.lock().unwrap().remove(id);
        if let Some(connection) = removed {
            connection.session.sign_out().await;
        }
        Ok(())
    }

    pub async fn environment(&self, id: &str) -> AppResult<Value> {
        let connection = self.connection(id).await?;
        let outcome = connection.session.environment().await;
        if let Err(e) = &outcome {
            self.learn_denial(id, e, Endpoint::Environment);
        }
        Ok(outcome?)
    }

    pub async fn permissions(&self, id: &str) -> AppResult<Permissions> {
        let profile = self.profiles.get(id)?;
        let Some(openapi_url) = &profile.openapi_url else {
            return Ok(Permissions::learnt(&profile.denied));
        };
        let connection = self.connection(id).await?;
        let config = connection.session.client().config().clone();
        let mut url = url::Url::parse(openapi_url)
            .map_err(|_| Error::Config("The OpenAPI URL is not valid.".into()))?;
        // The service's test page reaches the description with the api key as a parameter.
        url.query_pairs_mut()
            .append_pair("api_key", config.api_key.expose());
        let client =
            kluis_core::http::build_client(&config, kluis_core::http::RedirectRule::SameOrigin)?;
        let response = client.get(url).send().await.map_err(|e| {
            Error::Network(format!(
                "Could not load the service's description ({}).",
                e.without_url()
            ))
        })?;
        if !response.status().is_success() {
            return Ok(Permissions::learnt(&profile.denied));
        }
        let document = kluis_core::http::read_json(response, "the description request").await?;
        Ok(Permissions::from_openapi(&document)
            .unwrap_or_else(|| Permissions::learnt(&profile.denied)))
    }

    // ---- backups --------------------------------------------------------------------------

    /// Starts a backup; its events go to `sink`. Returns the job id (for save and cancel).
    pub async fn start_backup(&self, id: &str, sink: EventSink) -> AppResult<Uuid> {
        let connection = self.connection(id).await?;
        let transport = self
            .transport
            .get_or_try_init(|| async { ListenerTransport::loopback().await.map(Arc::new) })
            .await?
            .clone();
        let job_id = Uuid::new_v4();
        let save_folder = self.save_folder();
        let (destination, staging) = match &save_folder {
            Some(folder) => (Destination::from_out(folder)?, None),
            None => {
                let staging = self.paths.staging_dir.join(job_id.simple().to_string());
                std::fs::create_dir_all(&staging)
                    .map_err(|e| Error::io(format!("create {}", staging.display()), e))?;
                (Destination::Folder(staging.clone()), Some(staging))
            }
        };
        let request = BackupRequest {
            id: job_id,
            profile: id.to_string(),
            destination,
            callback_timeout: self.callback_timeout,
        };
        let history = self.history.clone();
        let jobs = self.jobs.clone();
        let profile_id = id.to_string();
        let learn = self.denial_learner();
        let staging_for_task = staging.clone();
        let task = tokio::spawn(async move {
            let job = BackupJob {
                session: &connection.session,
                transport: &*transport,
                downloader: &connection.downloader,
                history: &history,
            };
            let forward = sink.clone();
            let outcome = job
                .run(&request, &mut move |event| forward(event.into()))
                .await;
            match outcome {
                Ok(saved) => match staging_for_task {
                    Some(staging) => {
                        let file_name = saved
                            .path
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        let event = AppJobEvent::Staged {
                            file_name,
                            bytes: saved.bytes,
                            sha256: saved.sha256.clone(),
                        };
                        jobs.lock()
                            .unwrap()
                            .insert(job_id, JobSlot::Staged { saved, staging });
                        sink(event);
                    }
                    None => {
                        jobs.lock().unwrap().remove(&job_id);
                        sink(AppJobEvent::saved(&saved));
                    }
                },
                Err(error) => {
                    jobs.lock().unwrap().remove(&job_id);
                    if let Some(staging) = staging_for_task {
                        let _ = std::fs::remove_dir_all(staging);
                    }
                    let failed_at = history
                        .get(job_id)
                        .ok()
                        .flatten()
                        .and_then(|e| e.failed_stage);
                    let endpoint = match failed_at.as_deref() {
                        Some("callback_received") => Endpoint::Webhook,
                        _ => Endpoint::BackupOwner,
                    };
                    learn(&profile_id, &error, endpoint);
                    sink(AppJobEvent::Failed {
                        code: error.code().into(),
                        message: error.to_string(),
                    });
                }
            }
        });
        self.jobs.lock().unwrap().insert(
            job_id,
            JobSlot::Running {
                task: task.abort_handle(),
                staging,
            },
        );
        Ok(job_id)
    }

    /// Moves a staged, verified backup to `path` (the save dialog's answer, which already
    /// asked the user about replacing an existing file).
    pub async fn save_backup(&self, job: Uuid, path: PathBuf) -> AppResult<Saved> {
        let slot = self.jobs.lock().unwrap().remove(&job);
        let Some(JobSlot::Staged { saved, staging }) = slot else {
            if let Some(slot) = slot {
                self.jobs.lock().unwrap().insert(job, slot);
            }
            return Err(AppError::InvalidState(
                "This backup is not waiting to be saved.".into(),
            ));
        };
        let moved = tokio::task::spawn_blocking({
            let saved = saved.clone();
            move || kluis_core::download::destination::relocate(&saved, &path, true)
        })
        .await
        .expect("save task");
        match moved {
            Ok(moved) => {
                self.history.relocate(job, &moved.path)?;
                let _ = std::fs::remove_dir_all(&staging);
                Ok(moved)
            }
            Err(e) => {
                // Keep the staged file so the user can choose another place.
                self.jobs
                    .lock()
                    .unwrap()
                    .insert(job, JobSlot::Staged { saved, staging });
                Err(e.into())
            }
        }
    }

    /// Cancels a job at any stage; nothing is left behind.
    pub async fn cancel_backup(&self, job: Uuid) -> AppResult<()> {
        let slot = self.jobs.lock().unwrap().remove(&job);
        match slot {
            Some(JobSlot::Running { task, staging }) => {
                task.abort();
                if let Some(staging) = staging {
                    let _ = std::fs::remove_dir_all(staging);
                }
                Ok(())
            }
            Some(JobSlot::Staged { staging, .. }) => {
                let _ = std::fs::remove_dir_all(staging);
                self.history.failed(job, Stage::Saved, &Error::Cancelled)?;
                Ok(())
            }
            None => Err(AppError::NotFound("That backup has already ended.".into())),
        }
    }

    pub fn history(&self, profile: Option<&str>) -> AppResult<Vec<HistoryEntry>> {
        Ok(self.history.list(profile, 500)?)
    }

    /// Opens the folder of a saved backup (`select`: with the file selected).
    pub fn show_backup(&self, history_id: Uuid, select: bool) -> AppResult<()> {
        let entry = self
            .history
            .get(history_id)?
            .ok_or_else(|| AppError::NotFound("That backup is not in the history.".into()))?;
        let path = entry
            .path
            .ok_or_else(|| AppError::NotFound("That backup was not saved.".into()))?;
        crate::open::show_in_folder(Path::new(&path), select)
    }

    // ---- settings -------------------------------------------------------------------------

    pub fn settings(&self) -> Settings {
        let mut settings = self.profiles.settings();
        if let Some(folder) = &self.save_folder_override {
            settings.save_folder = Some(folder.to_string_lossy().into_owned());
        }
        settings
    }

    pub fn set_save_folder(&self, folder: Option<String>) -> AppResult<Settings> {
        if let Some(folder) = &folder {
            if !Path::new(folder).is_dir() {
                return Err(Error::Config(format!("The folder {folder} does not exist.")).into());
            }
        }
        self.profiles.set_settings(Settings {
            save_folder: folder,
        })?;
        Ok(self.settings())
    }

    fn save_folder(&self) -> Option<PathBuf> {
        self.settings().save_folder.map(PathBuf::from)
    }

    // ---- demo -----------------------------------------------------------------------------

    /// Starts the simulator in this process and adds two demo profiles (full and restricted
    /// key), whose secrets stay in memory.
    pub async fn start_demo(&self) -> AppResult<DemoInfo> {
        let mut demo = self.demo.lock().await;
        if demo.is_none() {
            let mut config = SimConfig {
                payload_size: 48 * 1024 * 1024,
                ..SimConfig::default()
            };
            // Slow enough that each stage can be seen, quick enough not to bore.
            config.faults.callback_delay = Duration::from_millis(1500);
            config.faults.download_rate = Some(24 * 1024 * 1024);
            let sim = Sim::start(config)
                .await
                .map_err(|e| Error::Io(e.to_string()))?;
            let accounts = [
                (DEMO_ID, "Demo", kluis_sim::config::DEMO_API_KEY),
                (
                    DEMO_RESTRICTED_ID,
                    "Demo (key without backups)",
                    kluis_sim::config::RESTRICTED_API_KEY,
                ),
            ];
            for (id, name, key) in accounts {
                self.demo_secrets
                    .set(id, SecretKind::ApiKey, &Secret::new(key.to_string()))?;
                self.demo_secrets.set(
                    id,
                    SecretKind::Password,
                    &Secret::new(kluis_sim::config::DEMO_PASSWORD),
                )?;
                self.profiles.put(Profile {
                    id: id.into(),
                    name: name.into(),
                    base_url: sim.base_url().to_string(),
                    username: kluis_sim::config::DEMO_USERNAME.into(),
                    openapi_url: Some(format!("{}/openapi.json", sim.base_url())),
                    denied: Vec::new(),
                    demo: true,
                    extra_ca_pem: Some(sim.ca_pem().to_string()),
                })?;
            }
            *demo = Some(sim);
        }
        let sim = demo.as_ref().expect("started above");
        Ok(DemoInfo {
            base_url: sim.base_url().to_string(),
            profiles: self.profiles().into_iter().filter(|p| p.demo).collect(),
        })
    }

    // ---- internals ------------------------------------------------------------------------

    fn store_for(&self, demo: bool) -> Arc<dyn SecretStore> {
        if demo {
            self.demo_secrets.clone()
        } else {
            self.keyring.clone()
        }
    }

    async fn secret(&self, id: &str, kind: SecretKind, demo: bool) -> AppResult<Option<Secret>> {
        let store = self.store_for(demo);
        let id = id.to_string();
        tokio::task::spawn_blocking(move || store.get(&id, kind))
            .await
            .expect("keyring task")
    }

    async fn store_secret(
        &self,
        id: &str,
        kind: SecretKind,
        value: Secret,
        demo: bool,
    ) -> AppResult<()> {
        let store = self.store_for(demo);
        let id = id.to_string();
        tokio::task::spawn_blocking(move || store.set(&id, kind, &value))
            .await
            .expect("keyring task")
    }

    /// The session and downloader of a profile, made on first use.
    async fn connection(&self, id: &str) -> AppResult<Arc<Connection>> {
        if let Some(c) = self.connections.lock().unwrap().get(id) {
            return Ok(c.clone());
        }
        let profile = self.profiles.get(id)?;
        let missing = || {
            AppError::Core(Error::Config(
                "This profile has no saved api key or password. Edit the profile and enter them."
                    .into(),
            ))
        };
        let api_key = self
            .secret(id, SecretKind::ApiKey, profile.demo)
            .await?
            .ok_or_else(missing)?;
        let password = self
            .secret(id, SecretKind::Password, profile.demo)
            .await?
            .ok_or_else(missing)?;
        let mut config = ServiceConfig::new(
            &profile.base_url,
            api_key,
            profile.username.clone(),
            password,
            false,
        )?;
        config.extra_ca_pem = profile.extra_ca_pem.clone().or_else(|| {
            std::env::var("KLUIS_CA_CERT")
                .ok()
                .and_then(|p| std::fs::read_to_string(p).ok())
        });
        let connection = Arc::new(Connection {
            downloader: Arc::new(Downloader::new(&config, DownloadOptions::default())?),
            session: Arc::new(Session::new(ServiceClient::new(config)?)),
        });
        self.connections
            .lock()
            .unwrap()
            .insert(id.to_string(), connection.clone());
        Ok(connection)
    }

    fn learn_denial(&self, id: &str, error: &Error, endpoint: Endpoint) {
        (self.denial_learner())(id, error, endpoint)
    }

    /// Records a 403 for the permissions view (usable from a job's task).
    fn denial_learner(&self) -> impl Fn(&str, &Error, Endpoint) + Send + 'static {
        let profiles = self.profiles.clone();
        move |id: &str, error: &Error, endpoint: Endpoint| {
            if error.code() != "permission_denied" {
                return;
            }
            if let Ok(mut profile) = profiles.get(id) {
                if !profile.denied.contains(&endpoint) {
                    profile.denied.push(endpoint);
                    let _ = profiles.put(profile);
                }
            }
        }
    }
}

/// Checks that the description URL is https on the base URL's origin: the api key is sent to
/// it as a parameter, and must go nowhere else.
fn check_openapi_url(text: &str, config: &ServiceConfig) -> AppResult<String> {
    let url = url::Url::parse(text)
        .map_err(|_| Error::Config("The OpenAPI URL is not a valid URL.".into()))?;
    if url.origin() != config.base_url.origin() {
        return Err(Error::Config(
            "The OpenAPI URL must be on the same host as the base URL (the api key is sent to it)."
                .into(),
        )
        .into());
    }
    Ok(url.to_string())
}
