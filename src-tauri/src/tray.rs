//! The tray icon and its menu (Open, Backup all now, Pause plans, Quit), closing the window
//! into the tray while plans are set, and the login item. What each does is kluis-desktop's
//! (`DesktopApp`'s background methods); this file wires Tauri's tray, window and app handle
//! to it. The `tray_action` command takes the same [`act`] path as the menu, so the tests
//! reach the menu's actions where no tray host shows the icon (Xvfb), and the UI's
//! "Pause plans" button keeps the tray's check mark true.

use std::sync::atomic::{AtomicBool, Ordering};

use kluis_desktop::{AppError, DesktopApp, Language, LoginStart, TrayAction};

use crate::background::Leaving;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime, Window, WindowEvent};
use tauri_plugin_autostart::ManagerExt;

/// The tray menu's entries, kept to show the plans' state after a change made anywhere ("Pause
/// plans" checked) and to speak the language the window chose ([`speak`]).
struct Entries<R: Runtime> {
    open: MenuItem<R>,
    backup_all: MenuItem<R>,
    pause: CheckMenuItem<R>,
    quit: MenuItem<R>,
}

/// Whether the "still running in the tray" notice was shown (once per run).
static TOLD_IN_TRAY: AtomicBool = AtomicBool::new(false);

/// Puts Kluis in the tray. Without a tray host (some desktops, Xvfb) the icon is not shown
/// and Kluis still runs: starting it again brings the window back (one instance).
pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let state = app.state::<DesktopApp>();
    let (paused, language) = (
        state.plans.plans_paused(),
        state.settings.current().language(),
    );
    let item = |action: TrayAction| {
        MenuItem::with_id(app, action.id(), action.label(language), true, None::<&str>)
    };
    let entries = Entries {
        open: item(TrayAction::Open)?,
        backup_all: item(TrayAction::BackupAll)?,
        pause: CheckMenuItem::with_id(
            app,
            TrayAction::PausePlans.id(),
            TrayAction::PausePlans.label(language),
            true,
            paused,
            None::<&str>,
        )?,
        quit: item(TrayAction::Quit)?,
    };
    let menu = Menu::with_items(
        app,
        &[
            &entries.open,
            &entries.backup_all,
            &entries.pause,
            &PredefinedMenuItem::separator(app)?,
            &entries.quit,
        ],
    )?;
    app.manage(entries);
    let mut tray = TrayIconBuilder::with_id("kluis")
        .tooltip("Kluis")
        .menu(&menu)
        .on_menu_event(|app, event| {
            let paused = app.state::<DesktopApp>().plans.plans_paused();
            if let Some(action) = TrayAction::of_menu(event.id().as_ref(), paused) {
                if let Err(e) = act(app, action) {
                    tracing::warn!(code = %e.code(), "a tray action failed");
                }
            }
        });
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

/// The background work with the tray icon, started once this process holds the background
/// right (see `background.rs`), which it keeps from then on.
pub fn start_background<R: Runtime>(
    app: &AppHandle<R>,
    right: Option<kluis_desktop::owner::BackgroundOwner>,
) {
    if let Some(right) = right {
        app.manage(crate::background::Held(right));
    }
    if let Err(e) = install(app) {
        tracing::warn!(%e, "no tray icon: Kluis runs without one");
    }
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        handle.state::<DesktopApp>().run_background().await;
    });
}

/// Does tray action `action` (from the menu or the `tray_action` command). Backup all runs
/// on its own task; the others are done when this returns.
pub fn act<R: Runtime>(app: &AppHandle<R>, action: TrayAction) -> Result<(), AppError> {
    let state = app.state::<DesktopApp>();
    match action {
        TrayAction::Open => show_window(app),
        TrayAction::BackupAll => {
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                let _ = app
                    .state::<DesktopApp>()
                    .background
                    .backup_all_from_tray()
                    .await;
            });
        }
        TrayAction::PausePlans => state.plans.pause_plans()?,
        TrayAction::ResumePlans => state.plans.resume_plans()?,
        TrayAction::Quit => app.exit(0),
    }
    if let Some(entries) = app.try_state::<Entries<R>>() {
        let _ = entries.pause.set_checked(state.plans.plans_paused());
    }
    Ok(())
}

/// The menu's entries in `language` (the window chose it: `set_language`).
pub fn speak<R: Runtime>(app: &AppHandle<R>, language: Language) {
    if let Some(entries) = app.try_state::<Entries<R>>() {
        let _ = entries.open.set_text(TrayAction::Open.label(language));
        let _ = entries
            .backup_all
            .set_text(TrayAction::BackupAll.label(language));
        let _ = entries
            .pause
            .set_text(TrayAction::PausePlans.label(language));
        let _ = entries.quit.set_text(TrayAction::Quit.label(language));
    }
}

/// Shows the window and brings it to the front (the tray's Open, a second start of Kluis).
pub fn show_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}

/// Closing the window: while plans are set or a backup runs, Kluis goes on — in `kluis-tray`
/// (`background.rs`), or, where that cannot be, in this process's tray (saying so the first
/// time); otherwise it ends as usual.
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    let WindowEvent::CloseRequested { api, .. } = event else {
        return;
    };
    let state = window.state::<DesktopApp>();
    if !state.background.keep_running_when_closed() {
        return;
    }
    match crate::background::leave_to_tray(window) {
        Leaving::Now => return,
        Leaving::WhenBackupsEnd => {
            api.prevent_close();
            let _ = window.hide();
            return;
        }
        Leaving::Stay => {}
    }
    api.prevent_close();
    let _ = window.hide();
    if !TOLD_IN_TRAY.swap(true, Ordering::SeqCst) {
        let app = window.app_handle().clone();
        tauri::async_runtime::spawn(async move {
            app.state::<DesktopApp>()
                .background
                .tell_still_running(true)
                .await;
        });
    }
}

/// The OS's login items, through tauri-plugin-autostart (it starts Kluis with
/// [`kluis_desktop::HIDDEN_FLAG`]).
pub struct AutostartLogin<R: Runtime>(pub AppHandle<R>);

impl<R: Runtime> LoginStart for AutostartLogin<R> {
    fn enabled(&self) -> Result<bool, String> {
        self.0.autolaunch().is_enabled().map_err(|e| e.to_string())
    }

    fn set(&self, on: bool) -> Result<(), String> {
        let login = self.0.autolaunch();
        match on {
            true => login.enable(),
            false => login.disable(),
        }
        .map_err(|e| e.to_string())
    }
}
