//! The Kluis desktop app's Tauri shell: plugins, state, the window, and commands that each
//! delegate in one line to [`kluis_desktop::DesktopApp`]. Errors cross as `{code, message}`;
//! a backup's progress streams over a `tauri::ipc::Channel` given by the UI per job. The
//! native dialogs are opened from Rust (`dialogs.rs`): no path or program comes from the
//! webview.
//!
//! Running without the window (`tray.rs`, `background.rs`): the tray icon and its menu;
//! closing the window while plans are set leaves them to `kluis-tray` (the small process
//! without a web engine, kluis-tray's crate) and ends this one once its own backups are done
//! (the demo, whose simulator lives in this process, stays in the tray); one instance per data
//! folder (a second start brings the first one's window back); an optional login item.
//!
//! Start-up flags: `--demo` opens the app in demo mode (an in-process simulator);
//! `--hidden` (the login item's) starts `kluis-tray` when plans are set, and no window;
//! `--baseline-window` opens only an empty window (for footprint measurements).
//!
//! What the web engine keeps in memory (`webview_memory.rs`, Linux): a document viewer's cache,
//! no optimising JavaScript compilers.
//!
//! Updates (`updater.rs`, Windows): a newer Kluis that kluis-desktop downloaded and verified
//! is installed through Tauri's updater plugin.
//! Environment: `KLUIS_DATA_DIR` keeps all files under one folder; `KLUIS_E2E_SAVE_DIR` makes
//! every backup land in that folder, `KLUIS_E2E_CERTIFICATE` answers the certificate
//! dialog, `KLUIS_E2E_DIALOG_FOLDER` the folder and save dialogs, `KLUIS_E2E_RECOVERY_KEY`
//! the recovery kit's file dialog and `KLUIS_E2E_IMPORT_FILE` the import file's dialog
//! (end-to-end tests cannot drive a native dialog).

mod background;
/// The command names (one list for build.rs, the handler check and the UI check).
pub mod command_names;
mod commands;
mod dialogs;
mod instance;
mod tray;
#[cfg(windows)]
pub mod updater;
#[cfg(target_os = "linux")]
mod webview_memory;

use std::path::PathBuf;
use std::sync::Arc;

pub use kluis_desktop::LaunchInfo;
use kluis_desktop::{AppPaths, DesktopApp, KeyringStore};
use tauri::{Manager, WebviewUrl, WebviewWindowBuilder};

/// Builds the app's state from the environment (`demo`: the demo app's, on the demo's own
/// folder beside the data folder).
pub fn desktop_app(demo: bool) -> Result<DesktopApp, kluis_desktop::AppError> {
    let paths = AppPaths::from_env()?;
    let save_dir = std::env::var_os("KLUIS_E2E_SAVE_DIR").map(PathBuf::from);
    DesktopApp::builder(paths, Arc::new(KeyringStore))
        .demo(demo)
        .save_folder(save_dir)
        .open()
}

/// The builder with every plugin, command and piece of state, shared by `run` and tests.
pub fn builder<R: tauri::Runtime>(app: DesktopApp, launch: LaunchInfo) -> tauri::Builder<R> {
    with_commands(tauri::Builder::<R>::new(), launch).manage(app)
}

/// `builder`'s plugins and commands, without the app's state (which `run` opens only once it
/// is the one Kluis running).
fn with_commands<R: tauri::Runtime>(
    builder: tauri::Builder<R>,
    launch: LaunchInfo,
) -> tauri::Builder<R> {
    let builder = builder.plugin(tauri_plugin_dialog::init());
    // (Windows only: elsewhere the package manager updates Kluis.)
    #[cfg(windows)]
    let builder = builder.plugin(tauri_plugin_updater::Builder::new().build());
    builder.manage(launch).invoke_handler(commands::handler())
}

/// One Kluis per data folder: the first owns a name on the session bus (Linux), a second
/// start hands its arguments over and ends, and the first shows its window. A data folder of
/// its own (`KLUIS_DATA_DIR`) is another Kluis, with a name of its own; so is the demo (its
/// folder is its own).
fn single_instance<R: tauri::Runtime>(demo: bool) -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_single_instance::Builder::new()
        .callback(|app, _args, _cwd| tray::show_window(app))
        .dbus_id(instance_id(demo))
        .build()
}

/// The name the single instance owns on the bus, less the plugin's ".SingleInstance": the
/// app's identifier, or one of a data folder's own; the demo's ends in ".demo".
fn instance_id(demo: bool) -> String {
    let id: String = match std::env::var_os("KLUIS_DATA_DIR") {
        Some(dir) => {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::hash::DefaultHasher::new();
            dir.hash(&mut hasher);
            format!("nl.kluis.desktop.d{:016x}", hasher.finish())
        }
        // tauri.conf.json's identifier (what the plugin itself would take).
        None => "nl.kluis.desktop".into(),
    };
    match demo {
        true => format!("{id}.demo"),
        false => id,
    }
}

/// The app's context; the demo's under an identifier of its own, so that on Windows too (where
/// the single-instance plugin keys on it) the demo runs beside Kluis, and its web view keeps its
/// storage apart from Kluis's.
fn context(launch: LaunchInfo) -> tauri::Context<tauri::Wry> {
    let mut context = tauri::generate_context!();
    if launch.demo {
        let demo = format!("{}.demo", context.config().identifier);
        context.config_mut().identifier = demo;
    }
    context
}

pub fn run() {
    #[cfg(target_os = "linux")]
    webview_memory::before_any_thread();
    kluis_private::logging::init("warn");
    // Every command and backup runs on this runtime, its threads below the window's priority
    // (kluis_desktop::runtime says why). It lives as long as the process.
    let runtime = match kluis_desktop::runtime::background() {
        Ok(runtime) => Box::leak(Box::new(runtime)),
        Err(e) => {
            eprintln!("kluis-app: could not start: {e}");
            std::process::exit(1);
        }
    };
    tauri::async_runtime::set(runtime.handle().clone());
    let args: Vec<String> = std::env::args().collect();
    let launch = LaunchInfo {
        demo: args.iter().any(|a| a == "--demo"),
    };
    let baseline = args.iter().any(|a| a == "--baseline-window");
    let hidden = args.iter().any(|a| a == kluis_desktop::HIDDEN_FLAG);
    // The single instance comes first: a second start hands over and ends before it opens
    // anything (the history, the staging folder) of the Kluis that runs — unless that one is
    // leaving, which is waited for.
    instance::wait_while_leaving(&format!("{}.SingleInstance", instance_id(launch.demo)));
    // Started at login with plans set: `kluis-tray` keeps them, and this (large) process ends
    // before it builds a window.
    if hidden && !launch.demo && background::left_to_tray_at_login() {
        return;
    }
    let first = tauri::Builder::<tauri::Wry>::new().plugin(single_instance(launch.demo));
    with_commands(first, launch)
        .plugin(
            tauri_plugin_autostart::Builder::new()
                .app_name("Kluis")
                .arg(kluis_desktop::HIDDEN_FLAG)
                .build(),
        )
        .on_window_event(tray::on_window_event)
        .setup(move |app| {
            match desktop_app(launch.demo) {
                Ok(desktop) => app.manage(desktop),
                Err(e) => {
                    eprintln!("kluis-app: {e}");
                    std::process::exit(1);
                }
            };
            let dialogs = dialogs::TauriDialogs {
                handle: app.handle().clone(),
                certificate: std::env::var_os("KLUIS_E2E_CERTIFICATE").map(PathBuf::from),
                folder: std::env::var_os("KLUIS_E2E_DIALOG_FOLDER").map(PathBuf::from),
                import_file: std::env::var_os("KLUIS_E2E_IMPORT_FILE").map(PathBuf::from),
                recovery_key: std::env::var_os("KLUIS_E2E_RECOVERY_KEY").map(PathBuf::from),
            };
            app.state::<DesktopApp>().set_dialogs(Arc::new(dialogs));
            // (The demo never becomes a login item: it keeps kluis-desktop's refusal.)
            if !launch.demo {
                (app.state::<DesktopApp>().background)
                    .set_login_start(Arc::new(tray::AutostartLogin(app.handle().clone())));
            }
            #[cfg(windows)]
            if !launch.demo {
                (app.state::<DesktopApp>().updates)
                    .set_installer(Arc::new(updater::PluginInstaller::new(app.handle().clone())));
            }
            // The plans, the tray icon and the rest of the background work: this process's
            // when it holds the data folder's background right; while `kluis-tray` holds it
            // (it kept the plans while the window was closed), this window is only the
            // window, and takes them over only if that one leaves.
            background::own_when_free(app.handle(), tray::start_background);
            let page = if baseline {
                "baseline.html"
            } else {
                "index.html"
            };
            // Started at login: in the tray only, if there is something to run unseen.
            let visible = !(hidden
                && app
                    .state::<DesktopApp>()
                    .background
                    .keep_running_when_closed());
            // No larger than the screen's usable area (a laptop less its taskbar).
            let usable = app.primary_monitor().ok().flatten().map(|monitor| {
                let area = monitor.work_area().size.to_logical::<f64>(monitor.scale_factor());
                (area.width, area.height)
            });
            let size = kluis_desktop::window::first_size(usable);
            #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
            let window = WebviewWindowBuilder::new(app, "main", WebviewUrl::App(page.into()))
                .visible(visible)
                .title(if launch.demo {
                    "Kluis — demo"
                } else {
                    "Kluis"
                })
                .inner_size(size.inner.0, size.inner.1)
                .min_inner_size(size.smallest.0, size.smallest.1)
                .build()?;
            #[cfg(target_os = "linux")]
            if !baseline {
                webview_memory::on_window(&window);
            }
            Ok(())
        })
        .build(context(launch))
        .unwrap_or_else(|e| {
            // Said, not a panic: the window system is missing, or another Kluis would not
            // take over.
            eprintln!("kluis-app: Kluis could not start ({e}). Start it again; if this stays, restart the computer.");
            std::process::exit(1);
        })
        .run(|handle, event| {
            // Running jobs let go of their files before the process ends; resumable ones are
            // finished at the next start.
            if let tauri::RunEvent::Exit = event {
                tauri::async_runtime::block_on(handle.state::<DesktopApp>().shutdown());
            }
        });
}
