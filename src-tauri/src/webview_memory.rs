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
//! shows what the core has read), and the dashboard and search benchmarks stay within their
//! targets without them (docs/performance.md).
//!
//! `KLUIS_WEBKIT_SETTINGS=stock` leaves WebKit's own settings, so that the benchmark can
//! measure what this brings.

use tauri::{Runtime, WebviewWindow};

/// JavaScriptCore's options for the web process, which takes them from its environment — the
/// app's, inherited when WebKit starts it. Set at the start of `run`, before any thread that
/// could read the environment (setting it is not thread-safe); an option the user set is kept.
/// (The programs the app starts inherit it too: kluis-tray, a file manager, a window of its own;
/// only the last runs JavaScriptCore.)
pub fn before_any_thread() {
    if stock() {
        return;
    }
    for name in ["JSC_useDFGJIT", "JSC_useFTLJIT"] {
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
