//! What the window's web engine keeps in memory (WebKitGTK, Linux), for a window that may stay
//! open on an office PC all day showing one local page: the web context caches as a document
//! viewer does — no memory cache of pages or resources for going back and forth (there is one
//! page, and its files are in the binary). Measured (`tests/bench/window-idle.sh`): the
//! window's growth over 30 idle minutes fell from 3.6 % to 2.5 %.
//!
//! WebKit's memory-pressure settings would be the other lever, but the web process takes them
//! only when its context is made, which wry does without them (the network process's, which can
//! be set, changed nothing measurable: it holds 62 MiB, 51 of them program files).
//! `KLUIS_WEBKIT_SETTINGS=stock` leaves WebKit's own settings, so that the benchmark can
//! measure what this brings.

use tauri::{Runtime, WebviewWindow};

/// The window's web context caches as a document viewer does.
pub fn on_window<R: Runtime>(window: &WebviewWindow<R>) {
    if std::env::var_os("KLUIS_WEBKIT_SETTINGS").is_some_and(|v| v == "stock") {
        return;
    }
    let _ = window.with_webview(|webview| {
        use webkit2gtk::{CacheModel, WebContextExt, WebViewExt};
        if let Some(context) = webview.inner().context() {
            context.set_cache_model(CacheModel::DocumentViewer);
        }
    });
}
