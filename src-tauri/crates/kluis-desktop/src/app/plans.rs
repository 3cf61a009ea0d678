//! [`Plans`]: each profile's schedule (set here, kept in its profile) and the loop that runs them
//! — kluis-core's [`Scheduler`] decides which profile is due; this file starts its backup into
//! the save folder, in a folder of its own per klant (a planned backup cannot ask where), and
//! tells the window, which shows the job under its klant.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use kluis_core::download::BatchLimits;
use kluis_core::engine::{PlanBook, PlannedProfile, Scheduler};
use kluis_core::plan::{Plan, Schedule};
use kluis_core::{Error, History};
use kluis_profiles::last_started;
use kluis_profiles::settings::MAX_AT_ONCE;
use tokio::sync::Notify;
use uuid::Uuid;

use super::alerts::Alerts;
use super::connections::Connections;
use super::jobs::JobRegistry;
use super::shared::Shared;
use crate::error::{AppError, AppResult};
use crate::events::{AppJobEvent, EventSink, PlannedEvent, PlannedSink};
use crate::profiles::{Profile, ProfileStore, ProfileView, Settings};

/// What the UI sends to set a profile's plan.
#[derive(Debug, Clone, serde::Deserialize, ts_rs::TS)]
pub struct PlanInput {
    pub schedule: Schedule,
    #[serde(default)]
    pub paused: bool,
}

/// The profiles file and the history, as the scheduler reads them.
struct AppPlans {
    profiles: Arc<ProfileStore>,
    history: Arc<History>,
}

impl PlanBook for AppPlans {
    fn planned(&self) -> Vec<PlannedProfile> {
        self.profiles
            .list()
            .into_iter()
            .filter_map(|p| {
                let key = p.key();
                let plan = p.plan?;
                Some(PlannedProfile {
                    last_started: last_started(&self.history, &key),
                    id: p.id,
                    plan,
                })
            })
            .collect()
    }
}

/// See the module's text.
pub struct Plans {
    pub(super) shared: Arc<Shared>,
    pub(super) connections: Arc<Connections>,
    pub(super) jobs: Arc<JobRegistry>,
    /// A failed unattended backup is told (see [`Alerts::failure_teller`]).
    pub(super) alerts: Arc<Alerts>,
    /// Planned klanten another PC of the office was backing up when their turn was asked for
    /// (see [`Plans::run_plans`]).
    pub(super) held_elsewhere: Mutex<Vec<String>>,
    /// The scheduler, until [`Plans::run_plans`] takes it.
    scheduler: Mutex<Option<Scheduler>>,
    /// Notified when a plan changes, so the scheduler looks again at once.
    changed: Arc<Notify>,
    /// Where planned backups' events go (the window, once it subscribed).
    planned_sink: Mutex<Option<PlannedSink>>,
    /// Told when [`Plans::watch_planned`] sets `planned_sink`.
    watched: Notify,
    /// Limits for unattended backups (plans, Backup all): a batch of klanten runs a few at a
    /// time, so the service and this computer are not asked for everything at once — the
    /// setting's number downloading and one more asking for its backup meanwhile
    /// (`kluis_core::download::turns`). Made at the first start, and again when the setting is
    /// found changed ([`Plans::limits`]; jobs holding the old ones finish as they are).
    limits: Mutex<Option<BatchLimits>>,
    /// The builder's number, whatever the settings say (tests).
    fixed_at_once: Option<usize>,
    /// How many times "Cancel all" was clicked: a klant asked for before the last one (Backup
    /// all's queue, a plan handed out) and still waiting for a slot is not started.
    pub(super) cancels: AtomicU64,
    /// Told by "Cancel all": the plans due and not handed out yet are skipped
    /// ([`Plans::run_plans`]), those due by `cancelled_at`.
    cancelled: Notify,
    cancelled_at: Mutex<Option<jiff::Zoned>>,
}

impl Plans {
    pub(super) fn new(
        shared: Arc<Shared>,
        connections: Arc<Connections>,
        jobs: Arc<JobRegistry>,
        alerts: Arc<Alerts>,
        fixed_at_once: Option<usize>,
    ) -> Plans {
        // Due plans 15 s apart.
        let scheduler = Scheduler::new(
            Arc::new(kluis_core::clock::SystemWallClock),
            Duration::from_secs(15),
        );
        Plans {
            shared,
            connections,
            jobs,
            alerts,
            changed: scheduler.changed(),
            scheduler: Mutex::new(Some(scheduler)),
            held_elsewhere: Mutex::default(),
            planned_sink: Mutex::default(),
            watched: Notify::new(),
            limits: Mutex::default(),
            fixed_at_once,
            cancels: AtomicU64::default(),
            cancelled: Notify::new(),
            cancelled_at: Mutex::default(),
        }
    }

    /// Sets profile `id`'s plan. A plan that runs needs a save folder (nobody
    /// is there to answer a save dialog); a changed schedule counts its slots from now.
    pub fn set_plan(&self, id: &str, input: PlanInput) -> AppResult<ProfileView> {
        input.schedule.check()?;
        if input.schedule != Schedule::Manual && !input.paused {
            self.shared
                .check_unattended_folder(&self.shared.profiles.get(id)?)?;
        }
        let profile = self.shared.profiles.update(id, |profile| {
            profile.plan = Plan::reschedule(
                profile.plan.take(),
                input.schedule,
                input.paused,
                Timestamp::now(),
            )?;
            Ok(())
        })?;
        self.changed.notify_one();
        self.shared.office_changed.notify_one();
        Ok(self.shared.view(&profile))
    }

    /// Sets (or, with `None` or an empty URL, removes) profile `id`'s outside monitor: its
    /// ping URL, called after each unattended backup (see `kluis_profiles::monitor`).
    pub fn set_monitor(&self, id: &str, ping_url: Option<String>) -> AppResult<ProfileView> {
        let ping_url = match ping_url.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(url) => Some(kluis_profiles::monitor::check_ping_url(url)?),
        };
        let profile = self.shared.profiles.update(id, |profile| {
            profile.ping_url = ping_url;
            Ok(())
        })?;
        Ok(self.shared.view(&profile))
    }

    /// "Send test": a test ping to profile `id`'s monitor.
    pub async fn test_monitor(&self, id: &str) -> AppResult<()> {
        let profile = self.shared.profiles.get(id)?;
        let monitor = kluis_profiles::Monitor::of(&profile, self.shared.env_ca_pem.as_deref())
            .ok_or_else(|| AppError::InvalidState("This profile has no monitor yet.".into()))?;
        Ok(monitor.ping(&kluis_profiles::Ran::Test).await?)
    }

    /// Where planned backups' events go (the window subscribes once it runs).
    pub fn watch_planned(&self, sink: PlannedSink) {
        *self.planned_sink.lock().unwrap() = Some(sink);
        self.watched.notify_waiters();
    }

    /// Returns once someone watches the planned backups' events ([`Plans::watch_planned`]).
    pub(super) async fn until_watched(&self) {
        loop {
            let watched = self.watched.notified();
            tokio::pin!(watched);
            watched.as_mut().enable();
            if self.planned_sink.lock().unwrap().is_some() {
                return;
            }
            watched.await;
        }
    }

    /// Tells the window `event` of a backup another process runs (`kluis-tray`'s, followed by
    /// `DesktopApp::follow_tray`), as if this one ran it.
    pub(super) fn tell_window(&self, event: PlannedEvent) {
        let watcher = self.planned_sink.lock().unwrap().clone();
        if let Some(watcher) = watcher {
            watcher(event);
        }
    }

    /// Runs the plans until the app ends: each profile the scheduler hands out is backed up.
    /// (A second call returns at once: there is one scheduler.)
    pub async fn run_plans(&self) {
        let Some(mut scheduler) = self.scheduler.lock().unwrap().take() else {
            return;
        };
        let book = AppPlans {
            profiles: self.shared.profiles.clone(),
            history: self.shared.history.clone(),
        };
        loop {
            // (Read first: a plan handed out as Cancel all comes is one it skips.)
            let cancels = self.cancels.load(Ordering::SeqCst);
            // (Cancel all first: the scheduler keeps a plan whose turn was awaited queued.)
            let id = tokio::select! {
                biased;
                () = self.cancelled.notified() => {
                    let at = self.cancelled_at.lock().unwrap().take();
                    let at = at.unwrap_or_else(jiff::Zoned::now);
                    let skipped = scheduler.skip_waiting(&book, &at);
                    if skipped > 0 {
                        tracing::info!(skipped, "Cancel all: the plans waiting for their turn run at their next time");
                    }
                    continue;
                }
                id = scheduler.next(&book) => id,
            };
            if let Err(e) = self.start_unattended(&id, true, cancels).await {
                tracing::warn!(code = %e.code(), "a planned backup could not start");
                self.tell_not_started(&id, e);
            }
            // Another PC of the office is backing it up now: asked again at the next look, so
            // that a PC that then fails leaves it to this one within the slot.
            for held in std::mem::take(&mut *self.held_elsewhere.lock().unwrap()) {
                scheduler.look_again(&held);
            }
        }
    }

    /// *Its own folder…* (the profile form): the klant's backups go to a folder picked in the
    /// native dialog (unchanged when it is cancelled) instead of one under the office's.
    pub async fn choose_klant_folder(&self, id: &str) -> AppResult<ProfileView> {
        let profile = self.shared.profiles.get(id)?;
        let Some(folder) = self.shared.dialogs().pick_folder().await else {
            return Ok(self.shared.view(&profile));
        };
        self.set_klant_folder(id, Some(folder))
    }

    /// The klant's own folder set (`None`: back to a folder under the office's).
    pub(super) fn set_klant_folder(
        &self,
        id: &str,
        folder: Option<PathBuf>,
    ) -> AppResult<ProfileView> {
        let profile = self.shared.profiles.update(id, |p| {
            p.save_folder = folder.map(|f| f.to_string_lossy().into_owned());
            Ok(())
        })?;
        Ok(self.shared.view(&profile))
    }

    /// *Use the office's folder*: the klant's own folder forgotten (its backups there stay).
    pub fn clear_klant_folder(&self, id: &str) -> AppResult<ProfileView> {
        let profile = self.shared.profiles.get(id)?;
        if profile.save_folder.is_some()
            && profile
                .plan
                .as_ref()
                .is_some_and(|p| !p.paused && p.schedule != Schedule::Manual)
        {
            self.shared.check_unattended_folder(&Profile {
                save_folder: None,
                ..profile
            })?;
        }
        self.set_klant_folder(id, None)
    }

    /// Backup all: every profile, a few at a time (Settings → at once), each into its own
    /// folder; one that cannot start is reported and the others go on. Returns when the last
    /// one has started (their events go where [`Plans::watch_planned`] said).
    pub async fn backup_all(&self) -> AppResult<usize> {
        // Said at once, not once per klant, when the office's save folder is missing and a
        // klant without its own needs it.
        for profile in self.shared.profiles.list() {
            self.shared.check_unattended_folder(&profile)?;
        }
        // (The whole batch is work of this process: a closing window waits for it.)
        let _batch = self.jobs.starting();
        let cancels = self.cancels.load(Ordering::SeqCst);
        let mut started = 0;
        for profile in self.shared.profiles.list() {
            match self.start_unattended(&profile.id, false, cancels).await {
                Ok(Some(_)) => started += 1,
                Ok(None) => break, // "Cancel all": the rest of the queue is not started
                Err(e) => self.tell_not_started(&profile.id, e),
            }
        }
        Ok(started)
    }

    /// "Cancel all": every running backup ends as cancelled (nothing of it is left behind),
    /// and none of the klanten still waiting starts — Backup all's, or the plans due and
    /// waiting for their turn (each is due again at its next time in this process; a restart
    /// before then, or the timer's `kluis run-due`, runs it once as a missed backup). Returns
    /// how many were running.
    pub fn cancel_all(&self) -> usize {
        self.cancels.fetch_add(1, Ordering::SeqCst);
        *self.cancelled_at.lock().unwrap() = Some(jiff::Zoned::now());
        self.cancelled.notify_one();
        // And kluis-tray's, when this window follows them (it counts its own).
        self.shared.ask_tray(crate::owner::TrayRequest::CancelAll);
        (self.jobs.running_job_ids().into_iter())
            .filter(|id| self.shared.engine.cancel(*id))
            .count()
    }

    /// Settings → how many unattended backups download at once (1 to [`MAX_AT_ONCE`]). Backups
    /// already running keep their places; the next ones start within the new number — in
    /// `kluis-tray` too, which reads it at each klant's start ([`Plans::limits`]).
    pub fn set_unattended_at_once(&self, n: u32) -> AppResult<Settings> {
        if !(1..=MAX_AT_ONCE).contains(&n) {
            return Err(Error::Config(format!(
                "Between 1 and {MAX_AT_ONCE} backups can run at once."
            ))
            .into());
        }
        self.shared.profiles.update_settings(|settings| {
            settings.unattended_at_once = n;
            Ok(())
        })?;
        Ok(self.shared.settings())
    }

    /// Where events of unattended job `job_id` of klant `profile_id` go: to the window (when it
    /// watches), tagged with both.
    pub(super) fn window_sink(&self, profile_id: &str, job_id: Uuid) -> EventSink {
        let watcher = self.planned_sink.lock().unwrap().clone();
        let (profile_id, job_id) = (profile_id.to_string(), job_id.to_string());
        Arc::new(move |event| {
            if let Some(watcher) = &watcher {
                watcher(PlannedEvent {
                    job_id: job_id.clone(),
                    profile_id: profile_id.clone(),
                    event,
                });
            }
        })
    }

    /// Tells the window that klant `profile_id`'s backup could not start (the app's own codes,
    /// such as a locked keyring, go as `config` with their message).
    fn tell_not_started(&self, profile_id: &str, e: AppError) {
        self.window_sink(profile_id, Uuid::new_v4())(AppJobEvent::failed(&e.into_core()))
    }

    /// Whether plans are paused as a whole ("Pause plans").
    pub fn plans_paused(&self) -> bool {
        self.shared.profiles.settings().plans_paused()
    }

    /// "Pause plans": no plan starts a backup until "Resume plans" (backups already running
    /// go on).
    pub fn pause_plans(&self) -> AppResult<()> {
        self.shared.profiles.pause_plans()?;
        self.changed.notify_one();
        self.shared.office_changed.notify_one();
        Ok(())
    }

    /// "Resume plans": the plans "Pause plans" paused run again (a plan whose time passed
    /// meanwhile runs once, spread out like every catch-up).
    pub fn resume_plans(&self) -> AppResult<()> {
        self.shared.profiles.resume_plans()?;
        self.changed.notify_one();
        self.shared.office_changed.notify_one();
        Ok(())
    }
}

impl Plans {
    /// Settings → at once as saved now (1 to [`MAX_AT_ONCE`]): the window may have changed it
    /// in its process while this one (`kluis-tray`) runs the plans, so it is read at each
    /// klant's start, not once.
    pub fn at_once_now(&self) -> usize {
        (self.fixed_at_once).unwrap_or_else(|| {
            let saved = self.shared.profiles.settings().unattended_at_once;
            saved.clamp(1, MAX_AT_ONCE) as usize
        })
    }

    /// The limits for [`Plans::at_once_now`]: the same as before, or new ones when it changed.
    pub(super) fn limits(&self) -> BatchLimits {
        let at_once = self.at_once_now();
        let mut limits = self.limits.lock().unwrap();
        match &*limits {
            Some(same) if same.at_once() == at_once => same.clone(),
            _ => limits.insert(BatchLimits::new(at_once)).clone(),
        }
    }
}
