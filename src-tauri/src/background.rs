//! Who runs the background work (kluis-desktop's `owner`): this window's process, or
//! `kluis-tray`. This file wires it to Tauri: taking the right at start (or later, when
//! `kluis-tray` leaves while the window is open), and what closing the window does.

use kluis_desktop::owner::{self, BackgroundOwner};
use kluis_desktop::DesktopApp;
use tauri::{AppHandle, Manager, Runtime};

/// The right, held for as long as the process runs once taken.
pub struct Held(#[allow(dead_code)] pub BackgroundOwner);

/// What taking the right starts (`tray::start_background`): the right is `None` where no lock
/// could be made.
pub type Start<R> = fn(&AppHandle<R>, Option<BackgroundOwner>);

/// Takes the background right and `start`s the background work with the tray icon — now, when
/// it is free, or once the process that holds it (`kluis-tray`) lets go. A data folder whose
/// lock cannot be made at all (a read-only folder) runs it here, as before there was a lock.
pub fn own_when_free<R: Runtime>(app: &AppHandle<R>, start: Start<R>) {
    let paths = app.state::<DesktopApp>().paths().clone();
    match BackgroundOwner::try_take(&paths) {
        Ok(Some(right)) => start(app, Some(right)),
        Ok(None) => {
            tracing::info!("kluis-tray keeps the plans; this window is only the window");
            // Its backups shown here as if this window ran them, until it runs them itself.
            let handle = app.clone();
            tauri::async_runtime::spawn(async move {
                let guest = || handle.try_state::<Held>().is_none();
                handle.state::<DesktopApp>().follow_tray(guest).await;
            });
            let app = app.clone();
            std::thread::spawn(move || match BackgroundOwner::take(&paths) {
                Ok(right) => {
                    let handle = app.clone();
                    let _ = app.run_on_main_thread(move || start(&handle, Some(right)));
                }
                Err(e) => {
                    tracing::warn!(code = %e.code(), "the background right could not be waited for")
                }
            });
        }
        Err(e) => {
            tracing::warn!(code = %e.code(), "no background lock: this window runs the plans");
            start(app, None);
        }
    }
}

/// Started at login (`--hidden`) on Linux or Windows with plans set: `kluis-tray` is started to
/// keep them, and this process is to end. False (the window's start goes on, in the tray) when no plan is
/// set or `kluis-tray` could not be started.
pub fn left_to_tray_at_login() -> bool {
    if !cfg!(any(target_os = "linux", windows)) {
        return false;
    }
    let Ok(paths) = kluis_desktop::AppPaths::from_env() else {
        return false;
    };
    if !owner::plans_set(&paths) {
        return false;
    }
    match owner::start_beside(owner::TRAY_PROGRAM, &[]) {
        Ok(_) => true,
        Err(e) => {
            tracing::warn!(%e, "kluis-tray could not be started; the window keeps the plans");
            false
        }
    }
}

/// What closing the window does, when something is to go on (plans set, or a backup of this
/// process running), on Linux and Windows outside the demo: the plans go to `kluis-tray`
/// (started now; it takes the right when this process has ended), and this process ends — at
/// once, or hidden once its own backups are done. [`Leaving::Stay`] when that could not be
/// (`kluis-tray` missing, the demo, macOS): then the window hides into this process's tray as
/// before.
pub fn leave_to_tray<R: Runtime>(window: &tauri::Window<R>) -> Leaving {
    let state = window.state::<DesktopApp>();
    if !cfg!(any(target_os = "linux", windows)) || state.is_demo() {
        return Leaving::Stay;
    }
    if state.background.plans_set() {
        if let Err(e) = owner::start_beside(owner::TRAY_PROGRAM, &[owner::AFTER_WINDOW_FLAG]) {
            tracing::warn!(%e, "kluis-tray could not be started; the window keeps the plans");
            return Leaving::Stay;
        }
    }
    if !state.background.backup_runs() {
        return Leaving::Now;
    }
    let app = window.app_handle().clone();
    let label = window.label().to_string();
    tauri::async_runtime::spawn(async move {
        app.state::<DesktopApp>()
            .background
            .until_no_backup_runs()
            .await;
        // Shown again meanwhile (a second start, the tray's Open): it stays, holding the plans
        // until it is closed again (kluis-tray waits for them).
        let shown =
            (app.get_webview_window(&label)).is_some_and(|w| w.is_visible().unwrap_or(false));
        if !shown {
            app.exit(0);
        }
    });
    Leaving::WhenBackupsEnd
}

/// See [`leave_to_tray`].
#[derive(Debug, PartialEq, Eq)]
pub enum Leaving {
    /// The window closes and the process ends.
    Now,
    /// The window hides; the process ends when its backups are done.
    WhenBackupsEnd,
    /// The window hides into this process's own tray (as before `kluis-tray`).
    Stay,
}
