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

/// What the app does around a job someone watches: where its events go, and the staging
/// folder its verified file waits in (none: it is saved straight away). (A backup nobody
/// watches goes through `kluis_profiles::unattended`, see `plans`.)
pub(super) struct Follow {
    pub sink: EventSink,
    pub staging: Option<PathBuf>,
}

/// What settles a job's slot when it ends: the app's registry, the history, and what the
/// service was seen to allow.
pub(super) struct Settle {
    jobs: Arc<Mutex<HashMap<Uuid, JobSlot>>>,
    history: Arc<History>,
    learn: Box<LearnAccess>,
}

/// Learns what klant `id`'s key may do from an outcome on some endpoints (see
/// `access_learner`).
type LearnAccess = dyn Fn(&str, Result<(), &Error>, &[Endpoint]) + Send + Sync;

impl Settle {
    /// Job `job_id` of klant `profile_id` ended (its last try `last_try`) with `outcome`: a
    /// verified file in the staging folder waits for the save dialog; a saved or failed job
    /// leaves the registry and is told to `sink`; what the service allowed or refused is
    /// learnt. A job stopped at shutdown is left as it is: it is finished at the next start.
    pub fn job(
        &self,
        (job_id, last_try): (Uuid, Uuid),
        profile_id: &str,
        outcome: kluis_core::Result<Saved>,
        staging: Option<PathBuf>,
        sink: &EventSink,
    ) {
        if outcome.is_ok() {
            // The service took the POST and answered the webhook: both are allowed.
            (self.learn)(
                profile_id,
                Ok(()),
                &[Endpoint::BackupOwner, Endpoint::Webhook],
            );
        }
        let mut slots = self.jobs.lock().unwrap();
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
                let entry = self.history.get(last_try).ok().flatten();
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
                (self.learn)(profile_id, Err(&error), &[endpoint]);
                sink(AppJobEvent::failed(&error));
            }
        }
    }
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
        let handle = self.engine.start(Launch {
            work,
            connection,
            transport,
            events: self.job_events(profile_id, follow.sink.clone()),
            cancel: None,
            retry,
        });
        self.follow(handle, profile_id, follow);
    }

    /// A job's events for `sink`, learning on the way what the service allows: once it took
    /// the POST, the key may start backups — known then, not only when the job ends (learnt
    /// before the window hears of the stage).
    pub(super) fn job_events(&self, profile_id: &str, sink: EventSink) -> JobEventSink {
        let learn = self.access_learner();
        let profile = profile_id.to_string();
        Arc::new(move |event| {
            if event
                == (kluis_core::JobEvent::Stage {
                    stage: Stage::Accepted,
                })
            {
                learn(&profile, Ok(()), &[Endpoint::BackupOwner]);
            }
            sink(event.into())
        })
    }

    /// Keeps a running job's slot and, when it ends, settles it (see [`Settle::job`]); a
    /// backup saved in its place is followed by the klant's rule and monthly verification.
    pub(super) fn follow(&self, handle: JobHandle, profile_id: &str, follow: Follow) {
        let Follow { sink, staging } = follow;
        let job_id = handle.id;
        // The slot is filled before the follower can settle it (it is spawned after).
        self.jobs.lock().unwrap().insert(job_id, JobSlot::Running);
        let (history, profiles) = (self.history.clone(), self.profiles.clone());
        let profile_id = profile_id.to_string();
        let settle = self.settle();
        tokio::spawn(async move {
            // The last try's entry in the history says how the job ended (a retried job's
            // earlier tries each failed for a passing reason).
            let (last_try, outcome) = handle.finished_try().await;
            if outcome.is_ok() && staging.is_none() {
                // Before the window hears "saved", so it reads the removals too.
                keeping::after_save(history, &profiles, &profile_id).await;
            }
            settle.job((job_id, last_try), &profile_id, outcome, staging, &sink);
        });
    }

    /// What settles the app's jobs as they end.
    pub(super) fn settle(&self) -> Settle {
        Settle {
            jobs: self.jobs.clone(),
            history: self.history.clone(),
            learn: Box::new(self.access_learner()),
        }
    }
}
