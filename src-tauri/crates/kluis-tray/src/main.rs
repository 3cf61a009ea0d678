//! `kluis-tray`: see the crate's text. Flags: `--after-window` (a closing window started it:
//! it says once where Kluis went); `--quit` asks the `kluis-tray` that runs to quit, as its
//! menu's *Quit Kluis* does (where no tray icon shows the menu), and ends. Environment:
//! `KLUIS_DATA_DIR` keeps all files under one folder, as for the window and `kluis`.

use std::path::PathBuf;
use std::sync::Arc;

use kluis_desktop::owner::{BackgroundOwner, TrayInstance, AFTER_WINDOW_FLAG};
use kluis_desktop::{AppPaths, DesktopApp, KeyringStore};
use kluis_reporting::{Alert, DesktopNotifier, Notifier};

fn main() {
    kluis_private::logging::init("warn");
    #[cfg(unix)]
    if std::env::args_os().any(|a| a == "--quit") {
        if let Err(e) = paths().and_then(|paths| quit(&paths)) {
            eprintln!("kluis-tray: {e}");
            std::process::exit(1);
        }
        return;
    }
    if let Err(e) = run() {
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

/// The data folder's files (`KLUIS_DATA_DIR`, or the platform's).
fn paths() -> Result<AppPaths, Box<dyn std::error::Error>> {
    Ok(match std::env::var_os("KLUIS_DATA_DIR") {
        Some(dir) => AppPaths::under(&PathBuf::from(dir)),
        None => AppPaths::platform()?,
    })
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let after_window = std::env::args_os().any(|a| a == AFTER_WINDOW_FLAG);
    let paths = paths()?;
    // One kluis-tray per data folder: a second one leaves at once (the first keeps the plans).
    let Some(_instance) = TrayInstance::try_take(&paths)? else {
        tracing::info!("kluis-tray runs already");
        return Ok(());
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
    let left = runtime.block_on(kluis_tray::keeper::run(
        Arc::new(app),
        kluis_tray::keeper::start_window(),
        after_window,
    ));
    tracing::info!(?left, "kluis-tray leaves");
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
