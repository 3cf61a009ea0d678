//! [`DesktopApp`]: every command of the desktop app, as plain methods of its parts — one part
//! per concern, each in its own file with its own state. The Tauri shell calls each command in
//! one line (`app.plans.set_plan(…)`); tests call them directly against the simulator.
//!
//! Parts (the `pub` fields of [`DesktopApp`]):
//! - [`Accounts`] (`accounts.rs`, `encryption.rs`, `demo.rs`): profiles, sign-in, environment,
//!   permissions, a trusted CA, encryption, the demo's profiles.
//! - [`Backups`] (`backups.rs`): a backup someone starts and watches — start, resume at
//!   start-up, the save dialog, cancel — and the history; a saved backup's contents, its
//!   restore into a folder and its restore test (`restores.rs`).
//! - [`Plans`] (`plans.rs`, `unattended.rs`): each profile's schedule, the loop that starts
//!   the due ones, Backup all and Cancel all, pausing plans, the monitor; an unattended backup
//!   through kluis-profiles' one path.
//! - [`Keeping`] (`keeping.rs`, `reports.rs`, `dashboard.rs`): retention rules, verification,
//!   the auditors' report, the dashboard.
//! - [`Alerts`] (`alerts.rs`, `mail.rs`): failures and overdue klanten told on the desktop and
//!   by e-mail, Settings → *E-mail*, the daily report.
//! - [`AppSettings`] (`settings.rs`, `copy_targets.rs`, `sftp_target.rs`, `recovery_kit.rs`):
//!   the save folder, the callback, download speed, free space, file names, the copy targets
//!   off this computer, the office's recovery kit.
//! - [`Background`] (`background.rs`): the tray, closing the window while plans run, start at
//!   login.
//! - Edit many at once (`many.rs`, methods of [`DesktopApp`] itself: a change spans the
//!   parts): one plan, rule, encryption, copy targets or tags for the dashboard's selection.
//! - [`Imports`] (`imports.rs`): *Import klanten…* from a spreadsheet (previewed, then each
//!   klant signed in and saved), *Export klanten…*.
//! - [`Recovery`] (`recover.rs`): *Restore from a copy…*: the backups a copy target holds,
//!   found with the recovery kit, one restored, or this computer carrying on for a lost one.
//! - [`OfficeHub`] (`office.rs`): Settings → *Office* and the dashboard's *Office*: this PC in
//!   an office of several PCs (the office hub), the office view, this PC's hourly report.
//! - [`Updates`] (`updates.rs`): Settings → *Updates*: a newer Kluis looked for once a day,
//!   downloaded verified, installed when asked or by itself at a quiet moment — through the
//!   host's [`UpdateInstaller`] (`installing.rs`: also what stands in a setup's way), a setup
//!   started by itself noted (`setup_note.rs`: once a day, and told when it did not install).
//!
//! What they share (`shared.rs`: the files, the history, the engine, the dialogs),
//! [`Connections`](connections) (each klant's secrets, connection and callback transport) and
//! the registry of jobs (`jobs.rs`) are built once here and handed to the parts that use them;
//! `access.rs` learns what a klant's key allows.

mod access;
mod accounts;
mod alerts;
mod background;
mod backups;
mod catalog_round;
mod connections;
mod copy_targets;
mod dashboard;
mod demo;
mod encryption;
mod imports;
mod installing;
mod jobs;
mod keeping;
mod mail;
mod many;
mod office;
mod plans;
mod recover;
mod recovery_kit;
mod reports;
mod restores;
mod settings;
mod setup_note;
mod sftp_target;
mod shared;
mod unattended;
mod updates;

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::engine::Retry;
use kluis_core::{History, Stage};
use kluis_reporting::Notifier;
use serde::Serialize;

use crate::dialogs::Dialogs;
use crate::error::AppResult;
use crate::profiles::{ProfileStore, ProfileView};
use crate::secrets::SecretStore;
pub use accounts::Accounts;
pub use alerts::Alerts;
pub use background::{Background, LoginStart, NoLoginStart, TrayAction, HIDDEN_FLAG};
pub use backups::Backups;
pub use copy_targets::BucketInput;
pub use encryption::EncryptionInput;
pub use imports::{
    FieldColumn, ImportDefaults, ImportPreview, ImportProgress, ImportResult, ImportRow,
    ImportSink, Imports,
};
pub use installing::{
    program_in_the_way, setup_folder_argument, PackageManagerUpdates, UpdateInstaller,
    VerifiedSetup,
};
use jobs::{JobRegistry, JobSlot};
pub use keeping::{CopyProblem, Keeping, VerifyReport};
pub use mail::MailInput;
pub use many::{CopyToChange, FolderChange, ManyChange, ManyPreview, RuleChange};
pub use office::{OfficeHub, OfficeInvite, OfficeJoinInput, OfficeJoined, OfficeMembership};
pub use plans::{PlanInput, Plans};
pub use recover::{
    CarriedOn, FoundBackup, FoundComputer, FoundCopies, FoundEncryption, FoundProof,
    KlantTakenOver, RecoverProgress, RecoverSink, Recovery,
};
pub use recovery_kit::KitMade;
pub use reports::{ReportExport, ReportFormat, ReportRequest};
pub use restores::{HeldCopy, NotRestored, ProgressSink, RestoreProgress, RestoreSummary};
pub use settings::AppSettings;
pub use sftp_target::{SftpInput, SftpServer};
use shared::Shared;
pub use updates::{
    UpdateState, UpdateView, Updates, GAP_BETWEEN_SETUPS_BY_ITSELF, QUIET_BEFORE_PLAN, SETUP_TAKES,
};

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
    /// The demo app's own folder, where its backups, copies, settings and history are (none
    /// for the demo's klanten added to another app, as the tests do).
    pub folder: Option<String>,
}

/// The desktop app: its parts (see the module's text).
pub struct DesktopApp {
    pub accounts: Accounts,
    pub backups: Backups,
    pub plans: Arc<Plans>,
    pub keeping: Keeping,
    pub alerts: Arc<Alerts>,
    pub settings: AppSettings,
    pub background: Background,
    pub imports: Imports,
    pub updates: Updates,
    pub recovery: Recovery,
    pub office: OfficeHub,
    shared: Arc<Shared>,
    jobs: Arc<JobRegistry>,
    /// Opened as the demo app ([`DesktopAppBuilder::demo`]).
    demo: bool,
}

/// Unattended backups running at once: Settings (default 2), or
/// [`DesktopAppBuilder::unattended_at_once`].
pub use kluis_profiles::settings::{DEFAULT_AT_ONCE as UNATTENDED_AT_ONCE, MAX_AT_ONCE};

/// How a [`DesktopApp`] is opened: its files and keyring, and what tests choose instead of
/// the defaults.
pub struct DesktopAppBuilder {
    paths: AppPaths,
    keyring: Arc<dyn SecretStore>,
    save_folder_override: Option<PathBuf>,
    retry: Retry,
    webhook_site: String,
    unattended_at_once: Option<usize>,
    notifier: Option<(Arc<dyn Notifier>, Duration)>,
    update_server: updates::UpdateServer,
    demo: bool,
    fresh_connections: bool,
}

impl DesktopAppBuilder {
    /// The demo app (`kluis-app --demo`): its files in the demo's own folder beside these
    /// ([`AppPaths::demo`]), its secrets kept apart from this Kluis's
    /// ([`crate::secrets::DemoSecrets`]); [`DesktopApp::start_demo`] furnishes it.
    pub fn demo(mut self, demo: bool) -> Self {
        if demo && !self.demo {
            self.paths = self.paths.demo();
            self.keyring = Arc::new(crate::secrets::DemoSecrets(self.keyring));
            self.demo = true;
        }
        self
    }

    /// Looks for updates at `publisher`, trusting `ca_pem` too (tests; otherwise the build's
    /// or `KLUIS_UPDATE_URL`'s).
    pub fn update_server(
        mut self,
        publisher: kluis_update::Publisher,
        ca_pem: Option<String>,
    ) -> Self {
        self.update_server = Some((publisher, ca_pem));
        self
    }

    /// A save folder that overrides the settings (the e2e tests' stand-in for a save dialog).
    pub fn save_folder(mut self, folder: Option<PathBuf>) -> Self {
        self.save_folder_override = folder;
        self
    }

    /// How unattended backups are tried again (default: `KLUIS_RETRY`, else three tries).
    pub fn retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }

    /// webhook.site's address (tests; the demo uses its simulator's stand-in).
    pub fn webhook_site(mut self, url: impl Into<String>) -> Self {
        self.webhook_site = url.into();
        self
    }

    /// Runs at most `n` (at least one) unattended backups at once, whatever the settings say.
    pub fn unattended_at_once(mut self, n: usize) -> Self {
        self.unattended_at_once = Some(n);
        self
    }

    /// Makes each backup's connection anew from the klant as it is then (its profile, its
    /// secrets, its encryption), never one kept from before: for `kluis-tray`, which runs for
    /// days while the window — another process — edits the klanten.
    pub fn fresh_connections(mut self) -> Self {
        self.fresh_connections = true;
        self
    }

    /// Shows desktop notifications on `notifier`, gathering failures for `gather_for` (tests).
    pub fn notifier(mut self, notifier: Arc<dyn Notifier>, gather_for: Duration) -> Self {
        self.notifier = Some((notifier, gather_for));
        self
    }

    /// Opens the profiles file and the history, clears the staging folder of what is provably
    /// a leftover, and builds the parts.
    pub fn open(self) -> AppResult<DesktopApp> {
        let paths = self.paths;
        let history = History::open(&paths.history_db)?;
        let profiles = Arc::new(ProfileStore::open(paths.profiles_file.clone())?);
        crate::staging::clear_leftovers(&history, &paths.staging_dir)?;
        let settings = profiles.settings();
        // A limit that no longer passes the check (edited by hand) is no limit, not a failed start.
        let bandwidth =
            Arc::new(Bandwidth::new(settings.bandwidth).or_else(|_| Bandwidth::new(None))?);
        let (desktop, gather_for) = self.notifier.unwrap_or((
            Arc::new(kluis_reporting::DesktopNotifier),
            kluis_reporting::alerts::GATHER_FOR,
        ));
        let shared = Arc::new(Shared::new(
            paths,
            profiles,
            Arc::new(history),
            self.save_folder_override,
            self.retry,
            self.keyring.clone(),
            Arc::new(bandwidth.other_direction()),
        ));
        let connections = Arc::new(connections::Connections::new(
            shared.clone(),
            bandwidth,
            self.webhook_site,
            !self.fresh_connections,
        ));
        let jobs = Arc::new(JobRegistry::new(shared.clone()));
        let alerts = Arc::new(Alerts::new(
            shared.clone(),
            self.keyring,
            desktop,
            gather_for,
        ));
        let plans = Arc::new(Plans::new(
            shared.clone(),
            connections.clone(),
            jobs.clone(),
            alerts.clone(),
            self.unattended_at_once,
        ));
        Ok(DesktopApp {
            accounts: Accounts::new(shared.clone(), connections.clone()),
            backups: Backups {
                shared: shared.clone(),
                connections: connections.clone(),
                jobs: jobs.clone(),
                resume_sink: Default::default(),
            },
            keeping: Keeping {
                shared: shared.clone(),
            },
            imports: Imports::new(shared.clone(), connections.clone()),
            updates: Updates::new(
                shared.clone(),
                jobs.clone(),
                alerts.clone(),
                self.update_server,
            ),
            recovery: Recovery::new(shared.clone()),
            office: OfficeHub::new(shared.clone()),
            settings: AppSettings {
                shared: shared.clone(),
                connections,
            },
            background: Background {
                shared: shared.clone(),
                jobs: jobs.clone(),
                plans: plans.clone(),
                alerts: alerts.clone(),
                login_start: RwLock::new(match self.demo {
                    true => Arc::new(background::DemoLoginStart),
                    false => Arc::new(NoLoginStart),
                }),
            },
            plans,
            alerts,
            shared,
            jobs,
            demo: self.demo,
        })
    }
}

impl DesktopApp {
    /// The app on `paths`' files, its secrets in `keyring`; `save_folder_override` stands in
    /// for the save dialog (the e2e tests).
    pub fn open(
        paths: AppPaths,
        keyring: Arc<dyn SecretStore>,
        save_folder_override: Option<PathBuf>,
    ) -> AppResult<Self> {
        Self::builder(paths, keyring)
            .save_folder(save_folder_override)
            .open()
    }

    /// A [`DesktopAppBuilder`] for the app on `paths`' files, its secrets in `keyring`.
    pub fn builder(paths: AppPaths, keyring: Arc<dyn SecretStore>) -> DesktopAppBuilder {
        DesktopAppBuilder {
            paths,
            keyring,
            save_folder_override: None,
            retry: Retry::from_env(),
            webhook_site: kluis_core::engine::default_webhook_site(),
            unattended_at_once: None,
            notifier: None,
            update_server: None,
            demo: false,
            fresh_connections: false,
        }
    }

    /// Stops every running job and waits until each has let go of its files: those whose
    /// callback can still be collected stay journalled and are finished at the next start;
    /// the others end as cancelled.
    pub async fn shutdown(&self) {
        self.shared.engine.shutdown().await;
        (self.jobs.slots.lock().unwrap()).retain(|_, slot| !matches!(slot, JobSlot::Running));
    }

    /// The background work, for as long as the process that owns it runs (see
    /// [`crate::owner`]): the plans, the copies a target that was away could not take, the
    /// look for klanten that became overdue, the office's report, (not in the demo: an
    /// install would end the real Kluis beside it) the daily look for updates, and the heap
    /// given back while no backup runs.
    pub async fn run_background(&self) {
        let updates = async {
            if !self.demo {
                self.updates.watch().await
            }
        };
        tokio::join!(
            self.plans.run_plans(),
            self.keeping.copy_pending(),
            self.alerts.watch_overdue(),
            self.office.keep_telling(),
            updates,
            self.give_back_memory_while_idle(),
        );
    }

    /// A window opened while `kluis-tray` runs the plans (`guest`: while this process does not
    /// hold the background right) shows that process's backups as its own — their progress,
    /// their end, *Cancel* and *Cancel all* (`crate::mirror`). Followed from the moment the
    /// window watches planned backups, until `guest` says this process runs them itself;
    /// `kluis-tray` not there (yet, or any more) is looked for again every second. Meanwhile
    /// what changes here (a backup, a plan, a restore test) reaches the office soon, as it
    /// would from the process that runs the plans.
    pub async fn follow_tray(&self, guest: impl Fn() -> bool) {
        tokio::select! {
            _ = self.follow_tray_while(guest) => {}
            _ = self.office.keep_telling() => {}
            _ = self.give_back_memory_while_idle() => {}
        }
    }

    /// Gives the heap's free memory back once a minute while no backup of this process runs
    /// ([`crate::memory`]); never returns.
    async fn give_back_memory_while_idle(&self) {
        crate::memory::give_back_while_idle(
            || self.background.backup_runs(),
            crate::memory::give_back,
        )
        .await
    }

    async fn follow_tray_while(&self, guest: impl Fn() -> bool) {
        let address = crate::mirror::address(&self.shared.paths);
        self.plans.until_watched().await;
        while guest() {
            let (requests, mut asked) = tokio::sync::mpsc::unbounded_channel();
            *self.shared.tray_requests.lock().unwrap() = Some(requests);
            let plans = self.plans.clone();
            let sink: crate::events::PlannedSink = Arc::new(move |e| plans.tell_window(e));
            let followed = crate::mirror::follow(&address, sink, &mut asked).await;
            *self.shared.tray_requests.lock().unwrap() = None;
            if let Err(e) = followed {
                tracing::debug!(%e, "kluis-tray is not reached");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// The files this app works on.
    pub fn paths(&self) -> &AppPaths {
        &self.shared.paths
    }

    /// Whether this is the demo app.
    pub fn is_demo(&self) -> bool {
        self.demo
    }

    /// The dialogs the shell opens (see [`crate::dialogs`]).
    pub fn set_dialogs(&self, dialogs: Arc<dyn Dialogs>) {
        self.shared.set_dialogs(dialogs);
    }
}
