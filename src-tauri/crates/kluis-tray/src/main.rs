//! `kluis-tray`: see the crate's text. Flags: `--after-window` (a closing window started it:
//! it says once where Kluis went); `--quit` asks the `kluis-tray` that runs to quit, as its
//! menu's *Quit Kluis* does (where no tray icon shows the menu), and ends. Environment:
//! `KLUIS_DATA_DIR` keeps all files under one folder, as for the window and `kluis`. When a
//! package upgrade replaced the program, the new one is run in this process's place.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kluis_desktop::owner::{BackgroundOwner, TrayInstance, AFTER_WINDOW_FLAG};
use kluis_desktop::{AppPaths, DesktopApp, KeyringStore};
use kluis_reporting::{Alert, DesktopNotifier, Notifier};
use kluis_tray::keeper::{self, Left};
use kluis_tray::program::ProgramFile;

fn main() {
    kluis_private::logging::init("warn");
    #[cfg(unix)]
    if std::env::args_os().any(|a| a == "--quit") {
        if let Err(e) = AppPaths::from_env()
            .map_err(Into::into)
            .and_then(|paths| quit(&paths))
        {
            eprintln!("kluis-tray: {e}");
            std::process::exit(1);
        }
        return;
    }
    // (Windows an old kluis-tray started before an upgrade ran this program in its place.)
    #[cfg(target_os = "linux")]
    kluis_tray::inherited::wait_for_children_at_start();
    let outcome = run(true).and_then(|replacement| match replacement {
        Some(program) => run_in_place(&program).or_else(|e| {
            // The old program carries on rather than leave the plans to nobody.
            tracing::warn!(%e, "the new kluis-tray did not start; this one keeps the plans");
            run(false).map(|_| ())
        }),
        None => Ok(()),
    });
    if let Err(e) = outcome {
        eprintln!("kluis-tray: {e}");
        // Said where the user looks: a closing window or the login started this process, and
        // nobody reads its output.
        if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            let alert = Alert::background_failed(&e.to_string());
            let _ = runtime.block_on(DesktopNotifier.notify(&alert));
        }
        std::process::exit(1);
    }
}

/// Keeps the plans until the keeper leaves; answers the program to run in this process's place
/// when a package upgrade replaced it (`follow_upgrades`). (The locks and the runtime are let
/// go of on return.)
fn run(follow_upgrades: bool) -> Result<Option<PathBuf>, Box<dyn std::error::Error>> {
    // The program file as started, first of all. (Its path now, too: once replaced, this
    // process's own link to it names the old file.)
    let program = ProgramFile::this_process().filter(|_| follow_upgrades);
    let path = program.as_ref().map(|p| p.path().to_path_buf());
    let after_window = std::env::args_os().any(|a| a == AFTER_WINDOW_FLAG);
    let paths = AppPaths::from_env()?;
    // One kluis-tray per data folder: a second one leaves at once (the first keeps the plans).
    let Some(_instance) = TrayInstance::try_take(&paths)? else {
        tracing::info!("kluis-tray runs already");
        return Ok(None);
    };
    // A window that just closed holds the right until it has ended (its own backups done).
    let _owner = BackgroundOwner::take(&paths)?;
    // Every backup runs on this runtime, its threads below the desktop's priority (as in the
    // window: kluis_desktop::runtime says why).
    let runtime = kluis_desktop::runtime::background()?;
    let _inside = runtime.enter();
    let save_dir = std::env::var_os("KLUIS_E2E_SAVE_DIR").map(PathBuf::from);
    // Each backup made from the klant as it is then: the window, another process, edits them.
    let app = DesktopApp::builder(paths, Arc::new(KeyringStore))
        .save_folder(save_dir)
        .fresh_connections()
        .open()?;
    tracing::info!("kluis-tray keeps the plans");
    let left = runtime.block_on(keeper::run_looking_every(
        Arc::new(app),
        keeper::start_window(),
        after_window,
        look_every(),
        program,
    ));
    tracing::info!(?left, "kluis-tray leaves");
    Ok(path.filter(|_| left == Left::Replaced))
}

/// How often the keeper looks ([`keeper::LOOK_EVERY`]; a debug build takes
/// `KLUIS_TRAY_LOOK_EVERY_MS` from its tests).
fn look_every() -> Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = (std::env::var("KLUIS_TRAY_LOOK_EVERY_MS").ok())
        .and_then(|v| v.parse().ok())
        .filter(|ms| *ms > 0)
    {
        return Duration::from_millis(ms);
    }
    keeper::LOOK_EVERY
}

/// The new `program` run in this process's place (the same process, so whoever waits for it
/// waits on), with this one's flags, without `--after-window`: the user saw nothing change.
#[cfg(unix)]
fn run_in_place(program: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    use std::os::unix::process::CommandExt;
    let args = std::env::args_os()
        .skip(1)
        .filter(|a| a != AFTER_WINDOW_FLAG);
    let error = std::process::Command::new(program).args(args).exec();
    Err(format!("the new kluis-tray did not start: {error}").into())
}

#[cfg(not(unix))]
fn run_in_place(_program: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    Ok(())
}

/// `--quit`: the `kluis-tray` of this data folder asked to quit; none running is no error.
#[cfg(unix)]
fn quit(paths: &AppPaths) -> Result<(), Box<dyn std::error::Error>> {
    use kluis_desktop::mirror;
    if TrayInstance::try_take(paths)?.is_some() {
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let socket = mirror::socket_path(paths);
    runtime.block_on(mirror::ask(&socket, mirror::Request::Quit))?;
    Ok(())
}
