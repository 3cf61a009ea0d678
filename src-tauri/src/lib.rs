//! The Kluis desktop app's Tauri shell: plugins, state, the window, and commands that each
//! delegate in one line to [`kluis_desktop::DesktopApp`]. Errors cross as `{code, message}`;
//! a backup's progress streams over a `tauri::ipc::Channel` given by the UI per job. The
//! native dialogs are opened from Rust (`dialogs.rs`): no path or program comes from the
//! webview.
//!
//! Start-up flags: `--demo` opens the app in demo mode (an in-process simulator);
//! `--baseline-window` opens only an empty window (for footprint measurements).
//! Environment: `KLUIS_DATA_DIR` keeps all files under one folder; `KLUIS_E2E_SAVE_DIR` makes
//! every backup land in that folder and `KLUIS_E2E_CERTIFICATE` answers the certificate
//! dialog (end-to-end tests cannot drive a native dialog).

/// The command names (one list for build.rs, the handler check and the UI check).
pub mod command_names;
mod commands;
mod dialogs;

use std::path::PathBuf;
use std::sync::Arc;

pub use kluis_desktop::LaunchInfo;
use kluis_desktop::{AppPaths, DesktopApp, KeyringStore};
use tauri::{Manager, WebviewUrl, WebviewWindowBuilder};

/// Builds the app's state from the environment.
pub fn desktop_app() -> Result<DesktopApp, kluis_desktop::AppError> {
    let paths = match std::env::var_os("KLUIS_DATA_DIR") {
        Some(dir) => AppPaths::under(&PathBuf::from(dir)),
        None => AppPaths::platform()?,
    };
    let save_dir = std::env::var_os("KLUIS_E2E_SAVE_DIR").map(PathBuf::from);
    DesktopApp::open(paths, Arc::new(KeyringStore), save_dir)
}

/// The builder with every plugin, command and piece of state, shared by `run` and tests.
pub fn builder<R: tauri::Runtime>(app: DesktopApp, launch: LaunchInfo) -> tauri::Builder<R> {
    tauri::Builder::<R>::new()
        .plugin(tauri_plugin_dialog::init())
        .manage(app)
        .manage(launch)
        .invoke_handler(commands::handler())
}

pub fn run() {
    kluis_https::logging::init("warn");
    let args: Vec<String> = std::env::args().collect();
    let launch = LaunchInfo {
        demo: args.iter().any(|a| a == "--demo"),
    };
    let baseline = args.iter().any(|a| a == "--baseline-window");
    let app = match desktop_app() {
        Ok(app) => app,
        Err(e) => {
            eprintln!("kluis-app: {e}");
            std::process::exit(1);
        }
    };
    builder::<tauri::Wry>(app, launch)
        .setup(move |app| {
            let dialogs = dialogs::TauriDialogs {
                handle: app.handle().clone(),
                certificate: std::env::var_os("KLUIS_E2E_CERTIFICATE").map(PathBuf::from),
            };
            app.state::<DesktopApp>().set_dialogs(Arc::new(dialogs));
            // The plans run as long as the app does.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                handle.state::<DesktopApp>().run_plans().await;
            });
            // And so does the look for klanten that became overdue (told as a notification).
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                handle.state::<DesktopApp>().watch_overdue().await;
            });
            let page = if baseline {
                "baseline.html"
            } else {
                "index.html"
            };
            WebviewWindowBuilder::new(app, "main", WebviewUrl::App(page.into()))
                .title(if launch.demo {
                    "Kluis — demo"
                } else {
                    "Kluis"
                })
                .inner_size(1100.0, 760.0)
                .min_inner_size(720.0, 520.0)
                .build()?;
            Ok(())
        })
        .build(tauri::generate_context!())
        .expect("the Kluis window could not be opened")
        .run(|handle, event| {
            // Running jobs let go of their files before the process ends; resumable ones are
            // finished at the next start.
            if let tauri::RunEvent::Exit = event {
                tauri::async_runtime::block_on(handle.state::<DesktopApp>().shutdown());
            }
        });
}
