//! Desktop notifications reach a real notification service over D-Bus: this test owns
//! `org.freedesktop.Notifications` on the session bus and records what arrives. It needs a
//! private session bus of its own (run-all runs it under `dbus-run-session`), hence ignored
//! by a plain `cargo test`.
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::sync::Mutex;

use kluis_core::Code;
use kluis_profiles::{Alert, DesktopNotifier, Failed, Notifier};
use tokio::sync::mpsc;

/// The stand-in notification daemon: each Notify call's summary and body.
struct Daemon {
    heard: mpsc::UnboundedSender<(String, String, String)>,
    next_id: Mutex<u32>,
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
        let _ = self.heard.send((app_name, summary, body));
        let mut id = self.next_id.lock().unwrap();
        *id += 1;
        *id
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("stand-in".into(), "kluis".into(), "1".into(), "1.2".into())
    }
}

/// A failure summary sent by the desktop notifier arrives at the session's notification
/// service with Kluis's name, its title and its text.
#[tokio::test]
#[ignore = "needs a private D-Bus session: run under dbus-run-session (tests/run-all.sh)"]
async fn a_failure_summary_reaches_the_notification_service() {
    let (tx, mut heard) = mpsc::unbounded_channel();
    let daemon = Daemon {
        heard: tx,
        next_id: Mutex::new(0),
    };
    let _bus = zbus::connection::Builder::session()
        .name("org.freedesktop.Notifications")
        .serve_at("/org/freedesktop/Notifications", daemon)
        .build()
        .await
        .expect("a session bus (run under dbus-run-session)");

    let failures = [
        Failed {
            klant: "Bakker B.V.".into(),
            code: Code::Network,
            message: "The service could not be reached.".into(),
        },
        Failed {
            klant: "Jansen & Zn".into(),
            code: Code::AuthFailed,
            message: "Sign-in refused.".into(),
        },
    ];
    let alert = Alert::failed(&failures).unwrap();
    DesktopNotifier.notify(&alert).await.expect("shown");
    let (app, summary, body) = heard.recv().await.unwrap();
    assert_eq!(app, "Kluis");
    assert_eq!(summary, "2 backups failed");
    assert_eq!(body, "Bakker B.V. (network), Jansen & Zn (auth_failed)");
}
