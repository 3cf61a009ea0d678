//! [`Backups`]: the backups someone starts and watches — start, and resume at start-up (run
//! by kluis-core's engine), save (through the Rust-side dialog), cancel — and the history.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kluis_core::engine::{EventSink as JobEventSink, ResumeScope, Retry, Work};
use kluis_core::{BackupRequest, Destination, Error, HistoryEntry, KlantKey, Owner, Saved, Stage};
use kluis_demo::DemoAccount;
use uuid::Uuid;

use super::connections::Connections;
use super::jobs::{Follow, JobRegistry, JobSlot};
use super::keeping;
use super::shared::Shared;
use super::ResumedJob;
use crate::error::{AppError, AppResult};
use crate::events::{AppJobEvent, EventSink, ResumeSink, ResumedEvent};
use crate::secrets::{SecretKind, APP};

/// See the module's text.
pub struct Backups {
    pub(super) shared: Arc<Shared>,
    pub(super) connections: Arc<Connections>,
    pub(super) jobs: Arc<JobRegistry>,
    /// The window's sink for resumed jobs, kept for the window's life as the planned backups'
    /// is. Why: the UI's end of a channel is told it ended by script evaluated in the page, and
    /// the first script WebKitGTK evaluates for the app makes it start a JavaScript engine in the
    /// app's own process to hold the result (5.8 MiB of its code paged in, `window-idle.sh`).
    /// With nothing to resume the sink would end at once, and an idle window pay that for it.
    pub(super) resume_sink: std::sync::Mutex<Option<ResumeSink>>,
}

impl Backups {
    /// Starts a backup; its events go to `sink`. Returns the job id (for save and cancel).
    pub async fn start_backup(&self, id: &str, sink: EventSink) -> AppResult<Uuid> {
        let connection = self.connections.connection(id).await?;
        let transport = self.connections.transport_now(id, &connection).await?;
        let job_id = Uuid::new_v4();
        // The klant's own folder, else the office's "always save here", else the dialog.
        let own = self
            .shared
            .profiles
            .get(id)?
            .save_folder
            .map(std::path::PathBuf::from);
        let save_folder = own.or_else(|| self.shared.save_folder());
        let (destination, staging) = match &save_folder {
            Some(folder) => (Destination::from_out(folder)?, None),
            None => {
                let staging = self
                    .shared
                    .paths
                    .staging_dir
                    .join(job_id.simple().to_string());
                kluis_private::files::create_dir_all(&staging)
                    .map_err(|e| Error::io(format!("create {}", staging.display()), e))?;
                (Destination::Folder(staging.clone()), Some(staging))
            }
        };
        let request = BackupRequest {
            id: job_id,
            profile: KlantKey::profile(id),
            owner: Owner::App,
            destination,
            callback_timeout: self.shared.callback_timeout,
        };
        let follow = Follow { sink, staging };
        // Someone watches this one: a failure is said at once, for them to choose what next.
        let retry = Retry::NONE;
        (self.jobs).run_job(Work::New(request), retry, id, connection, transport, follow);
        Ok(job_id)
    }

    /// Finishes the backups an earlier run left unfinished (the app was closed or stopped
    /// while they waited or downloaded), as `kluis resume` does; their events go to `sink`.
    /// Jobs that can never finish are ended with the reason; jobs whose profile cannot sign in
    /// now (no saved secrets, keyring locked) are left for a later start.
    pub async fn resume_backups(&self, sink: ResumeSink) -> AppResult<Vec<ResumedJob>> {
        *self.resume_sink.lock().unwrap() = Some(sink.clone());
        let mut resumed = self.offer_staged(&sink)?;
        let mut services: Vec<String> = Vec::new();
        for job in self.shared.history.unfinished()? {
            let profile = job.entry.profile.as_str();
            if DemoAccount::is_demo(profile) {
                // The demo's service ended with the app that ran it.
                if self.shared.history.claim(job.id())?.is_some() {
                    self.shared.history.abandon(
                        job.id(),
                        &Error::NotResumable(
                            "The demo service ended when the app was closed; start a new backup."
                                .into(),
                        ),
                    )?;
                }
                continue;
            }
            // Jobs of other profiles (the CLI's, a removed one's) are left to `kluis resume`.
            if let (Ok(_), Some(journal)) = (self.shared.profiles.get(profile), &job.journal) {
                if !services.contains(&journal.base_url) {
                    services.push(journal.base_url.clone());
                }
            }
        }
        // Read once, and only when there is something to resume.
        let relay_secret = match services.is_empty() {
            true => None,
            false => self
                .connections
                .secret(APP, SecretKind::RelaySecret, false)
                .await
                .ok()
                .flatten(),
        };
        for base_url in services {
            let scope = ResumeScope {
                base_url,
                owner: Some(Owner::App),
                relay_secret: relay_secret.clone(),
            };
            // (The profile's connection encrypts as the profile says; a job begun encrypted
            // that the profile no longer encrypts is refused by the job, never saved plain.)
            let connect = |profile: KlantKey, _| async move {
                (self.connections.connection(profile.as_str()))
                    .await
                    .map_err(AppError::into_core)
            };
            // Each job's events go to `sink` tagged with the job.
            let tagged = |job_id: Uuid| -> EventSink {
                let sink = sink.clone();
                Arc::new(move |event| {
                    sink(ResumedEvent {
                        job_id: job_id.to_string(),
                        event,
                    })
                })
            };
            let events = |job_id: Uuid| -> JobEventSink {
                let tagged = tagged(job_id);
                Arc::new(move |event| tagged(event.into()))
            };
            let started = self.shared.engine.resume(scope, connect, events).await?;
            for (_, error) in started.not_started {
                tracing::warn!(
                    code = error.code().as_str(),
                    "a backup could not be resumed now"
                );
            }
            for job in started.started {
                let staging = Some(job.destination.folder().to_path_buf())
                    .filter(|folder| folder.starts_with(&self.shared.paths.staging_dir));
                resumed.push(ResumedJob {
                    job_id: job.id.to_string(),
                    profile_id: job.profile.to_string(),
                    stage: job.stage,
                });
                let follow = Follow {
                    sink: tagged(job.id),
                    staging,
                };
                self.jobs.follow(job.handle, job.profile.as_str(), follow);
            }
        }
        Ok(resumed)
    }

    /// Offers again the verified backups that wait in the staging folder for a place (the app
    /// was closed before the user chose one, or `kluis resume --include-app` finished them).
    fn offer_staged(&self, sink: &ResumeSink) -> AppResult<Vec<ResumedJob>> {
        let mut offered = Vec::new();
        for (job_id, saved, staging) in
            crate::staging::saved_in_staging(&self.shared.history, &self.shared.paths.staging_dir)?
        {
            let mut jobs = self.jobs.slots.lock().unwrap();
            if jobs.contains_key(&job_id) {
                continue;
            }
            let Some(entry) = self.shared.history.get(job_id)? else {
                continue;
            };
            let event = AppJobEvent::staged(&saved);
            jobs.insert(job_id, JobSlot::Staged { saved, staging });
            drop(jobs);
            sink(ResumedEvent {
                job_id: job_id.to_string(),
                event,
            });
            offered.push(ResumedJob {
                job_id: job_id.to_string(),
                profile_id: entry.profile.to_string(),
                stage: entry.stage,
            });
        }
        Ok(offered)
    }

    /// Asks where to keep a staged, verified backup (a native save dialog, opened here: the
    /// webview never hands over a path) and moves it there. `None` when the dialog was
    /// cancelled; the staged file then waits for another try.
    pub async fn save_backup(&self, job: Uuid) -> AppResult<Option<Saved>> {
        let file_name = match self.jobs.slots.lock().unwrap().get(&job) {
            Some(JobSlot::Staged { saved, .. }) => crate::events::file_name(saved),
            _ => {
                return Err(AppError::InvalidState(
                    "This backup is not waiting to be saved.".into(),
                ))
            }
        };
        let folder = crate::dialogs::default_folder();
        let Some(path) = self
            .shared
            .dialogs()
            .save_file(&file_name, folder.as_deref())
            .await
        else {
            return Ok(None);
        };
        self.move_staged(job, path).await.map(Some)
    }

    /// Moves a staged, verified backup to `path`, which the user chose in the save dialog
    /// (the dialog asked before replacing an existing file, so it is replaced).
    async fn move_staged(&self, job: Uuid, path: PathBuf) -> AppResult<Saved> {
        let slot = self.jobs.slots.lock().unwrap().remove(&job);
        let Some(JobSlot::Staged { saved, staging }) = slot else {
            if let Some(slot) = slot {
                self.jobs.slots.lock().unwrap().insert(job, slot);
            }
            return Err(AppError::InvalidState(
                "This backup is not waiting to be saved.".into(),
            ));
        };
        let moved = tokio::task::spawn_blocking({
            let saved = saved.clone();
            move || kluis_core::download::destination::relocate(&saved, &path, true)
        })
        .await
        .expect("save task");
        match moved {
            Ok(moved) => {
                self.shared.history.relocate(job, &moved.path)?;
                crate::staging::remove_parts(&staging);
                // In its place now: what follows a save to the folder follows.
                if let Some(profile) = self.shared.history.get(job)?.map(|entry| entry.profile) {
                    keeping::after_save(&self.shared, profile.as_str(), None).await;
                }
                Ok(moved)
            }
            Err(e) => {
                // Keep the staged file so the user can choose another place.
                (self.jobs.slots.lock().unwrap()).insert(job, JobSlot::Staged { saved, staging });
                Err(e.into())
            }
        }
    }

    /// Cancels a job at any stage; nothing is left behind. A running job ends itself as
    /// cancelled (its events say so); a staged file is removed here.
    pub async fn cancel_backup(&self, job: Uuid) -> AppResult<()> {
        let mut jobs = self.jobs.slots.lock().unwrap();
        match jobs.get(&job) {
            // (When it is ending just now, there is nothing left to cancel.)
            Some(JobSlot::Running) => {
                self.shared.engine.cancel(job);
                Ok(())
            }
            Some(JobSlot::Staged { saved, staging }) => {
                // The user declined the verified file that waited for a place.
                crate::staging::remove_folder_of(saved, staging);
                jobs.remove(&job);
                self.shared
                    .history
                    .failed(job, Stage::Saved, &Error::Cancelled)?;
                Ok(())
            }
            // One of kluis-tray's, shown in this window (`DesktopApp::follow_tray`): it
            // cancels it, and its end comes back as its events.
            None if self.shared.ask_tray(crate::owner::TrayRequest::Cancel(job)) => Ok(()),
            None => Err(AppError::NotFound("That backup has already ended.".into())),
        }
    }

    /// The newest 500 backups (only profile `profile`'s when given), newest first.
    pub fn history(&self, profile: Option<&str>) -> AppResult<Vec<HistoryEntry>> {
        Ok(self
            .shared
            .history
            .list(profile.map(KlantKey::profile).as_ref(), 500)?)
    }

    /// Opens the folder of a saved backup (`select`: with the file selected).
    pub fn show_backup(&self, history_id: Uuid, select: bool) -> AppResult<()> {
        let entry = (self.shared.history)
            .get(history_id)?
            .ok_or_else(|| AppError::NotFound("That backup is not in the history.".into()))?;
        let path = entry
            .path
            .ok_or_else(|| AppError::NotFound("That backup was not saved.".into()))?;
        crate::open::show_in_folder(Path::new(&path), select)
    }
}
