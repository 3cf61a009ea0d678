//! The app's backups nobody watches (its plans and Backup all), through the one path the CLI
//! takes too (`kluis_profiles::unattended`): the klant's turn, its plan looked at again, the
//! job, its rule and monthly verification, its monitor. What is the app's: a slot of the
//! unattended ones (Settings → at once), the klant's folder under the save folder, its
//! connection and callback from the app's settings and keyring, events to the window, the
//! job in the app's registry (so Cancel all reaches it), a failure told on the desktop and
//! what the service allowed learnt.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::encryption::DecryptKey;
use kluis_core::engine::ServiceConnection;
use kluis_core::{CallbackTransport, Destination, Owner};
use kluis_profiles::unattended::{self, AfterSave, AfterSaveOf, Job};
use kluis_profiles::{KlantTurn, Turn, UnattendedHost};
use uuid::Uuid;

use super::catalog_round::InRound;
use super::jobs::JobSlot;
use super::keeping;
use super::plans::Plans;
use crate::error::{AppError, AppResult};
use crate::profiles::Profile;

/// The app's part of a klant's unattended backup.
struct AppHost<'a> {
    plans: &'a Plans,
}

#[async_trait::async_trait]
impl UnattendedHost for AppHost<'_> {
    async fn connect(
        &self,
        profile: &Profile,
    ) -> kluis_core::Result<(Arc<ServiceConnection>, Arc<dyn CallbackTransport>)> {
        let connections = &self.plans.connections;
        let connection =
            (connections.connection(&profile.id).await).map_err(AppError::into_core)?;
        let transport =
            (connections.transport(&profile.id, &connection).await).map_err(AppError::into_core)?;
        Ok((connection, transport))
    }

    fn destination(&self, profile: &Profile) -> kluis_core::Result<Destination> {
        let office = self.plans.shared.save_folder();
        let names = self.plans.shared.profiles.settings().file_names();
        profile.unattended_destination(None, office.as_deref(), &names, &jiff::Zoned::now())
    }

    fn owner(&self) -> Owner {
        Owner::App
    }

    fn callback_name(&self) -> &'static str {
        self.plans.shared.profiles.settings().callback.name()
    }

    fn callback_timeout(&self) -> Duration {
        self.plans.shared.callback_timeout
    }

    fn monitor_ca_pem(&self) -> Option<String> {
        self.plans.shared.env_ca_pem.clone()
    }

    async fn copy_targets(&self) -> Vec<kluis_copies::CopyTarget> {
        self.plans.shared.copy_targets().await
    }

    fn pace(&self) -> Option<Arc<Bandwidth>> {
        Some(self.plans.shared.upload_pace.clone())
    }

    async fn opener(&self, profile: &Profile) -> kluis_core::Result<Option<DecryptKey>> {
        self.plans.shared.opener(profile).await
    }

    async fn catalogs(&self) -> Option<kluis_profiles::unattended::CatalogsAfter> {
        None // (written by the round's last backup: catalog_round.rs)
    }

    fn tell(&self, profile: &Profile, step: AfterSave) {
        keeping::log(profile, step)
    }
}

impl Plans {
    /// Starts profile `id`'s backup as a plan does, once an unattended place is free (held
    /// until the job ends): into its own folder under the save folder, named `<klant>
    /// <YYYY-MM-DD HHmm>` and the download's extension. Fails with `invalid_state` when
    /// "Cancel all" came while it waited for the place.
    pub async fn start_planned(&self, id: &str) -> AppResult<Uuid> {
        let cancels = self.cancels.load(Ordering::SeqCst);
        self.start_unattended(id, false, cancels)
            .await?
            .ok_or_else(|| AppError::InvalidState("The backup was not started.".into()))
    }

    /// Settings → Download speed as the profiles file says now: set in another process (the
    /// window, while `kluis-tray` runs the plans; `kluis`), it holds from this backup on.
    fn follow_bandwidth(&self) {
        let limit = self.shared.profiles.settings().bandwidth;
        if self.connections.bandwidth.limit() != limit {
            let _ = self.connections.bandwidth.set_limit(limit.clone());
            let _ = self.shared.upload_pace.set_limit(limit);
        }
    }

    /// [`Plans::start_planned`], holding the klant's turn until the job ends: a klant
    /// that `kluis run-due` (or anyone) is backing up now is not started twice. With
    /// `only_when_due`, the plan is looked at again under the turn, and `None` says another
    /// process has just done it. `cancels` is [`Plans::cancels`] when it was asked for (by
    /// Backup all, or the scheduler handing out a plan): `Ok(None)` also when "Cancel all" was
    /// clicked since, while the klant waited for a slot.
    pub(super) async fn start_unattended(
        &self,
        id: &str,
        only_when_due: bool,
        cancels: u64,
    ) -> AppResult<Option<Uuid>> {
        // (Work of this process from here: a closing window waits for it, background.rs.)
        let _starting = self.jobs.starting();
        self.follow_bandwidth();
        // In the round from now, while it waits for a slot too (catalog_round.rs); the job's
        // task takes it over, and gives it back at its end.
        let mut in_round = Some(self.shared.catalog_round.begin());
        let started = self
            .start_in_round(id, only_when_due, cancels, &mut in_round)
            .await;
        // Not started: its place is given back — and when backups ended meanwhile, leaving
        // none, their catalogs are written here.
        if in_round.take().is_some_and(|unused| unused.end()) {
            for step in self.shared.write_round_catalogs().await {
                if let AfterSave::CatalogFailed { target, error } = step {
                    tracing::warn!(code = %error.code(), %target, "a recovery catalog could not be written");
                }
            }
        }
        started
    }

    async fn start_in_round(
        &self,
        id: &str,
        only_when_due: bool,
        cancels: u64,
        in_round: &mut Option<InRound>,
    ) -> AppResult<Option<Uuid>> {
        let limits = self.limits();
        let permit = limits.klant_place().await;
        if cancels != self.cancels.load(Ordering::SeqCst) {
            tracing::info!(klant = %id, "not started: Cancel all came while it waited for its turn");
            return Ok(None);
        }
        let profile = self.shared.profiles.get(id)?;
        let office = self.shared.office().await;
        let turn = KlantTurn::take_in(
            &self.shared.history,
            &profile,
            only_when_due,
            office.as_deref(),
        );
        let turn = match turn.await? {
            Turn::Taken(turn) => turn,
            Turn::NotDue => return Ok(None),
            Turn::Skipped(skipped) => {
                tracing::info!(klant = %profile.name, "{skipped}; skipped");
                if let kluis_profiles::Skipped::Held { .. } = skipped {
                    self.held_elsewhere.lock().unwrap().push(id.to_string());
                }
                return Ok(None);
            }
            Turn::Busy => return Err(AppError::InvalidState(
                "A backup of this klant is already running in another Kluis process (Kluis in the background, or a scheduled `kluis run-due`); it was not started twice.".into(),
            )),
        };
        let job_id = Uuid::new_v4();
        let sink = self.window_sink(id, job_id);
        let job = Job {
            id: job_id,
            events: self.jobs.job_events(id, sink.clone()),
            cancel: None,
            retry: self.shared.retry,
            destination: None,
            download_turns: Some(limits.downloads().clone()),
        };
        let handle =
            unattended::start(&self.shared.engine, &AppHost { plans: self }, &profile, job)
                .await
                .map_err(AppError::Core)?;
        // The slot is filled before the task can settle it (it is spawned after).
        self.jobs
            .slots
            .lock()
            .unwrap()
            .insert(job_id, JobSlot::Running);
        // A "Cancel all" between the slot and here did not see this job: it cancels itself.
        // (Cancel all counts itself before it lists the running jobs; this job is listed
        // before it looks, so one of the two sees the other.)
        if cancels != self.cancels.load(Ordering::SeqCst) {
            self.shared.engine.cancel(job_id);
        }
        // The catalogs once, by the last unattended backup to end (catalog_round.rs).
        let in_round = in_round.take().expect("in the round until started");
        let after = AfterSaveOf {
            history: self.shared.history.clone(),
            targets: self.shared.copy_targets().await,
            pace: Some(self.shared.upload_pace.clone()),
            opener: self.shared.opener(&profile).await,
            catalogs: None,
        };
        let shared = self.shared.clone();
        let jobs = self.jobs.clone();
        let tell_failure = self.alerts.failure_teller(profile.name.clone());
        let tell_after_save = self.alerts.after_save_teller();
        let ca_pem = self.shared.env_ca_pem.clone();
        tokio::spawn(async move {
            let log = |profile: &Profile, step: AfterSave| {
                tell_after_save(&profile.name, &step);
                keeping::log(profile, step)
            };
            let ended = unattended::finish(after, &profile, turn, handle, &log).await;
            // Before the window hears the end: the last "saved" of a round means its
            // catalogs are written.
            if in_round.end() {
                for step in shared.write_round_catalogs().await {
                    log(&profile, step);
                }
                // The round's last backup: the office hears this PC's klanten once for all.
                shared.tell_office().await;
            }
            tell_failure(&ended.outcome);
            let ping =
                unattended::ping_monitor(&profile, ca_pem.as_deref(), ended.outcome.as_ref());
            let ids = (job_id, ended.last_try);
            jobs.settle(ids, &profile.id, ended.outcome, None, &sink);
            // Only once the window has heard how it ended: the next unattended job (of this
            // klant too) may start.
            drop(permit);
            // On its own task: a slow monitor never holds up the job's end.
            tokio::spawn(async move {
                if let Err(e) = ping.await {
                    tracing::warn!(code = %e.code(), "the klant's monitor could not be pinged");
                }
            });
        });
        Ok(Some(job_id))
    }
}
