//! [`DesktopApp`]: every command of the desktop app, as plain async methods. The Tauri shell
//! calls each in one line; tests call them directly against the simulator.
//!
//! This file holds the state, start-up and shutdown and the internals the commands share
//! (secrets, connections, learnt permissions); the commands are grouped by concern in
//! `accounts` (profiles and sessions), `connections` (secrets and each profile's
//! connection), `jobs` (the app's registry of jobs: running in the engine, or staged and
//! waiting for a place), `backups` (jobs on kluis-core's [`Engine`], which runs
//! them; this app adds the staging folder and the save dialog), `plans` (each profile's
//! schedule, and the loop that starts the due ones), `alerts` (failures and overdue klanten
//! told on the desktop and by e-mail), `mail` (Settings → E-mail and the daily report),
//! `dashboard` (every klant's standing), `encryption` (a klant's encryption at rest), `keeping` (retention rules, their preview and
//! "Verify backups"), `reports` ("Export report" for auditors), `background` (the tray, "Pause plans", closing the
//! window while plans run, start at login), `settings` and `demo`.

mod accounts;
mod alerts;
mod background;
mod backups;
mod connections;
mod dashboard;
mod demo;
mod encryption;
mod jobs;
mod keeping;
mod mail;
mod plans;
mod reports;
mod settings;
mod unattended;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kluis_core::download::bandwidth::{Bandwidth, BandwidthLimit};
use kluis_core::engine::{
    CallbackChoice, EventSink as JobEventSink, JobHandle, Launch, ResumeScope, Retry,
    ServiceConnection, TransportNeeds, Work,
};
use kluis_core::{
    BackupRequest, CallbackTransport, Destination, DownloadOptions, Engine, Error, History,
    HistoryEntry, KlantKey, Owner, Saved, Secret, ServiceConfig, Stage,
};
use kluis_demo::{Demo, DemoAccount, DEMO_ACCOUNTS};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::callback::{CallbackInput, CallbackTestResult};
use crate::dialogs::{Dialogs, NoDialogs};
use crate::error::{AppError, AppResult};
use crate::events::{AppJobEvent, EventSink, ResumeSink, ResumedEvent};
use crate::permissions::{Endpoint, Permissions};
use crate::profiles::{Profile, ProfileInput, ProfileStore, ProfileView, Settings};
use crate::secrets::{MemoryStore, SecretKind, SecretStore, APP};
pub use background::{LoginStart, NoLoginStart, TrayAction, HIDDEN_FLAG};
pub use encryption::EncryptionInput;
use jobs::{Follow, JobSlot};
pub use keeping::VerifyReport;
pub use mail::MailInput;
pub use plans::PlanInput;
pub use reports::{ReportExport, ReportFormat, ReportRequest};

/// The tunnel program looked up on `PATH`; any other must be picked in a native dialog.
pub const TUNNEL_PROGRAM: &str = "cloudflared";

/// Where the app keeps its files (the same as the CLI's).
pub use kluis_profiles::KluisPaths as AppPaths;

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
    pub stage: Stage,
}

/// About the running demo.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct DemoInfo {
    pub base_url: String,
    pub profiles: Vec<ProfileView>,
}

/// The desktop app's state and commands.
pub struct DesktopApp {
    paths: AppPaths,
    profiles: Arc<ProfileStore>,
    keyring: Arc<dyn SecretStore>,
    demo_secrets: Arc<MemoryStore>,
    history: Arc<History>,
    /// Runs the jobs (and holds the transports they share).
    engine: Engine,
    /// Each profile's session and downloader, made on first use.
    connections: Mutex<HashMap<String, Arc<ServiceConnection>>>,
    /// The download speed limit every download shares (Settings → Download speed).
    bandwidth: Arc<Bandwidth>,
    jobs: Arc<Mutex<HashMap<Uuid, JobSlot>>>,
    /// `KLUIS_CA_CERT`'s certificates, read at start: trusted by profiles without their own.
    env_ca_pem: Option<String>,
    demo: tokio::sync::Mutex<Option<Demo>>,
    /// A save folder that overrides the settings (the e2e tests' stand-in for a save dialog).
    save_folder_override: Option<PathBuf>,
    /// The native dialogs (see [`crate::dialogs`]): set by the shell once it runs.
    dialogs: std::sync::RwLock<Arc<dyn Dialogs>>,
    /// How long a backup waits for the service's callback.
    pub callback_timeout: Duration,
    /// How unattended backups (plans, Backup all) are tried again after a passing failure
    /// before their klant counts as failed; a backup someone started is tried once.
    pub retry: Retry,
    /// webhook.site's address (tests; the demo uses its simulator's stand-in).
    pub webhook_site: String,
    /// The plans' scheduler, until [`DesktopApp::run_plans`] takes it.
    scheduler: Mutex<Option<kluis_core::engine::Scheduler>>,
    /// Notified when a plan changes, so the scheduler looks again at once.
    plans_changed: Arc<tokio::sync::Notify>,
    /// Where planned backups' events go (the window, once it subscribed).
    planned_sink: Mutex<Option<crate::events::PlannedSink>>,
    /// Slots for unattended backups (plans, Backup all): a batch of klanten runs a few at a
    /// time, so the service and this computer are not asked for everything at once.
    /// Replaced when the setting changes (jobs holding a slot of the old one finish as they
    /// are). Each "Cancel all" moves `batch` on, so Backup all's klanten still waiting for a
    /// slot are not started.
    unattended: Mutex<Arc<tokio::sync::Semaphore>>,
    batch: std::sync::atomic::AtomicU64,
    /// Failures, gathered and told through an outbox (the desktop and/or e-mail, as the
    /// settings say); overdue klanten are told through the same outbox.
    alerts: Arc<kluis_reporting::FailureBatch>,
    /// The desktop's notifications (the tray's own messages, "Send test").
    desktop: Arc<dyn kluis_reporting::Notifier>,
    /// The office's e-mail (password from the keyring).
    office: kluis_reporting::OfficeMail,
    /// Starting at login (see [`background::LoginStart`]): set by the shell once it runs.
    login_start: std::sync::RwLock<Arc<dyn LoginStart>>,
}

/// Unattended backups running at once: Settings (default 2), or
/// [`DesktopApp::with_unattended_at_once`].
pub use kluis_profiles::store::{DEFAULT_AT_ONCE as UNATTENDED_AT_ONCE, MAX_AT_ONCE};

impl DesktopApp {
    pub fn open(
        paths: AppPaths,
        keyring: Arc<dyn SecretStore>,
        save_folder_override: Option<PathBuf>,
    ) -> AppResult<Self> {
        let history = History::open(&paths.history_db)?;
        let profiles = Arc::new(ProfileStore::open(paths.profiles_file.clone())?);
        crate::staging::clear_leftovers(&history, &paths.staging_dir)?;
        let history = Arc::new(history);
        // A limit that no longer passes the check (edited by hand) is no limit, not a failed start.
        let bandwidth =
            Bandwidth::new(profiles.settings().bandwidth).or_else(|_| Bandwidth::new(None))?;
        let scheduler = plans::new_scheduler();
        let desktop: Arc<dyn kluis_reporting::Notifier> =
            Arc::new(kluis_reporting::DesktopNotifier);
        let office = kluis_reporting::OfficeMail::new(keyring.clone());
        Ok(Self {
            plans_changed: scheduler.changed(),
            scheduler: Mutex::new(Some(scheduler)),
            planned_sink: Mutex::default(),
            unattended: Mutex::new(Arc::new(tokio::sync::Semaphore::new(
                profiles.settings().unattended_at_once.clamp(1, MAX_AT_ONCE) as usize,
            ))),
            batch: Default::default(),
            alerts: alerts::outbox_batch(
                desktop.clone(),
                office.clone(),
                &profiles,
                kluis_reporting::alerts::GATHER_FOR,
            ),
            desktop,
            office,
            paths,
            profiles,
            keyring,
            demo_secrets: Arc::default(),
            engine: Engine::new(history.clone()),
            history,
            connections: Mutex::default(),
            bandwidth: Arc::new(bandwidth),
            jobs: Arc::default(),
            env_ca_pem: std::env::var("KLUIS_CA_CERT")
                .ok()
                .and_then(|path| std::fs::read_to_string(path).ok()),
            demo: tokio::sync::Mutex::new(None),
            save_folder_override,
            dialogs: std::sync::RwLock::new(Arc::new(NoDialogs)),
            login_start: std::sync::RwLock::new(Arc::new(NoLoginStart)),
            callback_timeout: Duration::from_secs(30 * 60),
            retry: Retry::from_env(),
            webhook_site: kluis_core::engine::default_webhook_site(),
        })
    }

    /// Runs at most `n` (at least one) unattended backups at once.
    pub fn with_unattended_at_once(mut self, n: usize) -> Self {
        self.unattended = Mutex::new(Arc::new(tokio::sync::Semaphore::new(n.max(1))));
        self
    }

    /// Stops every running job and waits until each has let go of its files: those whose
    /// callback can still be collected stay journalled and are finished at the next start;
    /// the others end as cancelled.
    pub async fn shutdown(&self) {
        self.engine.shutdown().await;
        self.jobs
            .lock()
            .unwrap()
            .retain(|_, slot| !matches!(slot, JobSlot::Running));
    }

    /// The dialogs the shell opens (see [`crate::dialogs`]).
    pub fn set_dialogs(&self, dialogs: Arc<dyn Dialogs>) {
        *self.dialogs.write().unwrap() = dialogs;
    }

    fn dialogs(&self) -> Arc<dyn Dialogs> {
        self.dialogs.read().unwrap().clone()
    }

    fn learn_access(&self, id: &str, outcome: Result<(), &Error>, endpoints: &[Endpoint]) {
        (self.access_learner())(id, outcome, endpoints)
    }

    /// Records what the service said of `endpoints` for the permissions view (usable from a
    /// job's task): an answer means allowed, a 403 denied; other failures say nothing. The
    /// profile is read once and written only when something changed.
    fn access_learner(
        &self,
    ) -> impl Fn(&str, Result<(), &Error>, &[Endpoint]) + Send + Sync + 'static {
        let profiles = self.profiles.clone();
        move |id: &str, outcome: Result<(), &Error>, endpoints: &[Endpoint]| {
            let allowed = match outcome {
                Ok(()) => true,
                Err(e) if e.code() == kluis_core::Code::PermissionDenied => false,
                Err(_) => return,
            };
            let learnt = |profile: &mut Profile| {
                let (add, remove) = match allowed {
                    true => (&mut profile.allowed, &mut profile.denied),
                    false => (&mut profile.denied, &mut profile.allowed),
                };
                let mut changed = false;
                for endpoint in endpoints {
                    if remove.contains(endpoint) {
                        remove.retain(|e| e != endpoint);
                        changed = true;
                    }
                    if !add.contains(endpoint) {
                        add.push(*endpoint);
                        changed = true;
                    }
                }
                changed
            };
            let Ok(mut profile) = profiles.get(id) else {
                return;
            };
            if learnt(&mut profile) {
                let _ = profiles.update(id, |profile| {
                    learnt(profile);
                    Ok(())
                });
            }
        }
    }
}
