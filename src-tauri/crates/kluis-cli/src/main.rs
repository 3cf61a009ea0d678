//! `kluis`: the command line on kluis-core, for scripts and schedulers.
//!
//! - [`settings`]: flags and `KLUIS_*` environment variables → `ServiceConfig`, history path.
//! - [`commands`]: `environment`, `backup`, `history` and `demo` (a backup from an in-process
//!   simulator), each a thin layer over kluis-core.
//! - [`display`]: the progress bar (only when stderr is a terminal) and the history table.
//!
//! Exit codes: 0 ok, 2 usage/config, 3 authentication failed, 4 permission denied by the
//! api_key, 5 no callback before the timeout, 6 download failed, 130 cancelled, 1 anything
//! else — always with one clear line on stderr, never with a secret in it.

mod commands;
mod display;
mod settings;

use clap::Parser;
use kluis_core::Error;

fn exit_code(error: &Error) -> i32 {
    match error.code() {
        "config" => 2,
        "auth_failed" => 3,
        "permission_denied" => 4,
        "callback_timeout" => 5,
        "download_failed" => 6,
        "cancelled" => 130,
        _ => 1,
    }
}

/// Ctrl-C, or SIGTERM from a scheduler or service manager.
async fn stop_requested() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

fn main() {
    let cli = settings::Cli::parse();
    kluis_https::logging::init("warn");
    // One async thread: a backup is one stream of work, and the download's writer thread takes
    // the second core. Measured: faster than a multi-threaded runtime (fewer cross-thread
    // wake-ups) and a flat peak RSS for any file size (fewer malloc arenas).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kluis: could not start: {e}");
            std::process::exit(1);
        }
    };
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = commands::run(cli) => outcome,
            _ = stop_requested() => Err(Error::Cancelled),
        }
    });
    // An interrupted job was dropped with the select above: its part file is already removed
    // and its history row marked cancelled.
    drop(runtime);
    if let Err(error) = outcome {
        eprintln!("kluis: {error}");
        std::process::exit(exit_code(&error));
    }
}
