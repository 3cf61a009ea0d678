//! The keeper: what `kluis-tray` does from the moment it holds the background right until it
//! leaves (see the crate's text).

use std::sync::Arc;
use std::time::Duration;

/// The tray icon of this system (the same few calls on each).
#[cfg(target_os = "linux")]
use crate::sni as tray_icon;
#[cfg(windows)]
use crate::win_tray as tray_icon;

use kluis_desktop::mirror::Mirror;
use kluis_desktop::owner::TrayInstance;
use kluis_desktop::{DesktopApp, TrayAction};
use tokio::sync::mpsc;

use crate::program::ProgramFile;
use crate::setup_update::SetupRunner;

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
/// running; another process — the window, `kluis plan` — may have removed the last plan),
/// whether its program was upgraded, and for a `--quit` left for it ([`Looks`]).
pub const LOOK_EVERY: Duration = Duration::from_secs(60);

/// Why the keeper left.
#[derive(Debug, PartialEq, Eq)]
pub enum Left {
    /// *Quit Kluis*.
    Quit,
    /// No plan is set and no backup runs.
    NothingToKeep,
    /// The desktop session ended (its session bus is gone: a log-out).
    SessionEnded,
    /// Asked to end (SIGTERM: a log-out, a task manager's *End*).
    Terminated,
    /// Its program file was replaced (a package upgrade) and no backup ran: the new program
    /// is to run in its place.
    Replaced,
}

/// Runs `app`'s background work with the tray icon until *Quit Kluis*, or until nothing is
/// left to keep; then stops what runs (a backup stopped so is finished at the next start).
/// `after_window`: a closing window started it, so it says once where Kluis went. (Tests: no
/// program file or instance is looked at.)
pub async fn run(app: Arc<DesktopApp>, window: WindowStarter, after_window: bool) -> Left {
    run_looking(app, window, after_window, Looks::default()).await
}

/// What the keeper looks at, besides whether anything is left to keep, and how often.
pub struct Looks<'a> {
    /// How often it looks ([`LOOK_EVERY`] by default; tests look often).
    pub every: Duration,
    /// This process's program file: replaced (a package upgrade), it leaves.
    pub program: Option<ProgramFile>,
    /// This process as the data folder's `kluis-tray`: `kluis-tray --quit` left its request
    /// for it, it leaves (a request its socket could not take: `TrayInstance`).
    pub instance: Option<&'a TrayInstance>,
}

impl Default for Looks<'_> {
    fn default() -> Self {
        Looks {
            every: LOOK_EVERY,
            program: None,
            instance: None,
        }
    }
}

impl Looks<'_> {
    fn quit_asked(&self) -> bool {
        self.instance.is_some_and(TrayInstance::quit_asked)
    }
}

/// [`run`], looking as `looks` says.
pub async fn run_looking(
    app: Arc<DesktopApp>,
    window: WindowStarter,
    after_window: bool,
    mut looks: Looks<'_>,
) -> Left {
    let (clicks, mut actions) = mpsc::unbounded_channel();
    let followers = Mirror::new();
    let _serving = show_backups_to_windows(&app, &followers, clicks.clone());
    // (Before the background work starts: its daily round installs updates.)
    // (Weak: the installer is kept in the app; a strong one would keep the app for ever.)
    let stopped: crate::setup_update::SetupStopped = {
        let (app, runtime) = (Arc::downgrade(&app), tokio::runtime::Handle::current());
        Arc::new(move || {
            if let Some(app) = app.upgrade() {
                runtime.spawn(async move { app.updates.tell_a_setup_that_stopped().await });
            }
        })
    };
    app.updates
        .set_installer(Arc::new(SetupRunner::new(followers.clone(), stopped)));
    // A `kluis-tray --quit` from before the socket (or pipe) listened (from now on it is heard there):
    // nothing starts.
    if looks.quit_asked() {
        app.shutdown().await;
        return Left::Quit;
    }
    #[cfg(any(target_os = "linux", windows))]
    let tray = tray_icon::show(clicks, app.clone()).await;
    #[cfg(any(target_os = "linux", windows))]
    let tray_shown = tray.as_ref().is_some_and(|t| t.shown());
    #[cfg(not(any(target_os = "linux", windows)))]
    let tray_shown = {
        drop(clicks);
        false
    };
    if after_window && tell_still_running_now(app.paths()) {
        let app = app.clone();
        tokio::spawn(async move { app.background.tell_still_running(tray_shown).await });
    }
    // Backups a quit, a log-out or a window that ended left unfinished are finished here (a
    // window opened later finds them done; its own start would do the same).
    {
        let app = app.clone();
        tokio::spawn(async move {
            if let Err(e) = app.backups.resume_backups(Arc::new(|_| {})).await {
                tracing::warn!(code = %e.code(), "unfinished backups could not be resumed");
            }
        });
    }
    let background = app.run_background();
    tokio::pin!(background);
    let terminated = terminated();
    tokio::pin!(terminated);
    let mut look = tokio::time::interval(looks.every);
    let left = loop {
        tokio::select! {
            _ = &mut background => {} // (it runs as long as the process)
            _ = &mut terminated => break Left::Terminated,
            Some(action) = actions.recv() => {
                if act(&app, action, &window) {
                    break Left::Quit;
                }
                #[cfg(any(target_os = "linux", windows))]
                if let Some(tray) = &tray {
                    tray.refresh().await;
                }
            }
            _ = look.tick() => {
                // (A request its socket did not take, however it failed.)
                if looks.quit_asked() {
                    break Left::Quit;
                }
                let busy = app.background.backup_runs();
                if !app.background.plans_set() && !busy {
                    break Left::NothingToKeep;
                }
                #[cfg(target_os = "linux")]
                if let Some(tray) = &tray {
                    if tray.session_ended() {
                        break Left::SessionEnded;
                    }
                    // The tooltip as the window set it meanwhile (its language, a pause): a
                    // host shows it without asking for it again until told it changed.
                    tray.refresh().await;
                }
                // (A click not yet acted on is first: a *Quit* must not become a restart.)
                if !busy && actions.is_empty() && looks.program.as_mut().is_some_and(ProgramFile::replaced) {
                    break Left::Replaced;
                }
            }
        }
    };
    #[cfg(any(target_os = "linux", windows))]
    if let Some(tray) = tray {
        tray.remove().await;
    }
    app.shutdown().await;
    left
}

/// A window opened while this process runs the plans shows its backups (their progress, their
/// end, *Cancel*): every planned backup's events are served to it (`kluis_desktop::mirror`);
/// `kluis-tray --quit` asks there too (its *Quit* goes to `quit`, as the menu's does). Served
/// until the returned task is dropped, as the keeper leaves.
fn show_backups_to_windows(
    app: &Arc<DesktopApp>,
    mirror: &Arc<Mirror>,
    quit: mpsc::UnboundedSender<TrayAction>,
) -> Option<AbortOnDrop<std::io::Result<()>>> {
    use kluis_desktop::mirror::{self, Request};
    let listener = match mirror::Listener::bind(&mirror::address(app.paths())) {
        Ok(listener) => listener,
        Err(e) => {
            tracing::warn!(%e, "a window opened now will not show kluis-tray's backups");
            return None;
        }
    };
    tracing::info!("kluis-tray listens for windows");
    app.plans.watch_planned(mirror.sink());
    let app = app.clone();
    let asked = Arc::new(move |request| match request {
        Request::Cancel(job) => {
            let app = app.clone();
            tokio::spawn(async move { app.backups.cancel_backup(job).await });
        }
        Request::CancelAll => {
            app.plans.cancel_all();
        }
        Request::Quit => {
            let _ = quit.send(TrayAction::Quit);
        }
    });
    Some(AbortOnDrop(tokio::spawn(
        mirror.clone().serve(listener, asked),
    )))
}

/// A task that ends with the value that holds it.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Whether "Kluis is still running" is to be said now: at most once a day, so that a window
/// closed ten times a day is not told ten times (remembered beside the history).
fn tell_still_running_now(paths: &kluis_desktop::AppPaths) -> bool {
    const ONCE_IN: Duration = Duration::from_secs(24 * 3600);
    let marker = paths.history_db.with_file_name("still-running.told");
    let told = std::fs::metadata(&marker).and_then(|m| m.modified());
    if told.is_ok_and(|at| at.elapsed().is_ok_and(|age| age < ONCE_IN)) {
        return false;
    }
    // (A new file each time, so its modification time is now; owner-only, as all Kluis makes.)
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let said = format!("{}\n", now.unwrap_or_default().as_secs());
    let _ = kluis_private::files::write_atomic(&marker, said.as_bytes());
    true
}

/// Returns when the process is asked to end (SIGTERM), so that it stops what runs in order.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            term.recv().await;
            return;
        }
    }
    std::future::pending::<()>().await
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
        tracing::warn!(action = action.id(), error = %e, "a tray action failed");
    }
    false
}
