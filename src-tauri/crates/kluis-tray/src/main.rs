//! `kluis-tray`: see the crate's text. Flags: `--after-window` (a closing window started it:
//! it says once where Kluis went); `--quit` asks the `kluis-tray` that runs to quit, as its
//! menu's *Quit Kluis* does (where no tray icon shows the menu; the Windows setup before it
//! replaces the program), and ends once it has gone (at most a minute). Environment:
//! `KLUIS_DATA_DIR` keeps all files under one folder, as for the window and `kluis`. On Linux,
//! when a package upgrade replaced the program, the new one is run in this process's place.

// No console window on Windows: a closing window or the log-in starts it.
#![cfg_attr(windows, windows_subsystem = "windows")]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kluis_desktop::owner::{BackgroundOwner, HandedOver, TrayInstance, AFTER_WINDOW_FLAG};
use kluis_desktop::{AppPaths, DesktopApp, KeyringStore};
use kluis_reporting::{Alert, DesktopNotifier, Notifier};
use kluis_tray::keeper::{self, Left};
use kluis_tray::program::ProgramFile;

fn main() {
    // First of all, before any thread: the environment is read and changed.
    let handed_over = HandedOver::from_env();
    kluis_private::logging::init("warn");
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
    if let Err(e) = keep_the_plans(handed_over) {
        eprintln!("kluis-tray: {e}");
        // Said where the user looks: a closing window or the login started this process, and
        // nobody reads its output.
        if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            let alert = Alert::background_failed(&e.to_string(), window_language());
            let _ = runtime.block_on(DesktopNotifier.notify(&alert));
        }
        std::process::exit(1);
    }
}

/// The window's language as the settings keep it, else the OS's (the profiles file may be
/// what could not be read).
fn window_language() -> kluis_desktop::Language {
    let kept = AppPaths::from_env().ok().and_then(|paths| {
        let profiles = kluis_desktop::profiles::ProfileStore::open(paths.profiles_file).ok()?;
        profiles.settings().language
    });
    kluis_desktop::Language::or_from_os(kept)
}

/// This data folder's `kluis-tray`, until the keeper leaves; when a package upgrade replaced
/// the program, the new one runs in this process's place, the instance handed over to it.
fn keep_the_plans(handed_over: HandedOver) -> Result<(), Box<dyn std::error::Error>> {
    // The program file as started, first of all. (Its path now, too: once replaced, this
    // process's own link to it names the old file.)
    let program = ProgramFile::this_process();
    let path = program.as_ref().map(|p| p.path().to_path_buf());
    let paths = AppPaths::from_env()?;
    // One kluis-tray per data folder: a second one leaves at once (the first keeps the plans).
    let Some(instance) = TrayInstance::try_take(&paths, handed_over)? else {
        tracing::info!("kluis-tray runs already");
        return Ok(());
    };
    // (The app windows an old kluis-tray started before an upgrade ran this program in its
    // place: its children now.)
    #[cfg(target_os = "linux")]
    kluis_tray::inherited::wait_for_children_at_start();
    if run(&paths, &instance, program)? != Some(Left::Replaced) {
        return Ok(());
    }
    let Some(path) = path else {
        return Ok(());
    };
    let error = run_in_place(&path, &instance);
    // The old program carries on rather than leave the plans to nobody.
    tracing::warn!(%error, "the new kluis-tray did not start; this one keeps the plans");
    run(&paths, &instance, None).map(|_| ())
}

/// Keeps the plans until the keeper leaves, and says why (`None`: it did not start, asked to
/// quit first). `program`: this process's program file, looked at for an upgrade. (The
/// background right and the runtime are let go of on return; the instance is the caller's.)
fn run(
    paths: &AppPaths,
    instance: &TrayInstance,
    program: Option<ProgramFile>,
) -> Result<Option<Left>, Box<dyn std::error::Error>> {
    let after_window = std::env::args_os().any(|a| a == AFTER_WINDOW_FLAG);
    // A window that just closed holds the right until it has ended (its own backups done).
    let _owner = match BackgroundOwner::try_take(paths)? {
        Some(owner) => owner,
        None => {
            tracing::info!("kluis-tray waits for the window to end its work");
            BackgroundOwner::take(paths)?
        }
    };
    // `kluis-tray --quit` while it waited (its socket was not there yet).
    if instance.quit_asked() {
        tracing::info!("kluis-tray was asked to quit before it started");
        return Ok(None);
    }
    // Every backup runs on this runtime, its threads below the desktop's priority (as in the
    // window: kluis_desktop::runtime says why).
    let runtime = kluis_desktop::runtime::background()?;
    let _inside = runtime.enter();
    let save_dir = std::env::var_os("KLUIS_E2E_SAVE_DIR").map(PathBuf::from);
    // Each backup made from the klant as it is then: the window, another process, edits them.
    let app = DesktopApp::builder(paths.clone(), Arc::new(KeyringStore))
        .save_folder(save_dir)
        .fresh_connections()
        .open()?;
    tracing::info!("kluis-tray keeps the plans");
    let looks = keeper::Looks {
        every: look_every(),
        program,
        instance: Some(instance),
    };
    let left = runtime.block_on(keeper::run_looking(
        Arc::new(app),
        keeper::start_window(),
        after_window,
        looks,
    ));
    tracing::info!(?left, "kluis-tray leaves");
    Ok(Some(left))
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
/// waits on), with this one's flags, without `--after-window` (the user saw nothing change),
/// and `instance` kept for it. Returns only when that failed.
#[cfg(unix)]
fn run_in_place(program: &std::path::Path, instance: &TrayInstance) -> String {
    use std::os::unix::process::CommandExt;
    let (name, value) = match instance.keep_across_exec() {
        Ok(handed_over) => handed_over,
        Err(e) => return format!("the instance could not be handed over: {e}"),
    };
    let args = std::env::args_os()
        .skip(1)
        .filter(|a| a != AFTER_WINDOW_FLAG);
    let error = (std::process::Command::new(program).args(args))
        .env(name, value)
        .exec();
    instance.close_on_exec_again();
    error.to_string()
}

/// (Not reached: a replaced program is noticed on Linux only, `program.rs`.)
#[cfg(not(unix))]
fn run_in_place(_program: &std::path::Path, _instance: &TrayInstance) -> String {
    "an upgraded kluis-tray is not run in place on this system".into()
}

/// `--quit`: the `kluis-tray` of this data folder asked to quit, and waited for until it has
/// gone (at most a minute); none running is no error. The request is left where it looks for
/// it, and asked over its socket (Windows: its pipe) too, which it hears at once.
fn quit(paths: &AppPaths) -> Result<(), Box<dyn std::error::Error>> {
    use kluis_desktop::owner::QuitAsked;
    if TrayInstance::ask_to_quit(paths)? == QuitAsked::NoneRuns {
        return Ok(());
    }
    use kluis_desktop::mirror;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let address = mirror::address(paths);
    // Answered once it has gone (a setup replaces its program next), within a bound: a
    // backup it stops first may take a moment.
    let asked = async {
        let asking = mirror::ask(&address, mirror::Request::Quit);
        tokio::time::timeout(std::time::Duration::from_secs(60), asking).await
    };
    match runtime.block_on(asked) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            // Not listening yet: it waits for a closing window to end its work, or an upgrade
            // hands it over. It finds the request left for it before it starts anything.
            tracing::debug!(%e, "kluis-tray does not listen yet");
            eprintln!("kluis-tray is still starting (a closing window is ending its backups) or being updated: it quits as soon as it can, without starting anything.");
        }
        Err(_) => eprintln!(
            "kluis-tray was asked to quit and is still ending its work: it quits as soon as it can."
        ),
    }
    Ok(())
}
