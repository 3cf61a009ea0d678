//! [`DesktopApp`]: every command of the desktop app, as plain async methods. The Tauri shell
//! calls each in one line; tests call them directly against the simulator.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kluis_core::callback::{Reattach, Reattacher};
use kluis_core::{
    BackupJob, BackupRequest, CallbackTransport, Destination, DownloadOptions, Downloader, Error,
    History, HistoryEntry, Owner, Saved, Secret, ServiceClient, ServiceConfig, Session, Stage,
    UnfinishedJob,
};
use kluis_sim::{Sim, SimConfig};
use serde::Serialize;
use serde_json::Value;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::callback::{CallbackInput, CallbackSetting, CallbackTestResult, Transports};
use crate::dialogs::{Dialogs, NoDialogs};
use crate::error::{AppError, AppResult};
use crate::events::{AppJobEvent, EventSink, ResumeSink, ResumedEvent};
use crate::permissions::{Endpoint, Permissions};
use crate::profiles::{Profile, ProfileInput, ProfileStore, ProfileView, Settings};
use crate::secrets::{MemoryStore, SecretKind, SecretStore, APP};

/// The tunnel program looked up on `PATH`; any other must be picked in a native dialog.
pub const TUNNEL_PROGRAM: &str = "cloudflared";

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

/// A backup an earlier run of the app left unfinished, now being finished.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ResumedJob {
    pub job_id: String,
    pub profile_id: String,
    /// The stage it had reached.
    pub stage: String,
}

/// About the running demo.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct DemoInfo {
    pub base_url: String,
    pub profiles: Vec<ProfileView>,
}

enum JobSlot {
    Running {
        task: JoinHandle<()>,
        /// Notified by the user's Cancel: the job then ends as cancelled by itself.
        cancel: Arc<tokio::sync::Notify>,
    },
    /// Verified in the staging folder; waiting for a save dialog's answer.
    Staged { saved: Saved, staging: PathBuf },
}

/// A profile's signed-in session and its downloader, kept while the app runs.
struct ProfileSession {
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
    connections: Mutex<HashMap<String, Arc<ProfileSession>>>,
    transports: Transports,
    jobs: Arc<Mutex<HashMap<Uuid, JobSlot>>>,
    demo: tokio::sync::Mutex<Option<Sim>>,
    /// A save folder that overrides the settings (the e2e tests' stand-in for a save dialog).
    save_folder_override: Option<PathBuf>,
    /// The native dialogs (see [`crate::dialogs`]): set by the shell once it runs.
    dialogs: std::sync::RwLock<Arc<dyn Dialogs>>,
    /// How long a backup waits for the service's callback.
    pub callback_timeout: Duration,
    /// webhook.site's address (tests; the demo uses its simulator's stand-in).
    pub webhook_site: String,
}

/// Closing the app interrupts its running jobs (see [`DesktopApp::shutdown`]).
impl Drop for DesktopApp {
    fn drop(&mut self) {
        for slot in self.jobs.lock().unwrap().values() {
            if let JobSlot::Running { task, .. } = slot {
                task.abort();
            }
        }
    }
}

/// What a job task does: a new backup, or finishing one from an earlier run.
enum JobWork {
    New(BackupRequest),
    Resume(Box<UnfinishedJob>),
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
        crate::staging::clear_leftovers(&history, &paths.staging_dir)?;
        Ok(Self {
            paths,
            profiles,
            keyring,
            demo_secrets: Arc::default(),
            history: Arc::new(history),
            connections: Mutex::default(),
            transports: Transports::default(),
            jobs: Arc::default(),
            demo: tokio::sync::Mutex::new(None),
            save_folder_override,
            dialogs: std::sync::RwLock::new(Arc::new(NoDialogs)),
            callback_timeout: Duration::from_secs(30 * 60),
            webhook_site: crate::callback::default_webhook_site(),
        })
    }

    /// Stops every running job and waits until each has let go of its files: those whose
    /// callback can still be collected stay journalled and are finished at the next start;
    /// the others end as cancelled.
    pub async fn shutdown(&self) {
        let running: Vec<JoinHandle<()>> = {
            let mut jobs = self.jobs.lock().unwrap();
            let ids: Vec<Uuid> = jobs
                .iter()
                .filter(|(_, slot)| matches!(slot, JobSlot::Running { .. }))
                .map(|(id, _)| *id)
                .collect();
            ids.iter()
                .filter_map(|id| match jobs.remove(id) {
                    Some(JobSlot::Running { task, .. }) => Some(task),
                    _ => None,
                })
                .collect()
        };
        for task in running {
            task.abort();
            let _ = task.await;
        }
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
        let transport = self.transport(id, &connection).await?;
        let job_id = Uuid::new_v4();
        let save_folder = self.save_folder();
        let (destination, staging) = match &save_folder {
            Some(folder) => (Destination::from_out(folder)?, None),
            None => {
                let staging = self.paths.staging_dir.join(job_id.simple().to_string());
                kluis_https::private::create_dir_all(&staging)
                    .map_err(|e| Error::io(format!("create {}", staging.display()), e))?;
                (Destination::Folder(staging.clone()), Some(staging))
            }
        };
        let request = BackupRequest {
            id: job_id,
            profile: id.to_string(),
            owner: Owner::App,
            destination,
            callback_timeout: self.callback_timeout,
        };
        self.spawn_job(
            job_id,
            id,
            connection,
            transport,
            staging,
            JobWork::New(request),
            sink,
        );
        Ok(job_id)
    }

    /// Finishes the backups an earlier run left unfinished (the app was closed or stopped
    /// while they waited or downloaded), as `kluis resume` does; their events go to `sink`.
    /// Jobs that can never finish are ended with the reason; jobs whose profile cannot sign in
    /// now (no saved secrets, keyring locked) are left for a later start.
    pub async fn resume_backups(&self, sink: ResumeSink) -> AppResult<Vec<ResumedJob>> {
        let mut resumed = self.offer_staged(&sink)?;
        let mut services: Vec<String> = Vec::new();
        for job in self.history.unfinished()? {
            let profile = job.entry.profile.as_str();
            if profile == DEMO_ID || profile == DEMO_RESTRICTED_ID {
                // The demo's service ended with the app that ran it.
                if self.history.claim(job.id())?.is_some() {
                    self.history.abandon(
                        job.id(),
                        &Error::NotResumable(
                            "The demo service ended when the app was closed; start a new backup."
                                .into(),
                        ),
                    )?;
                }
                continue;
            }
            // Jobs of other profiles (the CLI's, a removed one's) are left to `kluis resume`.
            if let (Ok(_), Some(journal)) = (self.profiles.get(profile), &job.journal) {
                if !services.contains(&journal.base_url) {
                    services.push(journal.base_url.clone());
                }
            }
        }
        // Read once, and only when there is something to resume.
        let relay_secret = match services.is_empty() {
            true => None,
            false => self
                .secret(APP, SecretKind::RelaySecret, false)
                .await
                .ok()
                .flatten(),
        };
        for base_url in services {
            let sweep = self.history.sweep(&base_url, Some(Owner::App))?;
            for job in sweep.resumable {
                let profile = job.entry.profile.clone();
                let (Some(spec), Ok(connection)) = (
                    job.journal.as_ref().and_then(|j| j.callback.clone()),
                    self.connection(&profile).await,
                ) else {
                    continue;
                };
                // A direct listener is this computer's, shared with new backups (same key as
                // the setting's); a relay or webhook.site client uses the profile's trust.
                let key = match &spec {
                    Reattach::Direct { .. } => Reattacher::key(&spec),
                    _ => format!("{} for {profile}", Reattacher::key(&spec)),
                };
                let reattacher = Reattacher::new(
                    connection.session.client().config().clone(),
                    relay_secret.clone(),
                );
                let build = async { Ok(reattacher.build(&spec).await?) };
                let transport = self.transports.get_or_build(&key, build).await;
                let transport = match transport {
                    Ok(transport) => transport,
                    Err(e) => {
                        tracing::warn!(code = e.code(), "a backup could not be resumed now");
                        continue;
                    }
                };
                let job_id = job.id();
                let staging = job
                    .journal
                    .as_ref()
                    .map(|j| j.destination.folder().to_path_buf())
                    .filter(|folder| folder.starts_with(&self.paths.staging_dir));
                resumed.push(ResumedJob {
                    job_id: job_id.to_string(),
                    profile_id: profile.clone(),
                    stage: job.entry.stage.clone(),
                });
                let sink = sink.clone();
                let tagged: EventSink = Arc::new(move |event| {
                    sink(ResumedEvent {
                        job_id: job_id.to_string(),
                        event,
                    })
                });
                self.spawn_job(
                    job_id,
                    &profile,
                    connection,
                    transport,
                    staging,
                    JobWork::Resume(Box::new(job)),
                    tagged,
                );
            }
        }
        Ok(resumed)
    }

    /// Offers again the verified backups that wait in the staging folder for a place (the app
    /// was closed before the user chose one, or `kluis resume --include-app` finished them).
    fn offer_staged(&self, sink: &ResumeSink) -> AppResult<Vec<ResumedJob>> {
        let mut offered = Vec::new();
        for (job_id, saved, staging) in
            crate::staging::saved_in_staging(&self.history, &self.paths.staging_dir)?
        {
            let mut jobs = self.jobs.lock().unwrap();
            if jobs.contains_key(&job_id) {
                continue;
            }
            let Some(entry) = self.history.get(job_id)? else {
                continue;
            };
            let event = AppJobEvent::Staged {
                file_name: saved
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                bytes: saved.bytes,
                sha256: saved.sha256.clone(),
            };
            jobs.insert(job_id, JobSlot::Staged { saved, staging });
            drop(jobs);
            sink(ResumedEvent {
                job_id: job_id.to_string(),
                event,
            });
            offered.push(ResumedJob {
                job_id: job_id.to_string(),
                profile_id: entry.profile,
                stage: entry.stage,
            });
        }
        Ok(offered)
    }

    /// Runs a job in a task; its outcome goes to `sink` and to the job slots.
    #[allow(clippy::too_many_arguments)]
    fn spawn_job(
        &self,
        job_id: Uuid,
        profile_id: &str,
        connection: Arc<ProfileSession>,
        transport: Arc<dyn CallbackTransport>,
        staging: Option<PathBuf>,
        work: JobWork,
        sink: EventSink,
    ) {
        let history = self.history.clone();
        let jobs = self.jobs.clone();
        let profile_id = profile_id.to_string();
        let learn = self.denial_learner();
        let cancel = Arc::new(tokio::sync::Notify::new());
        let cancel_for_task = cancel.clone();
        // The slot is filled before the task can end and clear it: the lock is held across.
        let jobs_for_slot = self.jobs.clone();
        let mut slots = jobs_for_slot.lock().unwrap();
        let task = tokio::spawn(async move {
            let job = BackupJob {
                session: &connection.session,
                transport: &*transport,
                downloader: &connection.downloader,
                history: &history,
                cancel: Some(&cancel_for_task),
            };
            let forward = sink.clone();
            let mut events = move |event: kluis_core::JobEvent| forward(event.into());
            let outcome = match &work {
                JobWork::New(request) => job.run(request, &mut events).await,
                JobWork::Resume(unfinished) => job.resume(unfinished, &mut events).await,
            };
            match outcome {
                Ok(saved) => match staging {
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
                    // Only a job that has ended leaves its folder; one that failed because
                    // another process holds it keeps it for that process.
                    let ended = history
                        .get(job_id)
                        .ok()
                        .flatten()
                        .is_some_and(|e| e.reached() == Stage::Failed);
                    if let (Some(staging), true) = (staging, ended) {
                        crate::staging::remove_parts(&staging);
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
        slots.insert(job_id, JobSlot::Running { task, cancel });
    }

    /// The dialogs the shell opens (see [`crate::dialogs`]).
    pub fn set_dialogs(&self, dialogs: Arc<dyn Dialogs>) {
        *self.dialogs.write().unwrap() = dialogs;
    }

    fn dialogs(&self) -> Arc<dyn Dialogs> {
        self.dialogs.read().unwrap().clone()
    }

    /// Asks where to keep a staged, verified backup (a native save dialog, opened here: the
    /// webview never hands over a path) and moves it there. `None` when the dialog was
    /// cancelled; the staged file then waits for another try.
    pub async fn save_backup(&self, job: Uuid) -> AppResult<Option<Saved>> {
        let file_name = match self.jobs.lock().unwrap().get(&job) {
            Some(JobSlot::Staged { saved, .. }) => saved
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            _ => {
                return Err(AppError::InvalidState(
                    "This backup is not waiting to be saved.".into(),
                ))
            }
        };
        let folder = crate::dialogs::default_folder();
        let Some(path) = self
            .dialogs()
            .save_file(&file_name, folder.as_deref())
            .await
        else {
            return Ok(None);
        };
        self.move_staged(job, path).await.map(Some)
    }

    /// Moves a staged, verified backup to `path`, which the user chose in the save dialog
    /// (the dialog asked before replacing an existing file, so it is replaced).
    async fn move_staged(&self, job: Uuid, path: PathBuf) -> AppResult<Saved> {
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
                crate::staging::remove_parts(&staging);
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

    /// Cancels a job at any stage; nothing is left behind. A running job ends itself as
    /// cancelled (its events say so); a staged file is removed here.
    pub async fn cancel_backup(&self, job: Uuid) -> AppResult<()> {
        let mut jobs = self.jobs.lock().unwrap();
        match jobs.get(&job) {
            Some(JobSlot::Running { cancel, .. }) => {
                cancel.notify_one();
                Ok(())
            }
            Some(JobSlot::Staged { saved, staging }) => {
                // The user declined the verified file that waited for a place.
                crate::staging::remove_folder_of(saved, staging);
                jobs.remove(&job);
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

    /// "Always save to this folder": the folder comes from a native dialog opened here.
    /// Unchanged when the dialog is cancelled.
    pub async fn choose_save_folder(&self) -> AppResult<Settings> {
        match self.dialogs().pick_folder().await {
            Some(folder) => self.set_save_folder(Some(folder)),
            None => Ok(self.settings()),
        }
    }

    /// Back to asking where to save each backup.
    pub fn clear_save_folder(&self) -> AppResult<Settings> {
        self.set_save_folder(None)
    }

    fn set_save_folder(&self, folder: Option<PathBuf>) -> AppResult<Settings> {
        if let Some(folder) = &folder {
            if !folder.is_dir() {
                let folder = folder.display();
                return Err(Error::Config(format!("The folder {folder} does not exist.")).into());
            }
        }
        self.profiles.set_settings(Settings {
            save_folder: folder.map(|f| f.to_string_lossy().into_owned()),
            ..self.profiles.settings()
        })?;
        Ok(self.settings())
    }

    /// Settings → tunnel: cloudflared picked in a native dialog opened here (when it is not
    /// on `PATH`), and saved as the tunnel setting. Unchanged when the dialog is cancelled.
    pub async fn choose_tunnel_program(&self) -> AppResult<Settings> {
        let Some(program) = self.dialogs().pick_program().await else {
            return Ok(self.settings());
        };
        let mut settings = self.profiles.settings();
        settings.callback = CallbackSetting::Tunnel {
            program: program.to_string_lossy().into_owned(),
        };
        self.profiles.set_settings(settings)?;
        self.transports.clear().await;
        Ok(self.settings())
    }

    /// Saves how the service reaches this computer (and the relay's secret, to the keyring).
    pub async fn set_callback(&self, input: CallbackInput) -> AppResult<Settings> {
        input.setting.check()?;
        let mut settings = self.profiles.settings();
        // The webview names no program: `cloudflared` (found on PATH), or the one the user
        // picked in the dialog of [`DesktopApp::choose_tunnel_program`], unchanged.
        if let CallbackSetting::Tunnel { program } = &input.setting {
            let picked = matches!(&settings.callback, CallbackSetting::Tunnel { program: p } if p == program);
            if program.trim() != TUNNEL_PROGRAM && !picked {
                return Err(Error::Config(
                    "Choose the cloudflared program with “Choose…”, or use cloudflared from the PATH.".into(),
                )
                .into());
            }
        }
        if let Some(secret) = input.relay_secret.filter(|s| !s.trim().is_empty()) {
            self.store_secret(
                APP,
                SecretKind::RelaySecret,
                Secret::new(secret.trim().to_string()),
                false,
            )
            .await?;
            settings.relay_secret_saved = true;
        }
        if matches!(input.setting, crate::CallbackSetting::Relay { .. })
            && !settings.relay_secret_saved
        {
            return Err(Error::Config(
                "Enter the relay's secret (KLUIS_RELAY_SECRET on the relay server).".into(),
            )
            .into());
        }
        settings.callback = input.setting;
        self.profiles.set_settings(settings)?;
        self.transports.clear().await;
        Ok(self.settings())
    }

    /// Sends a test call through the chosen transport's public address, as the service
    /// would, and reports how long it took to come back — or which step failed.
    pub async fn test_callback(&self, profile_id: &str) -> AppResult<CallbackTestResult> {
        let connection = self.connection(profile_id).await?;
        let transport = self.transport(profile_id, &connection).await?;
        let mut config = connection.session.client().config().clone();
        if let Some(pem) = transport.test_trust_pem() {
            config.extra_ca_pem = Some(config.extra_ca_pem.take().unwrap_or_default() + &pem);
        }
        let http =
            kluis_core::http::build_client(&config, kluis_core::http::RedirectRule::SameOrigin)?;
        let took = kluis_core::callback::test_callback(&*transport, &http).await?;
        Ok(CallbackTestResult {
            transport: transport.name().to_string(),
            millis: took.as_millis() as u64,
        })
    }

    /// The callback transport of the current setting, for `profile_id`'s jobs.
    async fn transport(
        &self,
        profile_id: &str,
        connection: &ProfileSession,
    ) -> AppResult<Arc<dyn CallbackTransport>> {
        let setting = self.profiles.settings().callback;
        let config = connection.session.client().config().clone();
        // The keyring and the demo are only asked when the transport is built, not per backup.
        let build = async {
            let relay_secret = match setting {
                crate::CallbackSetting::Relay { .. } => {
                    self.secret(APP, SecretKind::RelaySecret, false).await?
                }
                _ => None,
            };
            let webhook_site = match self.demo.lock().await.as_ref() {
                Some(sim) if self.profiles.get(profile_id).is_ok_and(|p| p.demo) => {
                    sim.webhook_site_url().to_string()
                }
                _ => self.webhook_site.clone(),
            };
            setting.build(&config, relay_secret, &webhook_site).await
        };
        self.transports
            .get_or_build(&setting.cache_key(profile_id), build)
            .await
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
    async fn connection(&self, id: &str) -> AppResult<Arc<ProfileSession>> {
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
        let connection = Arc::new(ProfileSession {
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
