//! The keeper: what `kluis-tray` does from the moment it holds the background right until it
//! leaves (see the crate's text).

use std::sync::Arc;
use std::time::Duration;

use kluis_desktop::{DesktopApp, TrayAction};
use tokio::sync::mpsc;

/// How the window is opened (*Open Kluis*): the window's program started beside this one; the
/// tests count the calls instead.
pub type WindowStarter = Arc<dyn Fn() -> std::io::Result<()> + Send + Sync>;

/// The window's program, started beside this one (its own single instance brings an open
/// window to the front instead of opening a second). Its end is waited for on a thread of its
/// own, so no ended window is left behind as a zombie for as long as this process runs.
pub fn start_window() -> WindowStarter {
    Arc::new(|| {
        let mut window =
            kluis_desktop::owner::start_beside(kluis_desktop::owner::WINDOW_PROGRAM, &[])?;
        std::thread::spawn(move || window.wait());
        Ok(())
    })
}

/// How often the keeper looks whether anything is left for it to keep (plans set, a backup
/// running); another process (the window, `kluis plan`) may have removed the last plan.
const LOOK_EVERY: Duration = Duration::from_secs(60);

/// Why the keeper left.
#[derive(Debug, PartialEq, Eq)]
pub enum Left {
    /// *Quit Kluis*.
    Quit,
    /// No plan is set and no backup runs.
    NothingToKeep,
    /// The desktop session ended (its bus closed the tray's connection: a log-out).
    SessionEnded,
}

/// Runs `app`'s background work with the tray icon until *Quit Kluis*, or until nothing is
/// left to keep; then stops what runs (a backup stopped so is finished at the next start).
/// `after_window`: a closing window started it, so it says once where Kluis went.
pub async fn run(app: Arc<DesktopApp>, window: WindowStarter, after_window: bool) -> Left {
    run_looking_every(app, window, after_window, LOOK_EVERY).await
}

/// [`run`], looking every `look_every` whether anything is left to keep (tests look often).
pub async fn run_looking_every(
    app: Arc<DesktopApp>,
    window: WindowStarter,
    after_window: bool,
    look_every: Duration,
) -> Left {
    let (clicks, mut actions) = mpsc::unbounded_channel();
    #[cfg(target_os = "linux")]
    let tray = crate::sni::show(clicks, app.clone()).await;
    #[cfg(target_os = "linux")]
    let tray_shown = tray.as_ref().is_some_and(|t| t.shown());
    #[cfg(not(target_os = "linux"))]
    let tray_shown = {
        drop(clicks);
        false
    };
    if after_window {
        let app = app.clone();
        tokio::spawn(async move { app.background.tell_still_running(tray_shown).await });
    }
    let background = app.run_background();
    tokio::pin!(background);
    let mut look = tokio::time::interval(look_every);
    let left = loop {
        tokio::select! {
            _ = &mut background => {} // (it runs as long as the process)
            Some(action) = actions.recv() => {
                if act(&app, action, &window) {
                    break Left::Quit;
                }
                #[cfg(target_os = "linux")]
                if let Some(tray) = &tray {
                    tray.refresh().await;
                }
            }
            _ = look.tick() => {
                let busy = app.background.backup_runs();
                if !app.background.plans_set() && !busy {
                    break Left::NothingToKeep;
                }
                #[cfg(target_os = "linux")]
                if let Some(tray) = &tray {
                    if tray.session_ended() {
                        break Left::SessionEnded;
                    }
                }
                if !busy {
                    give_back_memory();
                }
            }
        }
    };
    #[cfg(target_os = "linux")]
    if let Some(tray) = tray {
        tray.remove().await;
    }
    app.shutdown().await;
    left
}

/// The heap a batch of backups grew is returned to the system at the next look once it is done
/// (glibc keeps freed memory for the process otherwise: measured, 35 MiB after a batch of 200
/// against 15 before it). On an idle heap this costs next to nothing.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator's own to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Does tray menu action `action`; answers whether the keeper is to leave (*Quit Kluis*).
/// Backup all runs on its own task.
fn act(app: &Arc<DesktopApp>, action: TrayAction, window: &WindowStarter) -> bool {
    let outcome = match action {
        TrayAction::Open => window().map_err(|e| e.to_string()),
        TrayAction::BackupAll => {
            let app = app.clone();
            tokio::spawn(async move {
                let _ = app.background.backup_all_from_tray().await;
            });
            Ok(())
        }
        TrayAction::PausePlans => app.plans.pause_plans().map_err(|e| e.to_string()),
        TrayAction::ResumePlans => app.plans.resume_plans().map_err(|e| e.to_string()),
        TrayAction::Quit => return true,
    };
    if let Err(e) = outcome {
        tracing::warn!(action = action.id(), %e, "a tray action failed");
    }
    false
}
