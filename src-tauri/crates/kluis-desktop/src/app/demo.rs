//! The demo: kluis-demo's service in this process, with its accounts as profiles — and, in the
//! demo app (`kluis-app --demo`, [`super::DesktopAppBuilder::demo`]), an office that has used
//! Kluis for a month, so that a newcomer sees all it does: copies off the computer, a restore
//! test, a copy waiting for a disk. Everything of it is in the demo's own folder (its files,
//! settings and history; its secrets in memory or kept apart in the keyring): nothing of the
//! real Kluis on this computer is read or changed.
//!
//! Furnished once, when the demo's folder is new: the save folder `Backups`, the copy targets
//! *Demo copies* (the folder `Copies`) and *USB disk (not plugged in)* (a folder that is not
//! there, so its copy waits as a real unplugged disk's does), and Fietsen De Vries's last 30
//! nights of backups (real files, recorded at their own times), copied by the app's own copy
//! code and the newest restore-tested by its own restore test. Each start gives the demo's
//! klanten their copy targets again (their profiles live in memory): every one *Demo copies*,
//! Fietsen De Vries the disk too.

use std::path::{Path, PathBuf};

use kluis_copies::{CopyTarget, Place};
use kluis_core::past::PastBackup;
use kluis_core::{Destination, KlantKey, Saved};
use kluis_demo::{Demo, DEMO_ACCOUNTS};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::accounts::Accounts;
use super::{DemoInfo, DesktopApp};
use crate::error::{AppError, AppResult};
use crate::profiles::Profile;
use crate::secrets::{SecretKind, SecretStore};

/// The demo's copy targets' names (see the module's text).
pub const DEMO_COPIES: &str = "Demo copies";
pub const UNPLUGGED_DISK: &str = "USB disk (not plugged in)";
/// The klant with a month of history, and how many nights it has.
pub const MONTH_KLANT: &str = "demo-de-vries";
const NIGHTS: i64 = 30;
/// Held while a start looks whether the demo is new and furnishes it.
static FURNISHING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl Accounts {
    /// Starts the demo service and adds its profiles (full and restricted key), whose secrets
    /// stay in memory.
    pub async fn start_demo(&self) -> AppResult<DemoInfo> {
        let mut running = self.connections.demo.lock().await;
        if running.is_none() {
            // Paced, so that each stage can be seen.
            let demo = Demo::start(48 * 1024 * 1024, true).await?;
            for account in DEMO_ACCOUNTS {
                self.connections.demo_secrets.set(
                    account.id,
                    SecretKind::ApiKey,
                    &account.api_key(),
                )?;
                self.connections.demo_secrets.set(
                    account.id,
                    SecretKind::Password,
                    &account.password(),
                )?;
                self.shared.profiles.put(Profile {
                    id: account.id.into(),
                    name: account.name.into(),
                    base_url: demo.base_url().to_string(),
                    username: account.username().into(),
                    openapi_url: Some(format!("{}/openapi.json", demo.base_url())),
                    denied: Vec::new(),
                    allowed: Vec::new(),
                    demo: true,
                    extra_ca_pem: Some(demo.ca_pem().to_string()),
                    plan: None,
                    ping_url: None,
                    retention: None,
                    verify_monthly: false,
                    restore_test_monthly: true,
                    encryption: None,
                    copy_to: None,
                    tags: Vec::new(),
                    save_folder: None,
                })?;
            }
            *running = Some(demo);
        }
        let demo = running.as_ref().expect("started above");
        Ok(DemoInfo {
            base_url: demo.base_url().to_string(),
            profiles: self.list().into_iter().filter(|p| p.demo).collect(),
            folder: None,
        })
    }
}

impl DesktopApp {
    /// The demo app's start: the demo service and its klanten, in an office furnished as the
    /// module's text says. Refused in Kluis itself, whose files the demo must not touch
    /// ([`DesktopApp::open_demo`] opens it beside).
    pub async fn start_demo(&self) -> AppResult<DemoInfo> {
        if !self.demo {
            return Err(AppError::InvalidState(
                "The demo opens in a window of its own (Try the demo), so that it touches nothing of this Kluis.".into(),
            ));
        }
        let folder = demo_folder(&self.shared.paths.history_db);
        let mut info = self.accounts.start_demo().await?;
        // One start at a time (a page reloaded while the first furnishes): furnished once.
        let _one = FURNISHING.lock().await;
        let fresh = self.shared.history.list(None, 1)?.is_empty()
            && self.shared.profiles.settings().copy_targets.is_empty();
        if fresh {
            self.furnish(&folder).await?;
        }
        self.give_copy_targets()?;
        if fresh {
            // The month's copies, made and restore-tested by the app's own code.
            self.keeping.copy_pending().await;
            let newest = self
                .shared
                .history
                .kept(Some(&KlantKey::profile(MONTH_KLANT)))?;
            if let Some(newest) = newest.last() {
                let id = Uuid::parse_str(&newest.id).map_err(|e| io_error(e.to_string()))?;
                self.backups.test_restore(id).await?;
            }
        }
        info.profiles = self
            .accounts
            .list()
            .into_iter()
            .filter(|p| p.demo)
            .collect();
        info.folder = Some(folder.to_string_lossy().into_owned());
        Ok(info)
    }

    /// *Try the demo* in Kluis itself: the demo app started beside it, a process and a
    /// window of its own on its own folder.
    pub fn open_demo(&self) -> AppResult<()> {
        if self.demo {
            return Ok(());
        }
        let program = std::env::current_exe()
            .map_err(|e| io_error(format!("Kluis could not find its own program ({e}).")))?;
        let mut child = std::process::Command::new(program)
            .arg("--demo")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| io_error(format!("The demo could not be started ({e}).")))?;
        // Waited for when it ends, so that it leaves no process behind.
        std::thread::spawn(move || child.wait());
        Ok(())
    }

    /// The save folder, the copy targets and the month of backups (see the module's text).
    async fn furnish(&self, folder: &Path) -> AppResult<()> {
        let backups = folder.join("Backups");
        let copies = folder.join("Copies");
        for made in [&backups, &copies] {
            kluis_private::files::create_dir_all(made)
                .map_err(|e| io_error(format!("{}: {e}", made.display())))?;
        }
        let backups_text = backups.to_string_lossy().into_owned();
        self.shared.profiles.update_settings(|settings| {
            settings.save_folder.get_or_insert(backups_text);
            Ok(())
        })?;
        for (name, path) in [
            (DEMO_COPIES, copies),
            (UNPLUGGED_DISK, folder.join("USB disk")),
        ] {
            if path.is_dir() {
                // Tested, and so marked as the target, as adding a folder in Settings does.
                kluis_copies::folder::test(name, &path)?;
            }
            let place = Place::Folder {
                path: path.to_string_lossy().into_owned(),
            };
            (self.shared.profiles).add_copy_target(CopyTarget::new(name, place)?)?;
        }
        let profile = self.shared.profiles.get(MONTH_KLANT)?;
        // The demo's own folder, whatever the e2e tests' stand-in for the save dialog says.
        let settings = self.shared.profiles.settings();
        let now = jiff::Zoned::now();
        for night in (1..=NIGHTS).rev() {
            let at = past_night(&now, night)?;
            let size = 180_000 + night as u64 * 4099;
            let destination = profile.unattended_destination(
                None,
                Some(&backups),
                &settings.file_names(),
                &at,
            )?;
            let path = match destination {
                Destination::Named { folder, stem } => folder.join(format!("{stem}.zip")),
                Destination::Folder(folder) => folder.join("owner backup.zip"),
                Destination::File(file) => file,
            };
            let saved = write_past_file(&path, size)?;
            let saved_ms = at.timestamp().as_millisecond();
            self.shared.history.record_past(&PastBackup {
                job: Uuid::new_v4(),
                klant: KlantKey::profile(MONTH_KLANT),
                transport: "demo".into(),
                started_ms: saved_ms - 95_000,
                saved_ms,
                saved,
            })?;
        }
        Ok(())
    }

    /// Each demo klant copies to *Demo copies*, Fietsen De Vries to the unplugged disk too
    /// (those of them still set).
    fn give_copy_targets(&self) -> AppResult<()> {
        let targets = self.shared.profiles.settings().copy_targets;
        let id_of = |name: &str| {
            targets
                .iter()
                .find(|t| t.name == name)
                .map(|t| t.id.clone())
        };
        for account in DEMO_ACCOUNTS {
            let mut ids: Vec<String> = id_of(DEMO_COPIES).into_iter().collect();
            if account.id == MONTH_KLANT {
                ids.extend(id_of(UNPLUGGED_DISK));
            }
            if !ids.is_empty() {
                self.keeping.set_copy_to(account.id, Some(ids))?;
            }
        }
        Ok(())
    }
}

/// The demo's own folder: `demo` beside the history it was opened on is the demo's history
/// itself (see [`crate::AppPaths::demo`]), so its parent is the folder.
fn demo_folder(history_db: &Path) -> PathBuf {
    history_db
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// 02:04 in the night `nights` ago, in this computer's time zone.
fn past_night(now: &jiff::Zoned, nights: i64) -> AppResult<jiff::Zoned> {
    let day = now.date() - jiff::Span::new().days(nights);
    day.at(2, 4, 0, 0)
        .to_zoned(now.time_zone().clone())
        .map_err(|e| io_error(format!("The demo's dates: {e}")))
}

/// A demo backup of `size` bytes written owner-only to `path`, as it is recorded.
fn write_past_file(path: &Path, size: u64) -> AppResult<Saved> {
    let bytes = kluis_demo::backup_bytes(size);
    kluis_private::files::write_atomic(path, &bytes)
        .map_err(|e| io_error(format!("{}: {e}", path.display())))?;
    Ok(Saved {
        path: path.to_path_buf(),
        bytes: size,
        sha256: hex::encode(Sha256::digest(&bytes)),
        encrypted: None,
    })
}

fn io_error(message: String) -> AppError {
    AppError::Core(kluis_core::Error::Io(message))
}
