//! What the window's web engine keeps in memory (WebKitGTK, Linux), for a window that may stay
//! open on an office PC all day showing one local page: the web context caches as a document
//! viewer does — no memory cache of pages or resources for going back and forth (there is one
//! page, and its files are in the binary). Measured (`tests/bench/window-idle.sh`): the
//! window's growth over 30 idle minutes fell from 3.6 % to 2.5 %.
//!
//! WebKit's memory-pressure settings would be the other lever, but the web process takes them
//! only when its context is made, which wry does without them (the network process's, which can
//! be set, changed nothing measurable: it holds 62 MiB, 51 of them program files).
//!
//! The page's script runs without JavaScriptCore's two optimising compilers (DFG and FTL; its
//! interpreter and baseline JIT stay): the dashboard's once-a-minute refresh made them compile
//! its hot functions, which paged in the compilers' code and kept their output — 8 MiB of the
//! web process, for code that runs a few milliseconds a minute. The page's work is small (it
//! shows what the core has read): in the search benchmark of 1,000 klanten the figures with and
//! without them overlap run by run (a keystroke 19–34 ms median with, 22–34 without); without
//! any JIT the dashboard took twice as long (docs/performance.md).
//!
//! `KLUIS_WEBKIT_SETTINGS=stock` leaves WebKit's own settings, so that the benchmark can
//! measure what this brings.

use tauri::{Runtime, WebviewWindow};

/// JavaScriptCore's options for the web process, which takes them from its environment — the
/// app's, inherited when WebKit starts it. Set at the start of `run`, before any thread that
/// could read the environment (setting it is not thread-safe); an option the user set is kept,
/// and the empty window the benchmarks measure beside Kluis's runs no script and gets none.
/// (kluis-tray, started by the window, inherits them and passes them to the window it starts;
/// a file manager is started without them: `kluis_desktop::open`.)
pub fn before_any_thread() {
    if stock() || std::env::args().any(|a| a == "--baseline-window") {
        return;
    }
    for name in kluis_desktop::window::SCRIPT_ENGINE_OPTIONS {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, "false");
        }
    }
}

fn stock() -> bool {
    std::env::var_os("KLUIS_WEBKIT_SETTINGS").is_some_and(|v| v == "stock")
}

/// The window's web context caches as a document viewer does.
pub fn on_window<R: Runtime>(window: &WebviewWindow<R>) {
    if stock() {
        return;
    }
    let _ = window.with_webview(|webview| {
        use webkit2gtk::{CacheModel, WebContextExt, WebViewExt};
        if let Some(context) = webview.inner().context() {
            context.set_cache_model(CacheModel::DocumentViewer);
        }
    });
}
