//! The backup job: an explicit state machine
//! `requested → accepted → callback_received → result_fetched → downloading → saved`, any of
//! which may end in `failed {stage, reason}`. Every transition is written to the history
//! before the job moves on, and reported to the caller (CLI progress bar, app UI).

use std::time::Duration;

use serde::Serialize;
use uuid::Uuid;

use crate::callback::{CallbackTransport, Registration};
use crate::download::{Destination, Downloader, Progress, Saved};
use crate::error::{Error, Result};
use crate::history::History;
use crate::session::Session;

/// Where a job is.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Recorded; the callback receiver is ready and the POST is being sent.
    Requested,
    /// The service answered 202: it is making the backup.
    Accepted,
    /// A callback with an id arrived.
    CallbackReceived,
    /// `GET /webhook` gave the download link.
    ResultFetched,
    Downloading,
    Saved,
    Failed,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Requested => "requested",
            Stage::Accepted => "accepted",
            Stage::CallbackReceived => "callback_received",
            Stage::ResultFetched => "result_fetched",
            Stage::Downloading => "downloading",
            Stage::Saved => "saved",
            Stage::Failed => "failed",
        }
    }
}

/// What a running job tells its caller.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobEvent {
    Stage { stage: Stage },
    Progress(Progress),
}

/// What to back up and where to.
#[derive(Debug, Clone)]
pub struct BackupRequest {
    /// The job's id, chosen by the caller so it can refer to the job while it runs.
    pub id: Uuid,
    /// Profile name, for the history.
    pub profile: String,
    pub destination: Destination,
    /// Longest wait for the service's callback after the 202.
    pub callback_timeout: Duration,
}

/// The parts a job runs on.
pub struct BackupJob<'a> {
    pub session: &'a Session,
    pub transport: &'a dyn CallbackTransport,
    pub downloader: &'a Downloader,
    pub history: &'a History,
}

/// Marks the job failed if it ends without reaching `saved` or `failed` (the future was
/// dropped: the user cancelled or the program is stopping), so no row stays "running".
struct Unfinished<'a> {
    history: &'a History,
    id: Uuid,
    stage: Stage,
    done: bool,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.history.failed(self.id, self.stage, &Error::Cancelled);
        }
    }
}

impl BackupJob<'_> {
    /// Runs one backup to the end. `events` sees every stage and the download's progress.
    pub async fn run(
        &self,
        request: &BackupRequest,
        events: &mut (dyn FnMut(JobEvent) + Send),
    ) -> Result<Saved> {
        let id = request.id;
        self.history
            .start(id, &request.profile, self.transport.name())?;
        let mut tracker = Unfinished {
            history: self.history,
            id,
            stage: Stage::Requested,
            done: false,
        };
        events(JobEvent::Stage {
            stage: Stage::Requested,
        });
        let outcome = self.steps(id, request, &mut tracker, events).await;
        tracker.done = true;
        match &outcome {
            Ok(saved) => self.history.saved(id, saved)?,
            Err(error) => {
                tracing::warn!(
                    code = error.code(),
                    stage = tracker.stage.as_str(),
                    "backup failed"
                );
                self.history.failed(id, tracker.stage, error)?;
                events(JobEvent::Stage {
                    stage: Stage::Failed,
                });
            }
        }
        if outcome.is_ok() {
            events(JobEvent::Stage {
                stage: Stage::Saved,
            });
        }
        outcome
    }

    async fn steps(
        &self,
        id: Uuid,
        request: &BackupRequest,
        tracker: &mut Unfinished<'_>,
        events: &mut (dyn FnMut(JobEvent) + Send),
    ) -> Result<Saved> {
        let enter = |tracker: &mut Unfinished<'_>,
                     stage: Stage,
                     events: &mut (dyn FnMut(JobEvent) + Send)|
         -> Result<()> {
            self.history.transition(id, stage)?;
            tracker.stage = stage;
            events(JobEvent::Stage { stage });
            Ok(())
        };

        // Listening starts before the POST, so a callback that beats the 202 is kept.
        let Registration {
            webhook_url,
            mut ids,
            guard: _guard,
        } = self.transport.prepare(id).await?;
        self.session.backup_owner(&webhook_url).await?;
        enter(tracker, Stage::Accepted, events)?;

        let deadline = tokio::time::Instant::now() + request.callback_timeout;
        let payload = loop {
            let id = match tokio::time::timeout_at(deadline, ids.recv()).await {
                Ok(Some(id)) => id,
                Ok(None) => return Err(Error::CallbackTimeout("The callback receiver stopped before the service called back. Try the backup again.".into())),
                Err(_) => {
                    return Err(Error::CallbackTimeout(format!(
                        "The service did not report the backup as finished within {}. It may still be working: try again later, or allow more time (--timeout).",
                        describe(request.callback_timeout)
                    )))
                }
            };
            if tracker.stage != Stage::CallbackReceived {
                enter(tracker, Stage::CallbackReceived, events)?;
            }
            // The id is only a hint: an id the service does not know is ignored.
            match self.session.webhook(&id).await? {
                Some(payload) => break payload,
                None => {
                    tracing::warn!(callback_id = %id, "the service does not know this callback id; still waiting")
                }
            }
        };
        enter(tracker, Stage::ResultFetched, events)?;

        enter(tracker, Stage::Downloading, events)?;
        let mut on_progress = |p: Progress| events(JobEvent::Progress(p));
        self.downloader
            .download(&payload.url, &request.destination, &mut on_progress)
            .await
    }
}

fn describe(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 120 {
        format!("{} minutes", secs / 60)
    } else {
        format!("{secs} seconds")
    }
}
