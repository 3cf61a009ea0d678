//! The backup job: an explicit state machine
//! `requested → accepted → callback_received → result_fetched → downloading → saved`, any of
//! which may end in `failed {stage, reason}`. Every transition is written to the history
//! before the job moves on, and reported to the caller (CLI progress bar, app UI).
//!
//! [`BackupJob::run`] journals the job (see [`crate::journal`]) before the POST. If its future
//! is dropped — the program stops — a job whose callback can still be collected stays
//! unfinished in its stage, and [`BackupJob::resume`] in a later process takes it from there;
//! one whose callback URL died with the process ends as failed (`cancelled`). A user's cancel
//! is a transition of its own: [`BackupJob::cancel`] is notified, and the job ends as failed
//! (`cancelled`) through the same path as any failure — recorded, its part file removed, its
//! callback's cleanup run (a relay inbox deleted). A job of an earlier process that nobody runs
//! is cancelled with [`History::abandon`].

use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use serde::Serialize;
use uuid::Uuid;

use crate::callback::{CallbackId, CallbackTransport, Cleanup, Registration};
use crate::client::WebhookPayload;
use crate::clock::now_ms;
use crate::download::room::check_room;
use crate::download::{Destination, DownloadTurns, Downloader, Progress, Saved};
use crate::error::{Error, Result};
use crate::history::History;
use crate::journal::{Journal, Owner, UnfinishedJob};
use crate::klant_key::KlantKey;
use crate::session::Session;
pub use crate::stage::Stage;

/// Least time a resumed job still waits for its callback, even if its deadline passed while
/// Kluis was not running: the callback may have reached the relay in time.
pub const RESUME_GRACE: Duration = Duration::from_secs(30);

/// What a running job tells its caller.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobEvent {
    Stage {
        stage: Stage,
    },
    Progress(Progress),
    /// While the job waits for its callback: the service stopped answering (`false`) or
    /// answers again (`true`). Sent on a change only; a job starts out answered.
    Service {
        answering: bool,
    },
    /// The try failed for a passing reason (`code`, `message`); the job tries again in
    /// `in_secs` (see [`crate::engine::Retry`]), and Cancel still ends it meanwhile.
    Retrying {
        code: crate::Code,
        message: String,
        #[cfg_attr(feature = "ts", ts(type = "number"))]
        in_secs: u64,
    },
}

/// What to back up and where to.
#[derive(Debug, Clone)]
pub struct BackupRequest {
    /// The job's id, chosen by the caller so it can refer to the job while it runs.
    pub id: Uuid,
    /// Whose backup it is: the history records it under this key.
    pub profile: KlantKey,
    /// The program starting the job (journalled: it finishes the job after a restart).
    pub owner: Owner,
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
    /// When notified, the job ends as cancelled (a permit given before it waits counts too).
    pub cancel: Option<&'a tokio::sync::Notify>,
    /// The batch's download turns this job takes one of once the file's address is in hand
    /// (none: it downloads at once; see [`crate::download::turns`]).
    pub download_turns: Option<DownloadTurns>,
}

type Events<'e> = &'e mut (dyn FnMut(JobEvent) + Send);

/// The job while it runs: its stage, and what happens if it ends without reaching `saved` or
/// `failed` (its future was dropped: the program is stopping, or its task was aborted).
struct Tracker<'a> {
    history: &'a History,
    id: Uuid,
    stage: Stage,
    /// Journalled with a callback that another process can collect.
    resumable: bool,
    done: bool,
}

impl Drop for Tracker<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if self.resumable {
            tracing::info!(
                stage = self.stage.as_str(),
                "backup interrupted; `kluis resume` or the app finishes it"
            );
        } else {
            // (A no-op when the user's cancel already ended it.)
            let _ = self.history.abandon(self.id, &Error::Cancelled);
        }
    }
}

impl Tracker<'_> {
    fn enter(&mut self, stage: Stage, events: Events<'_>) -> Result<()> {
        self.history.transition(self.id, stage)?;
        self.stage = stage;
        events(JobEvent::Stage { stage });
        Ok(())
    }
}

impl BackupJob<'_> {
    /// Runs one backup to the end. `events` sees every stage and the download's progress.
    pub async fn run(&self, request: &BackupRequest, events: Events<'_>) -> Result<Saved> {
        let id = request.id;
        self.history
            .start(id, &request.profile, self.transport.name())?;
        let _claim = self.history.claim(id)?;
        let mut tracker = Tracker {
            history: self.history,
            id,
            stage: Stage::Requested,
            resumable: false,
            done: false,
        };
        events(JobEvent::Stage {
            stage: Stage::Requested,
        });
        let mut cleanup = None;
        let outcome = tokio::select! {
            biased;
            _ = self.cancelled() => Err(Error::Cancelled),
            outcome = self.request(request, &mut tracker, &mut cleanup, events) => outcome,
        };
        self.finish(tracker, outcome, cleanup, events).await
    }

    /// Resolves when the user cancels (never, without a cancel signal).
    async fn cancelled(&self) {
        match self.cancel {
            Some(cancel) => cancel.notified().await,
            None => std::future::pending().await,
        }
    }

    async fn request(
        &self,
        request: &BackupRequest,
        tracker: &mut Tracker<'_>,
        cleanup: &mut Option<Cleanup>,
        events: Events<'_>,
    ) -> Result<Saved> {
        // A backup that cannot be saved is not asked for: the service's work would be wasted
        // and the failure would come only after the wait (download/room.rs).
        let folder = request.destination.folder().to_path_buf();
        let min_free = self.downloader.min_free_bytes();
        tokio::task::spawn_blocking(move || check_room(&folder, min_free))
            .await
            .map_err(|e| Error::Io(format!("The backup's folder could not be checked ({e}).")))??;
        // Listening starts before the POST, so a callback that beats the 202 is kept.
        let mut registration = self.transport.prepare(request.id).await?;
        *cleanup = registration.cleanup.take();
        let mut journal = Journal {
            owner: Some(request.owner),
            base_url: self.base_url(),
            destination: request.destination.clone(),
            callback_deadline_ms: now_ms().saturating_add(
                i64::try_from(request.callback_timeout.as_millis()).unwrap_or(i64::MAX),
            ),
            reattach: registration.reattach.clone(),
            download: None,
            encryption: self.downloader.encryption().cloned(),
        };
        // Durable before the backup is asked for (a restart resumes from it), its sync to disk
        // done while the batch's other jobs go on (durable.rs).
        (self.history)
            .write_durably(crate::journal::journaling(request.id, &journal))
            .await?;
        tracker.resumable = journal.reattach.is_some();
        self.session.backup_owner(&registration.webhook_url).await?;
        tracker.enter(Stage::Accepted, events)?;
        let deadline = deadline_after(request.callback_timeout);
        self.collect(registration, deadline, &mut journal, tracker, events)
            .await
    }

    /// Finishes a job an earlier process journalled: collects its callback again through
    /// `self.transport` (which must match the journal's), redeems it, continues the download.
    /// Settings that do not fit (another service, relay or listen address) are refused before
    /// anything changes, so the job stays unfinished for a resume with the right ones.
    pub async fn resume(&self, job: &UnfinishedJob, events: Events<'_>) -> Result<Saved> {
        let id = job.id();
        let mut journal = job.journal.clone().ok_or_else(|| {
            Error::Config("This backup stopped before it was sent; it cannot be resumed.".into())
        })?;
        if journal.base_url != self.base_url() {
            return Err(Error::Config(format!(
                "This backup was started against {}; resume it with that service's settings.",
                journal.base_url
            )));
        }
        if let Some(setting) = &journal.encryption {
            if self.downloader.encryption().is_none() {
                return Err(Error::Config(needs_its_encryption(setting)));
            }
        }
        let reattach = journal.reattach.clone().ok_or_else(|| {
            Error::Config("This backup's callback address ended with the program that started it; it cannot be resumed.".into())
        })?;
        let Some(_claim) = self.history.claim(id)? else {
            return Err(Error::Config(
                "This backup is being finished by another Kluis process.".into(),
            ));
        };
        // Re-read after claiming: the process that let go may have just finished it.
        let stage = match self.history.get(id)? {
            Some(entry) => entry.reached(),
            None => return Err(Error::Config("This backup is not in the history.".into())),
        };
        if stage.is_final() {
            return Err(Error::Config("This backup has already ended.".into()));
        }
        let mut registration = self.transport.reattach(&reattach).await?;
        let cleanup = registration.cleanup.take();
        let mut tracker = Tracker {
            history: self.history,
            id,
            stage,
            resumable: true,
            done: false,
        };
        tracing::info!(stage = stage.as_str(), "resuming backup");
        events(JobEvent::Stage { stage });
        let left = journal.callback_deadline_ms.saturating_sub(now_ms()).max(0);
        let deadline = deadline_after(Duration::from_millis(left as u64).max(RESUME_GRACE));
        let outcome = tokio::select! {
            biased;
            _ = self.cancelled() => Err(Error::Cancelled),
            outcome = self.collect(registration, deadline, &mut journal, &mut tracker, events) => outcome,
        };
        self.finish(tracker, outcome, cleanup, events).await
    }

    /// Waits for the callback, redeems it and downloads the file.
    async fn collect(
        &self,
        registration: Registration,
        deadline: tokio::time::Instant,
        journal: &mut Journal,
        tracker: &mut Tracker<'_>,
        events: Events<'_>,
    ) -> Result<Saved> {
        let Registration {
            mut ids,
            guard: _guard,
            ..
        } = registration;
        let timeout = deadline.saturating_duration_since(tokio::time::Instant::now());
        // Every distinct id is redeemed, a few at once, so junk ids sent to the callback URL
        // cannot hold the real one back; an id the service does not know is ignored.
        let mut redeeming = FuturesUnordered::new();
        let mut receiving = true;
        let mut not_ours = 0u32;
        // A stopped service would otherwise show only at the deadline (30 minutes): it is
        // asked now and then whether it still answers, and a change is reported.
        let client = self.session.client();
        let every = client.config().timeouts.liveness_check;
        let check = || async move {
            tokio::time::sleep(every).await;
            client.is_answering().await
        };
        let mut checking = Box::pin(check());
        let mut answering = true; // it has just accepted the job (or the job's reattach)
        let (payload, id) = loop {
            tokio::select! {
                now = &mut checking => {
                    if now != answering {
                        answering = now;
                        events(JobEvent::Service { answering });
                    }
                    checking = Box::pin(check());
                }
                id = ids.recv(), if receiving && redeeming.len() < REDEEM_AT_ONCE => match id {
                    Some(id) => {
                        if tracker.stage < Stage::CallbackReceived {
                            tracker.enter(Stage::CallbackReceived, events)?;
                        }
                        let session = self.session;
                        redeeming.push(async move { (session.webhook(&id).await, id) });
                    }
                    None => receiving = false,
                },
                Some((redeemed, id)) = redeeming.next() => match redeemed? {
                    Some(payload) => break (payload, id),
                    None => {
                        not_ours += 1;
                        tracing::warn!(callback_id = %id, "the service does not know this callback id; still waiting");
                    }
                },
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(Error::CallbackTimeout(format!(
                        "The service did not report the backup as finished in time{}{}. It may still be working: try again later, or allow more time (--timeout).",
                        describe(timeout),
                        unknown_ids(not_ours),
                    )))
                }
            }
            if !receiving && redeeming.is_empty() {
                return Err(Error::CallbackTimeout("The callback receiver stopped before the service called back. Try the backup again.".into()));
            }
        };
        if tracker.stage < Stage::ResultFetched {
            tracker.enter(Stage::ResultFetched, events)?;
        }
        // The batch's turn to download (download/turns.rs), held until every byte is in. Only
        // the real id gets here: junk sent to the callback URL never holds one.
        let learnt = tokio::time::Instant::now();
        let turn = DownloadTurns::take(self.download_turns.clone()).await;
        let fresh_for = self.download_turns.as_ref().map(DownloadTurns::fresh_for);
        let payload = match fresh_for.is_some_and(|fresh_for| learnt.elapsed() > fresh_for) {
            true => self.asked_again(&id).await.unwrap_or(payload),
            false => payload,
        };
        // Refused by the file host, the address is asked for once more (download/address.rs).
        let asked_again = async { Some(self.asked_again(&id).await?.url) };
        let address = crate::download::Address::renewable(&payload.url, asked_again);
        if tracker.stage < Stage::Downloading {
            tracker.enter(Stage::Downloading, events)?;
        }
        let mut on_progress = |p: Progress| events(JobEvent::Progress(p));
        let history = self.history;
        let id = tracker.id;
        let resume_from = journal.download.clone();
        let destination = journal.destination.clone();
        let mut checkpoint = |partial: &crate::download::PartialDownload| {
            journal.download = Some(partial.clone());
            if let Err(e) = history.checkpoint_journal(id, journal) {
                tracing::warn!(
                    code = e.code().as_str(),
                    "the download could not be journalled"
                );
            }
        };
        self.downloader
            .download_resumable(
                address,
                &destination,
                resume_from,
                Some(turn),
                &mut checkpoint,
                &mut on_progress,
            )
            .await
    }

    /// The file's address asked for again for callback `id`: after a long wait for the
    /// download turn, so it is fresh when the download starts, or once when the file host
    /// refused it (the document does not say how long one stays valid). `None` where the
    /// service does not give it a second time — soon: the turn is held meanwhile.
    async fn asked_again(&self, id: &CallbackId) -> Option<WebhookPayload> {
        let again = tokio::time::timeout(ASK_AGAIN_WITHIN, self.session.webhook(id));
        match again.await {
            Ok(Ok(fresh)) => fresh,
            Err(_) => {
                tracing::info!("the file's address was not given again in time");
                None
            }
            Ok(Err(e)) => {
                tracing::info!(
                    code = e.code().as_str(),
                    "the file's address was not given again"
                );
                None
            }
        }
    }

    /// Records how the job ended and lets go of what it held.
    async fn finish(
        &self,
        mut tracker: Tracker<'_>,
        outcome: Result<Saved>,
        cleanup: Option<Cleanup>,
        events: Events<'_>,
    ) -> Result<Saved> {
        let id = tracker.id;
        match &outcome {
            Ok(saved) => {
                (self.history)
                    .write_durably(crate::history::saving(id, saved.clone()))
                    .await?;
                events(JobEvent::Stage {
                    stage: Stage::Saved,
                });
            }
            Err(error) => {
                tracing::warn!(
                    code = error.code().as_str(),
                    stage = tracker.stage.as_str(),
                    "backup failed"
                );
                self.history.abandon(id, error)?;
                events(JobEvent::Stage {
                    stage: Stage::Failed,
                });
            }
        }
        // Ended and recorded: from here the tracker leaves the history alone. (Not before: a
        // job dropped while its end is written — on the blocking pool — is then ended by the
        // tracker, and the write, finishing after, records what really happened.)
        tracker.done = true;
        self.history.forget_claim(id);
        if let Some(cleanup) = cleanup {
            cleanup.await;
        }
        outcome
    }

    fn base_url(&self) -> String {
        self.session.client().config().base_url.to_string()
    }
}

/// `timeout` from now; a timeout too long for the clock (`--timeout` near `u64::MAX`) waits
/// about a century instead of panicking after the POST was sent.
fn deadline_after(timeout: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
        .unwrap_or(now)
}

/// How many callback ids a job redeems at once.
const REDEEM_AT_ONCE: usize = 4;

/// Longest wait for the file's address asked for again ([`BackupJob::asked_again`]).
const ASK_AGAIN_WITHIN: Duration = Duration::from_secs(30);

/// Tells the user that callbacks came but the service did not recognise them.
fn unknown_ids(count: u32) -> String {
    match count {
        0 => String::new(),
        1 => "; one callback arrived, but the service did not recognise its id".into(),
        n => format!("; {n} callbacks arrived, but the service recognised none of their ids"),
    }
}

fn describe(d: Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        String::new()
    } else if secs >= 120 {
        format!(" ({} minutes)", secs / 60)
    } else {
        format!(" ({secs} seconds)")
    }
}

/// Why a job begun encrypted is not finished without encryption, and how to finish it.
fn needs_its_encryption(setting: &crate::encryption::EncryptionSetting) -> String {
    use crate::encryption::EncryptionSetting;
    let how = match setting {
        EncryptionSetting::Recipient { recipient } => format!("--encrypt-to {recipient}"),
        EncryptionSetting::Passphrase => format!(
            "its passphrase in {} (or the profile's, in the keyring)",
            crate::encryption::PASSPHRASE_VAR
        ),
    };
    format!("This backup was started encrypted; it is never finished in plain. Resume it with its encryption: {how}.")
}
