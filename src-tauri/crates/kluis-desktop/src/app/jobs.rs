//! The app's registry of jobs: each job's slot — running in kluis-core's engine, or staged
//! (verified in the staging folder) and waiting for the save dialog — and the follower that
//! settles a slot when its job ends.

use super::*;

/// The app's view of a job: the engine runs it, then the app keeps what waits for the user.
pub(super) enum JobSlot {
    /// Runs in the engine.
    Running,
    /// Verified in the staging folder; waiting for a save dialog's answer.
    Staged { saved: Saved, staging: PathBuf },
}

/// What the app does around a job: where its events go, the staging folder its verified file
/// waits in (none: it is saved straight away), and the unattended slot and the klant's turn
/// (see `kluis_profiles::turn`) it holds until it ends.
pub(super) struct Follow {
    pub sink: EventSink,
    pub staging: Option<PathBuf>,
    pub permit: Option<tokio::sync::OwnedSemaphorePermit>,
    pub turn: Option<kluis_core::claims::Claim>,
    /// The klant's outside monitor, pinged when an unattended job ends.
    pub monitor: Option<kluis_profiles::Monitor>,
    /// Tells an unattended job's failure on the desktop (see `alerts`).
    pub tell_failure: Option<alerts::TellFailure>,
    /// The klant's retention rule and monthly verification, applied once its backup is saved
    /// in place (a staged one: once the user has chosen where, see `backups`).
    pub after_save: keeping::AfterSave,
}

impl DesktopApp {
    /// The jobs running in the engine now (any kind; not those staged for a save dialog).
    pub(super) fn running_job_ids(&self) -> Vec<Uuid> {
        (self.jobs.lock().unwrap().iter())
            .filter(|(_, slot)| matches!(slot, JobSlot::Running))
            .map(|(id, _)| *id)
            .collect()
    }

    /// Starts a job in the engine, tried again as `retry` says; its events and outcome go
    /// to `follow.sink`.
    pub(super) fn run_job(
        &self,
        work: Work,
        retry: Retry,
        profile_id: &str,
        connection: Arc<ServiceConnection>,
        transport: Arc<dyn CallbackTransport>,
        follow: Follow,
    ) {
        let forward = follow.sink.clone();
        let learn = self.access_learner();
        let profile = profile_id.to_string();
        let handle = self.engine.start(Launch {
            work,
            connection,
            transport,
            events: Arc::new(move |event| {
                // The service took the POST: the key may start backups — known now, not only
                // when the job ends (learnt before the window hears of the stage).
                if event
                    == (kluis_core::JobEvent::Stage {
                        stage: Stage::Accepted,
                    })
                {
                    learn(&profile, Ok(()), &[Endpoint::BackupOwner]);
                }
                forward(event.into())
            }),
            cancel: None,
            retry,
        });
        self.follow(handle, profile_id, follow);
    }

    /// Keeps a running job's slot and, when it ends, settles it: a verified file in the
    /// staging folder waits for the save dialog; a failure is reported; what the service allowed or refused is learnt.
    pub(super) fn follow(&self, handle: JobHandle, profile_id: &str, follow: Follow) {
        let Follow {
            sink,
            staging,
            permit,
            turn,
            monitor,
            tell_failure,
            after_save,
        } = follow;
        let job_id = handle.id;
        // The slot is filled before the follower can settle it (it is spawned after).
        self.jobs.lock().unwrap().insert(job_id, JobSlot::Running);
        let history = self.history.clone();
        let jobs = self.jobs.clone();
        let profile_id = profile_id.to_string();
        let learn = self.access_learner();
        tokio::spawn(async move {
            // The last try's entry in the history says how the job ended (a retried job's
            // earlier tries each failed for a passing reason).
            let (last_try, outcome) = handle.finished_try().await;
            let saved_in_place = outcome.is_ok() && staging.is_none();
            if saved_in_place {
                // Before the turn is given back: no other Kluis saves or prunes the klant
                // meanwhile. (Before the window hears "saved", so it reads the removals too.)
                keeping::apply_rule(history.clone(), profile_id.clone(), &after_save).await;
            }
            drop((permit, turn)); // the next unattended job (of this klant too) may start
            if saved_in_place {
                keeping::verify_monthly(history.clone(), profile_id.clone(), &after_save).await;
            }
            if let Some(tell) = tell_failure {
                tell(&outcome);
            }
            if let (Some(monitor), Some(ran)) = (monitor, kluis_profiles::Ran::of(outcome.as_ref()))
            {
                // On its own task: a slow monitor never holds up the job's end.
                tokio::spawn(async move {
                    if let Err(e) = monitor.ping(&ran).await {
                        tracing::warn!(code = %e.code(), "the klant's monitor could not be pinged");
                    }
                });
            }
            if outcome.is_ok() {
                // The service took the POST and answered the webhook: both are allowed.
                learn(
                    &profile_id,
                    Ok(()),
                    &[Endpoint::BackupOwner, Endpoint::Webhook],
                );
            }
            let mut slots = jobs.lock().unwrap();
            match outcome {
                Ok(saved) => match staging {
                    Some(staging) => {
                        let event = AppJobEvent::staged(&saved);
                        slots.insert(job_id, JobSlot::Staged { saved, staging });
                        drop(slots);
                        sink(event);
                    }
                    None => {
                        slots.remove(&job_id);
                        drop(slots);
                        sink(AppJobEvent::saved(&saved));
                    }
                },
                Err(error) => {
                    slots.remove(&job_id);
                    drop(slots);
                    let entry = history.get(last_try).ok().flatten();
                    let ended = entry.as_ref().is_some_and(|e| e.reached() == Stage::Failed);
                    if matches!(error, Error::Interrupted) && !ended {
                        return; // stopped at shutdown: finished at the next start
                    }
                    // Only a job that has ended leaves its folder; one that failed because
                    // another process holds it keeps it for that process.
                    if let (Some(staging), true) = (staging, ended) {
                        crate::staging::remove_parts(&staging);
                    }
                    let endpoint = match entry.and_then(|e| e.failed_stage) {
                        Some(Stage::CallbackReceived) => Endpoint::Webhook,
                        _ => Endpoint::BackupOwner,
                    };
                    learn(&profile_id, Err(&error), &[endpoint]);
                    sink(AppJobEvent::failed(&error));
                }
            }
        });
    }
}
