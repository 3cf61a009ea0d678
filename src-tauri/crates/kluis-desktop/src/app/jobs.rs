//! [`JobRegistry`]: the app's jobs — each job's slot (running in kluis-core's engine, or
//! staged: verified in the staging folder and waiting for the save dialog) — and the
//! follower that settles a slot when its job ends. Backups someone started, resumed ones and
//! unattended ones are all registered here, so Cancel all and closing the window see them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use kluis_core::engine::{
    EventSink as JobEventSink, JobHandle, Launch, Retry, ServiceConnection, Work,
};
use kluis_core::{CallbackTransport, Error, Saved, Stage};
use uuid::Uuid;

use super::access::{access_learner, LearnAccess};
use super::keeping;
use super::shared::Shared;
use crate::events::{AppJobEvent, EventSink};
use crate::permissions::Endpoint;

/// The app's view of a job: the engine runs it, then the app keeps what waits for the user.
pub(crate) enum JobSlot {
    /// Runs in the engine.
    Running,
    /// Verified in the staging folder; waiting for a save dialog's answer.
    Staged { saved: Saved, staging: PathBuf },
}

/// What the app does around a job someone watches: where its events go, and the staging
/// folder its verified file waits in (none: it is saved straight away). (A backup nobody
/// watches goes through `kluis_profiles::unattended`, see `plans`.)
pub(crate) struct Follow {
    pub sink: EventSink,
    pub staging: Option<PathBuf>,
}

/// See the module's text.
pub(crate) struct JobRegistry {
    shared: Arc<Shared>,
    pub slots: Mutex<HashMap<Uuid, JobSlot>>,
    /// Told each time a job's slot is settled ([`Background::until_no_backup_runs`]).
    ///
    /// [`Background::until_no_backup_runs`]: super::Background::until_no_backup_runs
    pub settled: tokio::sync::Notify,
    /// Backups being started (a klant's turn, its sign-in, its POST, a slot waited for) and
    /// Backup all's batches under way: work of this process that holds no slot yet.
    starting: std::sync::atomic::AtomicUsize,
    /// What the service was seen to allow, learnt as jobs go.
    learn: Arc<LearnAccess>,
}

impl JobRegistry {
    pub fn new(shared: Arc<Shared>) -> JobRegistry {
        JobRegistry {
            learn: access_learner(shared.profiles.clone()),
            shared,
            slots: Mutex::default(),
            settled: tokio::sync::Notify::new(),
            starting: Default::default(),
        }
    }

    /// The jobs running in the engine now (any kind; not those staged for a save dialog).
    pub fn running_job_ids(&self) -> Vec<Uuid> {
        (self.slots.lock().unwrap().iter())
            .filter(|(_, slot)| matches!(slot, JobSlot::Running))
            .map(|(id, _)| *id)
            .collect()
    }

    /// Whether this process has backups under way: running, or being started (see `starting`).
    pub fn busy(&self) -> bool {
        self.starting.load(std::sync::atomic::Ordering::SeqCst) > 0
            || !self.running_job_ids().is_empty()
    }

    /// Counts as work being started until dropped (see `starting`).
    pub fn starting(&self) -> Starting<'_> {
        self.starting
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Starting(self)
    }

    /// Starts a job in the engine, tried again as `retry` says; its events and outcome go
    /// to `follow.sink`.
    pub fn run_job(
        self: &Arc<Self>,
        work: Work,
        retry: Retry,
        profile_id: &str,
        connection: Arc<ServiceConnection>,
        transport: Arc<dyn CallbackTransport>,
        follow: Follow,
    ) {
        let handle = self.shared.engine.start(Launch {
            work,
            connection,
            transport,
            events: self.job_events(profile_id, follow.sink.clone()),
            cancel: None,
            retry,
            download_turns: None,
        });
        self.follow(handle, profile_id, follow);
    }

    /// A job's events for `sink`, learning on the way what the service allows: once it took
    /// the POST, the key may start backups — known then, not only when the job ends (learnt
    /// before the window hears of the stage).
    pub fn job_events(&self, profile_id: &str, sink: EventSink) -> JobEventSink {
        let learn = self.learn.clone();
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

    /// Keeps a running job's slot and, when it ends, settles it (see [`JobRegistry::settle`]);
    /// a backup saved in its place is followed by the klant's rule and monthly verification.
    pub fn follow(self: &Arc<Self>, handle: JobHandle, profile_id: &str, follow: Follow) {
        let Follow { sink, staging } = follow;
        let job_id = handle.id;
        // The slot is filled before the follower can settle it (it is spawned after).
        self.slots.lock().unwrap().insert(job_id, JobSlot::Running);
        let shared = self.shared.clone();
        let profile_id = profile_id.to_string();
        let registry = self.clone();
        tokio::spawn(async move {
            // The last try's entry in the history says how the job ended (a retried job's
            // earlier tries each failed for a passing reason).
            let (last_try, outcome) = handle.finished_try().await;
            if outcome.is_ok() && staging.is_none() {
                // Before the window hears "saved", so it reads the removals too.
                keeping::after_save(&shared, &profile_id, Some(&sink)).await;
            }
            registry.settle((job_id, last_try), &profile_id, outcome, staging, &sink);
        });
    }

    /// Job `job_id` of klant `profile_id` ended (its last try `last_try`) with `outcome`: a
    /// verified file in the staging folder waits for the save dialog; a saved or failed job
    /// leaves the registry and is told to `sink`; what the service allowed or refused is
    /// learnt. A job stopped at shutdown is left as it is: it is finished at the next start.
    pub fn settle(
        &self,
        (job_id, last_try): (Uuid, Uuid),
        profile_id: &str,
        outcome: kluis_core::Result<Saved>,
        staging: Option<PathBuf>,
        sink: &EventSink,
    ) {
        self.settle_slot((job_id, last_try), profile_id, outcome, staging, sink);
        self.settled.notify_waiters();
    }

    fn settle_slot(
        &self,
        (job_id, last_try): (Uuid, Uuid),
        profile_id: &str,
        outcome: kluis_core::Result<Saved>,
        staging: Option<PathBuf>,
        sink: &EventSink,
    ) {
        self.shared.office_changed.notify_one();
        if outcome.is_ok() {
            // The service took the POST and answered the webhook: both are allowed.
            (self.learn)(
                profile_id,
                Ok(()),
                &[Endpoint::BackupOwner, Endpoint::Webhook],
            );
        }
        let mut slots = self.slots.lock().unwrap();
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
                let entry = self.shared.history.get(last_try).ok().flatten();
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

/// A backup (or a batch) being started: see [`JobRegistry::starting`].
pub(crate) struct Starting<'a>(&'a JobRegistry);

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        (self.0.starting).fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.0.settled.notify_waiters();
    }
}
