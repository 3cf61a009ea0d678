//! Running without the window: whether closing the window keeps Kluis running (in the tray),
//! the tray menu's actions, "Pause plans" for all klanten at once, and starting at login.
//!
//! The shell owns the tray icon, the window and the login item (they are Tauri's and the
//! OS's); what each does is decided here, so the app's tests and the UI reach the same paths.

use std::sync::{Arc, RwLock};

use kluis_core::Error;
use kluis_profiles::Language;
use kluis_reporting::Alert;
use serde::Serialize;

use super::alerts::Alerts;
use super::jobs::JobRegistry;
use super::plans::Plans;
use super::shared::Shared;
use crate::error::{AppError, AppResult};

/// The tray menu's entries (and the `tray_action` command, which the tests use: under Xvfb
/// no tray host shows the icon).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum TrayAction {
    /// Show the window (and bring it to the front).
    Open,
    /// Backup all, with nobody watching: a failure to start is told as a notification.
    BackupAll,
    PausePlans,
    ResumePlans,
    Quit,
}

impl TrayAction {
    pub const ALL: [TrayAction; 5] = [
        TrayAction::Open,
        TrayAction::BackupAll,
        TrayAction::PausePlans,
        TrayAction::ResumePlans,
        TrayAction::Quit,
    ];

    /// The menu entry's id.
    pub fn id(self) -> &'static str {
        match self {
            TrayAction::Open => "open",
            TrayAction::BackupAll => "backup_all",
            TrayAction::PausePlans => "pause_plans",
            TrayAction::ResumePlans => "resume_plans",
            TrayAction::Quit => "quit",
        }
    }

    /// The menu entry's text in `language` (the window's: [`kluis_profiles::Settings::language`]): one
    /// "Pause plans" check, ticked while paused, serves both pausing and resuming.
    pub fn label(self, language: Language) -> &'static str {
        use Language::{En, Nl};
        match (self, language) {
            (TrayAction::Open, En) => "Open Kluis",
            (TrayAction::Open, Nl) => "Kluis openen",
            (TrayAction::BackupAll, En) => "Backup all now",
            (TrayAction::BackupAll, Nl) => "Back-up van alle klanten maken",
            (TrayAction::PausePlans | TrayAction::ResumePlans, En) => "Pause plans",
            (TrayAction::PausePlans | TrayAction::ResumePlans, Nl) => "Plannen pauzeren",
            (TrayAction::Quit, En) => "Quit Kluis",
            (TrayAction::Quit, Nl) => "Kluis afsluiten",
        }
    }

    /// The tray icon's tooltip under "Kluis", in `language`: whether the plans run.
    pub fn plans_said(paused: bool, language: Language) -> &'static str {
        match (paused, language) {
            (true, Language::En) => "Your plans are paused.",
            (true, Language::Nl) => "Uw plannen zijn gepauzeerd.",
            (false, Language::En) => "Your plans run in the background.",
            (false, Language::Nl) => "Uw plannen lopen op de achtergrond.",
        }
    }

    /// The action of menu entry `id`.
    pub fn of_id(id: &str) -> Option<TrayAction> {
        TrayAction::ALL.into_iter().find(|a| a.id() == id)
    }

    /// What clicking menu entry `id` does: the one "Pause plans" check pauses, or resumes
    /// while plans are `paused`.
    pub fn of_menu(id: &str, paused: bool) -> Option<TrayAction> {
        match TrayAction::of_id(id)? {
            TrayAction::PausePlans | TrayAction::ResumePlans => {
                Some(TrayAction::pause_or_resume(paused))
            }
            action => Some(action),
        }
    }

    /// What the "Pause plans" check does while plans are `paused`: resumes them, or pauses.
    pub fn pause_or_resume(paused: bool) -> TrayAction {
        match paused {
            true => TrayAction::ResumePlans,
            false => TrayAction::PausePlans,
        }
    }
}

/// Starting Kluis when the user logs in: the OS's login items (the shell's, through
/// tauri-plugin-autostart); tests give their own.
pub trait LoginStart: Send + Sync {
    fn enabled(&self) -> Result<bool, String>;
    fn set(&self, on: bool) -> Result<(), String>;
}

/// No login item (headless use before the shell set its own).
pub struct NoLoginStart;

impl LoginStart for NoLoginStart {
    fn enabled(&self) -> Result<bool, String> {
        Ok(false)
    }

    fn set(&self, _: bool) -> Result<(), String> {
        Err("Starting at login is only available in the desktop app.".into())
    }
}

/// The demo app's: it never becomes a login item, which would start Kluis itself — starting at
/// login is Kluis's own setting, not the demo's (Settings shows the choice unavailable).
pub struct DemoLoginStart;

impl LoginStart for DemoLoginStart {
    fn enabled(&self) -> Result<bool, String> {
        Err(DEMO_LOGIN.into())
    }

    fn set(&self, _: bool) -> Result<(), String> {
        Err(DEMO_LOGIN.into())
    }
}

const DEMO_LOGIN: &str =
    "The demo does not start at login: that is a setting of Kluis itself, outside the demo.";

/// The command-line flag the login item starts Kluis with: in the tray, without the window
/// (when plans are set; otherwise the window opens, as nothing would run unseen).
pub const HIDDEN_FLAG: &str = "--hidden";

/// See the module's text.
pub struct Background {
    pub(super) shared: Arc<Shared>,
    pub(super) jobs: Arc<JobRegistry>,
    pub(super) plans: Arc<Plans>,
    pub(super) alerts: Arc<Alerts>,
    /// Starting at login (see [`LoginStart`]): set by the shell once it runs.
    pub(super) login_start: RwLock<Arc<dyn LoginStart>>,
}

impl Background {
    /// Whether closing the window should keep Kluis running in the tray: while a plan is set
    /// (paused as a whole or not — "Resume plans" is in the tray) or a backup is running.
    /// Otherwise closing the window ends Kluis, as users of a plain app expect.
    pub fn keep_running_when_closed(&self) -> bool {
        self.shared.profiles.plans_active() || self.jobs.busy()
    }

    /// Whether a backup of this process is under way: running, being started, or Backup all's
    /// batch still starting klanten (the window's process, once its window is closed, ends when
    /// none is: the plans are `kluis-tray`'s then).
    pub fn backup_runs(&self) -> bool {
        self.jobs.busy()
    }

    /// Returns once no backup of this process runs (at once when none does).
    pub async fn until_no_backup_runs(&self) {
        loop {
            let settled = self.jobs.settled.notified();
            tokio::pin!(settled);
            // Listening before looking: a job settled between the look and the wait is heard.
            settled.as_mut().enable();
            if !self.backup_runs() {
                return;
            }
            settled.await;
        }
    }

    /// Whether plans are set (paused as a whole or not): then `kluis-tray` keeps them while the
    /// window is closed.
    pub fn plans_set(&self) -> bool {
        self.shared.profiles.plans_active()
    }

    /// The tray's "Backup all now": like the button, but nobody may be looking, so a batch that
    /// cannot start (no save folder yet) is told as a notification too — whatever the setting:
    /// it answers the user's own click, which has no other place to say why.
    pub async fn backup_all_from_tray(&self) -> AppResult<usize> {
        let outcome = self.plans.backup_all().await;
        if let Err(e) = &outcome {
            (self.alerts.show(&Alert::backup_all_not_started(
                &e.to_string(),
                self.shared.language(),
            )))
            .await;
        }
        outcome
    }

    /// Said once when closing the window left Kluis running: where it went, and how to end it
    /// (`tray_shown`: whether the desktop shows its tray icon). (Not while notifications are
    /// turned off.)
    pub async fn tell_still_running(&self, tray_shown: bool) {
        if self.shared.profiles.settings().notify_desktop {
            let alert = match tray_shown {
                true => Alert::still_running(self.shared.language()),
                false => Alert::still_running_without_tray(self.shared.language()),
            };
            self.alerts.show(&alert).await;
        }
    }

    /// The login item the shell manages (see [`LoginStart`]).
    pub fn set_login_start(&self, login: Arc<dyn LoginStart>) {
        *self.login_start.write().unwrap() = login;
    }

    /// Settings → "Start Kluis when I log in": whether it does.
    pub fn start_at_login(&self) -> AppResult<bool> {
        let login = self.login_start.read().unwrap().clone();
        login.enabled().map_err(login_error)
    }

    /// Turns starting at login on or off; answers whether it is on now.
    pub fn set_start_at_login(&self, on: bool) -> AppResult<bool> {
        let login = self.login_start.read().unwrap().clone();
        login.set(on).map_err(login_error)?;
        login.enabled().map_err(login_error)
    }
}

fn login_error(message: String) -> AppError {
    AppError::Core(Error::Config(format!(
        "Kluis could not change its start at login: {message}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use crate::{AppPaths, DesktopApp, MemoryStore, PlanInput};

    /// An app whose unattended backups go to `dir`/saved.
    fn app(dir: &Path) -> DesktopApp {
        let saved = dir.join("saved");
        std::fs::create_dir_all(&saved).unwrap();
        let keyring = Arc::new(MemoryStore::default());
        DesktopApp::open(AppPaths::under(dir), keyring, Some(saved)).unwrap()
    }

    /// Every tray entry's id leads back to its action.
    #[test]
    fn tray_ids_round_trip() {
        for action in TrayAction::ALL {
            assert_eq!(TrayAction::of_id(action.id()), Some(action));
        }
        assert_eq!(TrayAction::of_id("rm -rf"), None);
        let pause = TrayAction::PausePlans.id();
        assert_eq!(
            TrayAction::of_menu(pause, false),
            Some(TrayAction::PausePlans)
        );
        assert_eq!(
            TrayAction::of_menu(pause, true),
            Some(TrayAction::ResumePlans),
            "the check resumes paused plans"
        );
        assert_eq!(TrayAction::of_menu("open", true), Some(TrayAction::Open));
    }

    /// Without plans or backups, closing the window ends Kluis; a plan keeps it in the tray,
    /// also while plans are paused as a whole, and the pause shows in the settings.
    #[tokio::test]
    async fn a_plan_keeps_kluis_running_when_the_window_closes() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path());
        let klant = kluis_profiles::Profile::new("Klant", "https://h/webservice_v2", "u");
        let profile = klant.id.clone();
        app.shared.profiles.put(klant).unwrap();
        assert!(
            !app.background.keep_running_when_closed(),
            "nothing to run: closing ends Kluis"
        );

        let daily = serde_json::from_str(r#"{"kind":"daily","at":"02:00"}"#).unwrap();
        app.plans
            .set_plan(
                &profile,
                PlanInput {
                    schedule: daily,
                    paused: false,
                },
            )
            .unwrap();
        assert!(
            app.background.keep_running_when_closed(),
            "a plan runs unseen"
        );

        app.plans.pause_plans().unwrap();
        assert_eq!(
            app.settings.current().paused_together,
            std::slice::from_ref(&profile)
        );
        assert!(app.plans.plans_paused());
        assert!(
            app.background.keep_running_when_closed(),
            "paused as a whole, still in the tray"
        );
        assert_eq!(
            app.keeping.dashboard().unwrap()[0].next_due_ms,
            None,
            "a paused plan is not due"
        );

        app.plans.resume_plans().unwrap();
        assert!(!app.plans.plans_paused());
        assert!(app.keeping.dashboard().unwrap()[0].next_due_ms.is_some());
    }

    /// Without the shell's login item, turning start at login on is refused with a reason.
    #[test]
    fn start_at_login_needs_the_desktop() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path());
        assert!(!app.background.start_at_login().unwrap());
        let e = app.background.set_start_at_login(true).unwrap_err();
        assert!(
            e.to_string().contains("only available in the desktop app"),
            "{e}"
        );
    }
}
