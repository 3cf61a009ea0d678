//! `kluis-tray`: see the crate's text. Flags: `--after-window` (a closing window started it:
//! it says once where Kluis went). Environment: `KLUIS_DATA_DIR` keeps all files under one
//! folder, as for the window and `kluis`.

use std::path::PathBuf;
use std::sync::Arc;

use kluis_desktop::owner::{BackgroundOwner, TrayInstance, AFTER_WINDOW_FLAG};
use kluis_desktop::{AppPaths, DesktopApp, KeyringStore};

fn main() {
    kluis_private::logging::init("warn");
    if let Err(e) = run() {
        eprintln!("kluis-tray: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let after_window = std::env::args().any(|a| a == AFTER_WINDOW_FLAG);
    let paths = match std::env::var_os("KLUIS_DATA_DIR") {
        Some(dir) => AppPaths::under(&PathBuf::from(dir)),
        None => AppPaths::platform()?,
    };
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
    let app = DesktopApp::builder(paths, Arc::new(KeyringStore))
        .save_folder(save_dir)
        .open()?;
    let left = runtime.block_on(kluis_tray::keeper::run(
        Arc::new(app),
        kluis_tray::keeper::start_window(),
        after_window,
    ));
    tracing::info!(?left, "kluis-tray leaves");
    Ok(())
}
