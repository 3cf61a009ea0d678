//! kluis-tray: Kluis while its window is closed — the plans, the tray icon and the
//! notifications in a small process without a web engine. The window (`kluis-app`, a
//! web-engine process of hundreds of MiB: WebKitGTK, WebView2) ends when it is closed; this
//! process keeps what must go on, and starts the window again when asked.
//!
//! Parts and data flow:
//! - [`keeper`]: the process's life. Once it holds the data folder's background right
//!   (`kluis_desktop::owner`: a window that just closed lets go of it as it ends), it opens the
//!   same core the window and `kluis run-due` use (`kluis_desktop::DesktopApp`, one history and
//!   one profiles file), runs its background work (plans, copies left to make, overdue klanten,
//!   the office's report, updates) and does what the tray menu asks (`TrayAction`): *Open
//!   Kluis* starts the window's program, *Backup all now*, *Pause plans*, *Quit Kluis*. It
//!   leaves when no plan is set and no backup runs: a guest gives back what it does not need.
//! - [`sni`] (Linux): the tray icon, a StatusNotifierItem over D-Bus (no GTK); its menu's clicks
//!   go to the keeper over a channel, its texts in the window's language (the settings'
//!   `language`, read as the menu opens). A desktop without a tray host (stock GNOME without its
//!   extension) shows none: the keeper says so in a notification, and the applications menu's
//!   Kluis entry opens the window. `win_tray` (Windows): the same icon and menu in the
//!   notification area, on a thread running the Win32 message loop. Both draw `icon_png`.
//! - [`setup_update`] (Windows): how this process installs an update with the window closed —
//!   the verified setup started with `/S /D=` its folder, which quits it and starts the new
//!   one; refused while a window follows it or another of Kluis's programs runs.
//! - `build.rs` (Windows): `kluis-tray.exe`'s own icon, version information and manifest.
//! - [`program`] (noticed on Linux; on Windows the setup stops and starts kluis-tray): whether
//!   this process's program file was replaced (a package upgrade); the
//!   keeper then leaves at its next look with no backup running, and `main.rs` runs the new
//!   program in this process's place, the instance handed over; [`inherited`] (Linux): the
//!   windows the old program started, waited for by the new one.
//! - `main.rs`: one `kluis-tray` per data folder (`kluis_desktop::owner::TrayInstance`, whose
//!   `--quit` request the keeper also looks for: one sent before its socket — on Windows its
//!   pipe — listened), the runtime, the keyring.

#[cfg(any(target_os = "linux", windows))]
mod icon_png;
#[cfg(target_os = "linux")]
pub mod inherited;
pub mod keeper;
pub mod program;
pub mod setup_update;
#[cfg(target_os = "linux")]
pub mod sni;
#[cfg(windows)]
pub mod win_tray;
