//! The tray icon on Linux: a StatusNotifierItem with its menu over D-Bus (ksni), read by the
//! desktop's tray host (KDE, Xfce, Cinnamon, MATE, GNOME with its AppIndicator extension). No
//! GTK is loaded: that is what keeps this process small. A click on the menu sends its
//! [`TrayAction`] to the keeper; the "Pause plans" check and the language are read from the
//! profiles file each time the menu opens, so a pause or a language set in the window or by
//! `kluis` shows too; the tooltip follows at the keeper's next look.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kluis_desktop::{DesktopApp, Language, TrayAction};
use ksni::TrayMethods;
use tokio::sync::mpsc::UnboundedSender;

/// Longest wait for the icon's service to take a refresh (it tells the host over D-Bus).
const REFRESH_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// The icon in the tray (see the module's text).
pub struct TrayIcon {
    handle: ksni::Handle<KluisTray>,
    /// Whether a tray host shows it (false on a desktop without one).
    shown: Arc<AtomicBool>,
}

impl TrayIcon {
    /// Whether a tray host shows the icon now.
    pub fn shown(&self) -> bool {
        self.shown.load(Ordering::SeqCst)
    }

    /// Whether the session bus is gone (the desktop session ended: a log-out). The icon's
    /// connection cannot tell (ksni keeps waiting on it), so the bus's socket is tried.
    pub fn session_ended(&self) -> bool {
        std::env::var("DBUS_SESSION_BUS_ADDRESS").is_ok_and(|address| !bus_answers(&address))
    }

    /// The menu and the tooltip read again (after an action changed what they show, and at
    /// each of the keeper's looks); the host is told of what changed.
    pub async fn refresh(&self) {
        // (Bounded: a session bus that stopped answering holds the keeper's loop no longer.)
        let update = self.handle.update(|tray| tray.read_paused());
        let _ = tokio::time::timeout(REFRESH_WITHIN, update).await;
    }

    /// The icon taken away (the keeper leaves).
    pub async fn remove(self) {
        self.handle.shutdown().await;
    }
}

/// Puts the icon up; its clicks go to `clicks`. `None` when there is no session bus at all (a
/// headless machine): the keeper runs without an icon. Without a tray host the icon waits for
/// one (its [`TrayIcon::shown`] is false until then).
pub async fn show(clicks: UnboundedSender<TrayAction>, app: Arc<DesktopApp>) -> Option<TrayIcon> {
    let shown = Arc::new(AtomicBool::new(true));
    let mut tray = KluisTray {
        clicks,
        app,
        paused: false,
        shown: shown.clone(),
        icon: icon(),
    };
    tray.read_paused();
    // A tray host that is not there yet (a desktop still starting at login) may come later:
    // the icon waits for it rather than giving up.
    match tray.assume_sni_available(true).spawn().await {
        Ok(handle) => Some(TrayIcon { handle, shown }),
        Err(e) => {
            tracing::info!(%e, "no tray icon: no session bus");
            None
        }
    }
}

/// Whether a D-Bus daemon listens at `address` (its `unix:path=` or `unix:abstract=` socket
/// takes a connection). An address of another kind counts as answering: nothing is known.
fn bus_answers(address: &str) -> bool {
    use std::os::unix::net::{SocketAddr, UnixStream};
    for part in address.split(';') {
        let Some(options) = part.strip_prefix("unix:") else {
            return true;
        };
        for option in options.split(',') {
            let socket = if let Some(path) = option.strip_prefix("path=") {
                SocketAddr::from_pathname(path)
            } else if let Some(name) = option.strip_prefix("abstract=") {
                use std::os::linux::net::SocketAddrExt;
                SocketAddr::from_abstract_name(name.as_bytes())
            } else {
                continue;
            };
            match socket {
                Ok(socket) if UnixStream::connect_addr(&socket).is_ok() => return true,
                Ok(_) => {}
                Err(_) => return true,
            }
        }
    }
    false
}

struct KluisTray {
    clicks: UnboundedSender<TrayAction>,
    app: Arc<DesktopApp>,
    /// "Pause plans" checked.
    paused: bool,
    shown: Arc<AtomicBool>,
    icon: Vec<ksni::Icon>,
}

impl KluisTray {
    fn read_paused(&mut self) {
        self.paused = self.app.plans.plans_paused();
    }

    /// The window's language, as the profiles file says now (the menu is asked for each time
    /// it opens, so a language chosen in the window meanwhile is spoken at once).
    fn language(&self) -> Language {
        self.app.settings.language()
    }

    fn send(&self, action: TrayAction) {
        let _ = self.clicks.send(action);
    }
}

impl ksni::Tray for KluisTray {
    fn id(&self) -> String {
        "kluis".into()
    }

    fn title(&self) -> String {
        "Kluis".into()
    }

    fn icon_pixmap(&self) -> Vec<ksni::Icon> {
        self.icon.clone()
    }

    fn tool_tip(&self) -> ksni::ToolTip {
        ksni::ToolTip {
            title: "Kluis".into(),
            description: TrayAction::plans_said(self.paused, self.language()).into(),
            ..Default::default()
        }
    }

    /// A left click opens the window, as the menu's first entry does.
    fn activate(&mut self, _x: i32, _y: i32) {
        self.send(TrayAction::Open);
    }

    fn menu_about_to_show(&mut self) {
        self.read_paused();
    }

    fn menu(&self) -> Vec<ksni::MenuItem<Self>> {
        use ksni::menu::{CheckmarkItem, StandardItem};
        let language = self.language();
        let item = |action: TrayAction| -> ksni::MenuItem<Self> {
            StandardItem {
                label: action.label(language).into(),
                activate: Box::new(move |tray: &mut Self| tray.send(action)),
                ..Default::default()
            }
            .into()
        };
        vec![
            item(TrayAction::Open),
            item(TrayAction::BackupAll),
            CheckmarkItem {
                label: TrayAction::PausePlans.label(language).into(),
                checked: self.paused,
                activate: Box::new(|tray: &mut Self| {
                    // As the plans are now (a host may not have said the menu opened).
                    tray.read_paused();
                    tray.send(TrayAction::pause_or_resume(tray.paused))
                }),
                ..Default::default()
            }
            .into(),
            ksni::MenuItem::Separator,
            item(TrayAction::Quit),
        ]
    }

    fn watcher_online(&self) {
        self.shown.store(true, Ordering::SeqCst);
    }

    /// No tray host (now): the icon waits for one, and the keeper knows it is not seen.
    fn watcher_offline(&self, reason: ksni::OfflineReason) -> bool {
        tracing::info!(?reason, "no tray host shows Kluis's icon");
        self.shown.store(false, Ordering::SeqCst);
        true
    }
}

/// The icon as ARGB32 in network byte order, as StatusNotifierItem carries it (none when the
/// PNG cannot be read: the host shows its own placeholder).
fn icon() -> Vec<ksni::Icon> {
    let Some((rgba, width, height)) = crate::icon_png::rgba() else {
        return Vec::new();
    };
    let data = (rgba.chunks_exact(4))
        .flat_map(|p| [p[3], p[0], p[1], p[2]])
        .collect();
    vec![ksni::Icon {
        width: width as i32,
        height: height as i32,
        data,
    }]
}
