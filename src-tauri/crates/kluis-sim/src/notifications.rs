//! A stand-in for the desktop's notification service (`org.freedesktop.Notifications` on
//! the D-Bus session bus), which records what Kluis shows: for tests run in a private session
//! (`dbus-run-session`), where no desktop runs one. Linux only, as that service is.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::Serialize;
use tokio::sync::mpsc;

/// One notification as it arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notification {
    pub app: String,
    pub summary: String,
    pub body: String,
}

struct Daemon {
    heard: mpsc::UnboundedSender<Notification>,
    next_id: AtomicU32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Daemon {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: HashMap<String, zbus::OwnedVariant>,
        _expire_timeout: i32,
    ) -> u32 {
        let _ = self.heard.send(Notification {
            app: app_name,
            summary,
            body,
        });
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn close_notification(&self, _id: u32) {}

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("kluis-sim".into(), "kluis".into(), "1".into(), "1.2".into())
    }
}

/// Owns the notification service's name on the session bus until the returned connection is
/// dropped; each notification shown meanwhile goes to `heard`.
pub async fn serve(heard: mpsc::UnboundedSender<Notification>) -> zbus::Result<zbus::Connection> {
    let daemon = Daemon {
        heard,
        next_id: AtomicU32::new(0),
    };
    zbus::connection::Builder::session()
        .name("org.freedesktop.Notifications")
        .serve_at("/org/freedesktop/Notifications", daemon)
        .build()
        .await
}
