//! [`Updates`]: Settings → *Updates* — whether the publisher has a newer Kluis (kluis-update's
//! check, the same manifest and key as `kluis update`), looked at most once a day (the stamp
//! beside the history, shared with the CLI) and whenever asked; what is new shown; the build
//! downloaded and verified, then installed when asked — or, if chosen in Settings, by itself —
//! but never while a backup runs nor when a plan is due within [`QUIET_BEFORE_PLAN`].
//!
//! Stages ([`UpdateState`]): `NotLooked` → `UpToDate` | `Available` → (install) `Ready` (the
//! verified setup in the staging folder) → the setup runs and the process that started it
//! (the window, or kluis-tray while the window is closed) ends. `Off` when IT
//! turned updates off on this computer, `NotConfigured` when the build has no update server
//! (the .deb: apt updates it), `Failed` with the reason when a look or download failed (the
//! next look tries again). A restart forgets nothing worth keeping: the stamp keeps the newer
//! version found, and a setup downloaded before the restart is downloaded again (one
//! downloaded in this run is verified again before it is handed on).
//!
//! Installing is the host's ([`UpdateInstaller`]), with a setup verified again just before
//! (downloaded now, or kept from an earlier download this run): on Windows the window's shell
//! hands it to Tauri's updater plugin, which checks it once more against the manifest and the
//! key and runs it silently over the installed Kluis (`/S /UPDATE`: the setup waits for the
//! app to end, then starts it again) as the app ends; kluis-tray, while the window is closed,
//! starts it (`/S`: the setup asks kluis-tray to quit, then starts it again); elsewhere the
//! package manager updates Kluis, and the app says so.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kluis_update::{policy, Found, Publisher, Release};
use serde::Serialize;

use super::alerts::Alerts;
use super::installing::{PackageManagerUpdates, UpdateInstaller, VerifiedSetup};
use super::jobs::JobRegistry;
use super::setup_note::StartedNote;
use super::shared::Shared;
use crate::error::{AppError, AppResult};

/// No update is installed when a plan is due within this time: the setup and the restart
/// take a minute or two, and a planned backup must not find Kluis away.
pub const QUIET_BEFORE_PLAN: Duration = Duration::from_secs(15 * 60);

/// No setup is started by itself within this of the last one started by itself (*Install and restart*
/// always starts it).
pub const GAP_BETWEEN_SETUPS_BY_ITSELF: Duration = Duration::from_secs(24 * 3600);

/// How long a setup started by itself is given to install before a Kluis still older than
/// it counts it as one that did not.
pub const SETUP_TAKES: Duration = Duration::from_secs(5 * 60);

/// Where the update stands (see the module's text).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UpdateState {
    /// IT turned updates off on this computer (`why`: what turned them off).
    Off {
        why: String,
    },
    /// This Kluis has no update server: its package manager or IT updates it.
    NotConfigured,
    NotLooked,
    /// Nothing newer; `offered_older`: an older version the server offers, ignored.
    UpToDate {
        offered_older: Option<String>,
    },
    /// A newer Kluis is out: what is new, as the publisher wrote it (shown as text).
    Available {
        version: String,
        notes: String,
    },
    /// Downloaded and verified: installed when asked (or by itself at a quiet moment, when
    /// chosen).
    Ready {
        version: String,
        notes: String,
    },
    /// The last look or download failed; the next look tries again.
    Failed {
        message: String,
    },
}

/// Settings → *Updates*.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct UpdateView {
    /// This Kluis's version.
    pub current: String,
    pub state: UpdateState,
    /// Whether an update is installed by itself (Settings).
    pub automatic: bool,
    /// Whether this app can install an update itself (Windows); elsewhere the package
    /// manager does — or IT (`managed_by_it`).
    pub installs_here: bool,
    /// Whether IT installed Kluis for every user of this computer (the per-machine MSI) and
    /// so installs its updates.
    pub managed_by_it: bool,
    /// Whether this Kluis was unpacked from the zip (Windows): a new version is unpacked (or
    /// installed with the setup) by hand.
    pub unpacked: bool,
}

/// See the module's text.
pub struct Updates {
    pub(super) shared: Arc<Shared>,
    pub(super) jobs: Arc<JobRegistry>,
    /// Where a setup that did not install is told.
    alerts: Arc<Alerts>,
    state: Mutex<UpdateState>,
    /// The release found, with its signature (what the state shows is its version and notes).
    release: Mutex<Option<Release>>,
    /// The verified setup, once downloaded.
    setup: Mutex<Option<PathBuf>>,
    /// The version whose build did not verify, and when: not fetched by itself again within
    /// [`GAP_BETWEEN_SETUPS_BY_ITSELF`] by this process (it would otherwise be fetched again at
    /// every round); forgotten once a download verifies.
    failed_download: Mutex<Option<(String, std::time::Instant)>>,
    installer: Mutex<Arc<dyn UpdateInstaller>>,
    /// Whom to ask (none: this build has none; an error: the environment names no valid one).
    publisher: Result<Option<Publisher>, String>,
    /// A CA the update server's certificate may come from besides the system's.
    ca_pem: Option<String>,
}

/// The update server: [`Publisher::configured`] and `KLUIS_CA_CERT` unless the builder names
/// another (tests, an office's own).
pub(super) type UpdateServer = Option<(Publisher, Option<String>)>;

impl Updates {
    pub(super) fn new(
        shared: Arc<Shared>,
        jobs: Arc<JobRegistry>,
        alerts: Arc<Alerts>,
        server: UpdateServer,
    ) -> Updates {
        let (publisher, ca_pem) = match server {
            Some((publisher, ca_pem)) => (Ok(Some(publisher)), ca_pem),
            None => (
                Publisher::configured().map_err(|e| e.to_string()),
                shared.env_ca_pem.clone(),
            ),
        };
        Updates {
            shared,
            jobs,
            alerts,
            state: Mutex::new(UpdateState::NotLooked),
            release: Mutex::new(None),
            setup: Mutex::new(None),
            failed_download: Mutex::new(None),
            installer: Mutex::new(Arc::new(PackageManagerUpdates)),
            publisher,
            ca_pem,
        }
    }

    /// The host's installer (see [`UpdateInstaller`]).
    pub fn set_installer(&self, installer: Arc<dyn UpdateInstaller>) {
        *self.installer.lock().unwrap() = installer;
    }

    fn stamp(&self) -> PathBuf {
        policy::stamp_beside(&self.shared.paths.history_db)
    }

    /// Settings → *Updates*.
    pub fn view(&self) -> UpdateView {
        // (One lock at a time: both guards in one expression would wait on each other.)
        let installer = self.installer.lock().unwrap().clone();
        UpdateView {
            current: kluis_update::current().to_string(),
            state: self.state.lock().unwrap().clone(),
            automatic: self.shared.profiles.settings().install_updates,
            installs_here: installer.installs_here(),
            managed_by_it: installer.managed_by_it(),
            unpacked: installer.unpacked(),
        }
    }

    /// Settings → *Install updates by themselves*.
    pub fn set_automatic(&self, automatic: bool) -> AppResult<UpdateView> {
        self.shared.profiles.update_settings(|settings| {
            settings.install_updates = automatic;
            Ok(())
        })?;
        Ok(self.view())
    }

    /// *Look now* (`asked`), or the daily look: a day after the last look (the app's or the
    /// CLI's) the server is asked; within it, what that look found is shown.
    pub async fn look(&self, asked: bool) -> UpdateView {
        let state = self.looked(asked).await;
        *self.state.lock().unwrap() = state;
        self.view()
    }

    async fn looked(&self, asked: bool) -> UpdateState {
        if let Some(why) = policy::disabled() {
            return UpdateState::Off { why };
        }
        let publisher = match &self.publisher {
            Ok(Some(publisher)) => publisher,
            Ok(None) => return UpdateState::NotConfigured,
            Err(message) => {
                return UpdateState::Failed {
                    message: message.clone(),
                }
            }
        };
        let stamp = self.stamp();
        if !asked && !policy::due(&stamp) {
            let current = self.state.lock().unwrap().clone();
            let known = matches!(
                current,
                UpdateState::Available { .. } | UpdateState::Ready { .. }
            );
            if known || policy::known_newer(&stamp, &kluis_update::current()).is_none() {
                return match current {
                    UpdateState::NotLooked => UpdateState::UpToDate {
                        offered_older: None,
                    },
                    current => current,
                };
            }
            // (Found by a look of the CLI's or before a restart: asked again for its notes.)
        }
        let found = match kluis_update::look(publisher, self.ca_pem.as_deref(), &stamp).await {
            Ok(found) => found,
            Err(e) => {
                return UpdateState::Failed {
                    message: e.to_string(),
                }
            }
        };
        match found {
            Found::UpToDate { offered_older } => {
                *self.release.lock().unwrap() = None;
                UpdateState::UpToDate {
                    offered_older: offered_older.map(|v| v.to_string()),
                }
            }
            Found::Newer(release) => {
                let state = UpdateState::Available {
                    version: release.version.to_string(),
                    notes: release.notes.clone(),
                };
                let same = (self.release.lock().unwrap().as_ref())
                    .is_some_and(|r| r.version == release.version);
                if !same {
                    *self.setup.lock().unwrap() = None;
                }
                *self.release.lock().unwrap() = Some(*release);
                match (same, self.state.lock().unwrap().clone()) {
                    (true, ready @ UpdateState::Ready { .. }) => ready,
                    _ => state,
                }
            }
        }
    }

    /// Why an update may not be installed now: a backup runs, or a plan is due soon, or the
    /// installer says why not.
    pub fn busy(&self) -> Option<String> {
        let installer = self.installer.lock().unwrap().clone();
        if let Some(why) = installer.not_now() {
            return Some(why);
        }
        let running = self.jobs.running_job_ids().len();
        if running > 0 {
            return Some(format!(
                "{running} backup(s) running: Kluis can be updated once they have ended."
            ));
        }
        let soon = jiff::Zoned::now()
            .checked_add(jiff::SignedDuration::try_from(QUIET_BEFORE_PLAN).unwrap_or_default())
            .ok()?;
        let due = (self.shared.profiles.list().into_iter()).find(|profile| {
            kluis_profiles::plan_due(profile, &self.shared.history, &soon).is_now()
        });
        due.map(|profile| {
            format!(
                "{}'s planned backup is due within {} minutes: Kluis can be updated after it.",
                profile.name,
                QUIET_BEFORE_PLAN.as_secs() / 60
            )
        })
    }

    /// *Install and restart*: the newer Kluis downloaded (verified with the publisher's key) and
    /// installed — refused while a backup runs or a plan is about to, and where the package
    /// manager updates Kluis.
    pub async fn install(&self) -> AppResult<UpdateView> {
        self.install_as(false).await
    }

    /// [`Updates::install`]; `by_itself` (*Install updates by themselves*): the version is
    /// noted first as started by itself (see [`Updates::tick`]).
    async fn install_as(&self, by_itself: bool) -> AppResult<UpdateView> {
        let installer = self.installer.lock().unwrap().clone();
        if !installer.installs_here() {
            return Err(PackageManagerUpdates::refusal(installer.as_ref()));
        }
        if let Some(why) = self.busy() {
            return Err(AppError::InvalidState(why));
        }
        let setup = self.download().await?;
        // (Looked at again: a backup may have started while the setup downloaded.)
        if let Some(why) = self.busy() {
            return Err(AppError::InvalidState(why));
        }
        if by_itself {
            // (The setup's own version: a look meanwhile may have found another.)
            self.note_started_by_itself(&setup.version)?;
        }
        if let Err(e) = installer.install(&setup) {
            if by_itself {
                // (Noted, so not tried again today: said now, not left for a restart.)
                self.tell_a_setup_that_stopped().await;
            }
            return Err(e);
        }
        Ok(self.view())
    }

    /// Whether the build of the version `state` offers did not verify within the day.
    fn download_failed_lately(&self, state: &UpdateState) -> bool {
        let offered = match state {
            UpdateState::Available { version, .. } | UpdateState::Ready { version, .. } => version,
            _ => return false,
        };
        let failed = self.failed_download.lock().unwrap();
        failed.as_ref().is_some_and(|(version, at)| {
            version == offered && at.elapsed() < GAP_BETWEEN_SETUPS_BY_ITSELF
        })
    }

    /// Where the last setup started by itself is noted (beside the stamp).
    fn started_note(&self) -> PathBuf {
        StartedNote::beside(&self.stamp())
    }

    /// Notes a setup started by itself now, before it starts; not noted, it is not started
    /// (nothing would then keep a setup that stops from being started again at each round).
    fn note_started_by_itself(&self, version: &str) -> AppResult<()> {
        let note = StartedNote::now(version);
        let file = self.started_note();
        note.write(&file).map_err(|e| {
            AppError::Update(format!(
                "Kluis could not write {} ({e}), so it does not start the update by itself. Check that the folder can be written, or use Settings → Updates → Install and restart.",
                file.display()
            ))
        })
    }

    /// The last setup started by itself, when noted less than [`GAP_BETWEEN_SETUPS_BY_ITSELF`]
    /// from now — any version's (a server offering a new one at each start brings no setup a
    /// round either), and either way: a note from more than that ahead of the clock (one set
    /// back by days) is no longer taken; one from less ahead is.
    fn started_by_itself_lately(&self) -> Option<StartedNote> {
        StartedNote::within(&self.started_note(), GAP_BETWEEN_SETUPS_BY_ITSELF)
    }

    /// A setup started by itself lately that did not install — this Kluis is older than the
    /// version it was to install (it stopped at a program still running, or could not start)
    /// — is told once, on the desktop: nobody else would see it (kluis-tray has no console, and
    /// the setup runs silently). Looked at each round, once the setup has had
    /// [`SETUP_TAKES`] to finish (a window or kluis-tray started meanwhile is not a failure
    /// yet).
    pub async fn tell_a_setup_that_did_not_install(&self) {
        self.tell_not_installed(SETUP_TAKES).await;
    }

    /// [`Updates::tell_a_setup_that_did_not_install`] at once: the setup this process started
    /// ended unsuccessfully (or could not start) while this process still runs.
    pub async fn tell_a_setup_that_stopped(&self) {
        self.tell_not_installed(Duration::ZERO).await;
    }

    async fn tell_not_installed(&self, older_than: Duration) {
        let Some(note) = self.started_by_itself_lately() else {
            return;
        };
        let newer = kluis_update::Version::parse(&note.version)
            .is_ok_and(|version| version > kluis_update::current());
        let old_enough = note.age() >= older_than;
        if note.told || !newer || !old_enough {
            return;
        }
        let told = note.told();
        if told.write(&self.started_note()).is_err() {
            return; // (Not told, rather than told at each round.)
        }
        if self.shared.profiles.settings().notify_desktop {
            let alert =
                kluis_reporting::Alert::update_not_installed(&told.version, self.shared.language());
            self.alerts.show(&alert).await;
        }
    }

    /// The release's setup in the staging folder, downloaded and verified once.
    async fn download(&self) -> AppResult<VerifiedSetup> {
        let (Ok(Some(publisher)), Some(release)) =
            (&self.publisher, self.release.lock().unwrap().clone())
        else {
            return Err(AppError::InvalidState(
                "No newer Kluis was found: look for updates first.".into(),
            ));
        };
        let verified = |file: PathBuf| VerifiedSetup {
            file,
            version: release.version.to_string(),
            manifest_url: publisher.manifest.to_string(),
            manifest: release.manifest.clone(),
            tauri_pubkey: publisher.tauri_pubkey.clone(),
        };
        let kept = self.setup.lock().unwrap().clone();
        if let Some(setup) = kept.filter(|s| s.is_file()) {
            // (Verified again: it has lain on disk since its download.)
            match kluis_update::verify_kept(publisher, &release, &setup) {
                Ok(()) => return Ok(verified(setup)),
                Err(e) => tracing::warn!(code = e.code(), "the setup kept is fetched again: {e}"),
            }
        }
        let folder = self.shared.paths.staging_dir.join("update");
        // (A setup left by an earlier download is not trusted: fetched and verified again.)
        let _ = std::fs::remove_dir_all(&folder);
        kluis_private::files::create_dir_all(&folder)
            .map_err(|e| AppError::Update(format!("{}: {e}", folder.display())))?;
        let ca = self.ca_pem.clone();
        let setup = kluis_update::download(publisher, &release, &folder, ca.as_deref())
            .await
            .map_err(|e| {
                // (A build that does not verify stays so: not fetched by itself again today.)
                if e.refuses_the_build() {
                    let failed = (release.version.to_string(), std::time::Instant::now());
                    *self.failed_download.lock().unwrap() = Some(failed);
                }
                AppError::Update(e.to_string())
            })?;
        *self.failed_download.lock().unwrap() = None;
        *self.setup.lock().unwrap() = Some(setup.clone());
        *self.state.lock().unwrap() = UpdateState::Ready {
            version: release.version.to_string(),
            notes: release.notes.clone(),
        };
        Ok(verified(setup))
    }

    /// The daily round (the app calls it every few minutes): the look when due; with
    /// *Install updates by themselves*, a newer Kluis installed at a quiet moment — but no
    /// setup started by itself within [`GAP_BETWEEN_SETUPS_BY_ITSELF`] of the last (noted beside the
    /// stamp): a setup that stopped (a program still running) starts kluis-tray again, whose
    /// first round would start it again at once.
    pub async fn tick(&self) {
        self.tell_a_setup_that_did_not_install().await;
        let view = self.look(false).await;
        let newer = matches!(
            view.state,
            UpdateState::Available { .. } | UpdateState::Ready { .. }
        );
        if newer
            && view.automatic
            && view.installs_here
            && self.started_by_itself_lately().is_none()
            && !self.download_failed_lately(&view.state)
        {
            if let Some(why) = self.busy() {
                tracing::info!("the update waits: {why}");
                return;
            }
            if let Err(e) = self.install_as(true).await {
                tracing::warn!("the update was not installed by itself: {e}");
            }
        }
    }

    /// The daily round as long as the app runs: [`Updates::tick`] now and every ten minutes
    /// (the server is asked once a day; the rest is a look at the stamp and the plans).
    pub async fn watch(&self) {
        loop {
            self.tick().await;
            tokio::time::sleep(Duration::from_secs(600)).await;
        }
    }
}
