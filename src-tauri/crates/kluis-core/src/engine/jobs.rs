//! [`Engine`]: runs backup jobs as tasks — a new one or one an earlier process left — and
//! keeps a handle on each while it runs, so that any front end can cancel it (the user's
//! "no": it ends as cancelled), stop it (the machine's "not now": a job whose callback can
//! still be collected stays journalled for the next resume) or stop them all at shutdown.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{oneshot, Notify};
use tokio::task::JoinHandle;
use uuid::Uuid;

use super::retry::{self, Retry};
use super::{ServiceConnection, Transports};
use crate::callback::CallbackTransport;
use crate::download::{DownloadTurns, Saved};
use crate::error::{Error, Result};
use crate::history::History;
use crate::job::{BackupJob, BackupRequest, JobEvent};
use crate::journal::UnfinishedJob;

/// Receives a job's events (stages and download progress) while it runs.
pub type EventSink = Arc<dyn Fn(JobEvent) + Send + Sync>;

/// What a job does: a new backup, or finishing one an earlier process journalled.
pub enum Work {
    New(BackupRequest),
    Resume(Box<UnfinishedJob>),
}

impl Work {
    pub fn id(&self) -> Uuid {
        match self {
            Work::New(request) => request.id,
            Work::Resume(job) => job.id(),
        }
    }
}

/// Everything a job runs on.
pub struct Launch {
    pub work: Work,
    pub connection: Arc<ServiceConnection>,
    pub transport: Arc<dyn CallbackTransport>,
    pub events: EventSink,
    /// A cancel signal the caller already holds (a cancel before the start counts too);
    /// the engine makes one when `None`.
    pub cancel: Option<Arc<Notify>>,
    /// Whether a new backup that fails for a passing reason is tried again (see
    /// [`super::retry`]); a resumed one is not.
    pub retry: Retry,
    /// The batch's download turns (none: the job downloads as soon as it can; see
    /// [`crate::download::turns`]).
    pub download_turns: Option<DownloadTurns>,
}

/// A started job: its id (what [`Engine::cancel`] and [`Engine::stop`] take), and its
/// outcome when it ends.
pub struct JobHandle {
    pub id: Uuid,
    /// The id of the try running now (the history's): `id` until a retry starts another.
    current_try: Arc<Mutex<Uuid>>,
    outcome: oneshot::Receiver<Result<Saved>>,
}

impl JobHandle {
    /// Waits for the job to end. A job stopped by [`Engine::stop`] or [`Engine::shutdown`]
    /// ends as [`Error::Interrupted`].
    pub async fn finished(self) -> Result<Saved> {
        self.finished_try().await.1
    }

    /// [`JobHandle::finished`], with the id of the last try (its entry in the history).
    pub async fn finished_try(self) -> (Uuid, Result<Saved>) {
        let ended = self.outcome.await.unwrap_or(Err(Error::Interrupted));
        let last_try = *self.current_try.lock().unwrap();
        (last_try, ended)
    }
}

struct Running {
    cancel: Arc<Notify>,
    task: JoinHandle<()>,
}

/// The jobs of one history, whoever drives them.
pub struct Engine {
    history: Arc<History>,
    transports: Transports,
    running: Arc<Mutex<HashMap<Uuid, Running>>>,
}

impl Engine {
    pub fn new(history: Arc<History>) -> Self {
        Self {
            history,
            transports: Transports::default(),
            running: Arc::default(),
        }
    }

    pub fn history(&self) -> &Arc<History> {
        &self.history
    }

    /// The transports built for this engine's jobs.
    pub fn transports(&self) -> &Transports {
        &self.transports
    }

    /// Starts a job in a task; its events go to `launch.events` as it runs.
    pub fn start(&self, launch: Launch) -> JobHandle {
        let Launch {
            work,
            connection,
            transport,
            events,
            cancel,
            retry,
            download_turns,
        } = launch;
        let id = work.id();
        let cancel = cancel.unwrap_or_default();
        let current_try = Arc::new(Mutex::new(id));
        let (report, outcome) = oneshot::channel();
        let history = self.history.clone();
        let running = self.running.clone();
        // Registered before the task can end and unregister itself: the lock is held across.
        let mut slots = self.running.lock().unwrap();
        let task = tokio::spawn({
            let cancel = cancel.clone();
            let current_try = current_try.clone();
            async move {
                let job = BackupJob {
                    session: &connection.session,
                    transport: &*transport,
                    downloader: &connection.downloader,
                    history: &history,
                    cancel: Some(&cancel),
                    download_turns,
                };
                let mut forward = |event: JobEvent| events(event);
                let ended = match &work {
                    Work::New(request) => {
                        let now_trying = |next| *current_try.lock().unwrap() = next;
                        retry::run(&job, request, retry, &cancel, now_trying, &mut forward).await
                    }
                    Work::Resume(unfinished) => job.resume(unfinished, &mut forward).await,
                };
                running.lock().unwrap().remove(&id);
                let _ = report.send(ended);
            }
        });
        slots.insert(id, Running { cancel, task });
        JobHandle {
            id,
            current_try,
            outcome,
        }
    }

    /// Whether job `id` runs in this engine now.
    pub fn is_running(&self, id: Uuid) -> bool {
        self.running.lock().unwrap().contains_key(&id)
    }

    /// The user's cancel: the job ends as cancelled by itself (recorded, its part file
    /// removed, its relay inbox deleted). `false` when it does not run here.
    pub fn cancel(&self, id: Uuid) -> bool {
        match self.running.lock().unwrap().get(&id) {
            Some(job) => {
                job.cancel.notify_one();
                true
            }
            None => false,
        }
    }

    /// Stops job `id` where it is and waits until it has let go of its files: one whose
    /// callback can still be collected stays journalled, the others end as cancelled.
    pub async fn stop(&self, id: Uuid) {
        let job = self.running.lock().unwrap().remove(&id);
        if let Some(job) = job {
            job.task.abort();
            let _ = job.task.await;
        }
    }

    /// Stops every running job, as [`Engine::stop`] does each.
    pub async fn shutdown(&self) {
        let jobs: Vec<Running> = self
            .running
            .lock()
            .unwrap()
            .drain()
            .map(|(_, j)| j)
            .collect();
        for job in &jobs {
            job.task.abort();
        }
        for job in jobs {
            let _ = job.task.await;
        }
    }
}

/// Dropping the engine stops its jobs (without waiting; [`Engine::shutdown`] waits).
impl Drop for Engine {
    fn drop(&mut self) {
        if let Ok(running) = self.running.lock() {
            for job in running.values() {
                job.task.abort();
            }
        }
    }
}
