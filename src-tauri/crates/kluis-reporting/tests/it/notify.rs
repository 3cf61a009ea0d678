//! Desktop notifications reach a real notification service over D-Bus: this test owns
//! `org.freedesktop.Notifications` on the session bus (kluis-sim's stand-in) and records what
//! arrives. It needs a private session bus of its own (run-all runs it under
//! `dbus-run-session`), hence ignored by a plain `cargo test`.
#![cfg(target_os = "linux")]

use kluis_core::Code;
use kluis_reporting::{Alert, DesktopNotifier, Failed, FailedStep, Notifier};
use tokio::sync::mpsc;

/// A failure summary sent by the desktop notifier arrives at the session's notification
/// service with Kluis's name, its title and its text.
#[tokio::test]
#[ignore = "needs a private D-Bus session: run under dbus-run-session (tests/run-all.sh)"]
async fn a_failure_summary_reaches_the_notification_service() {
    let (tx, mut heard) = mpsc::unbounded_channel();
    let _bus = kluis_sim::notifications::serve(tx)
        .await
        .expect("a session bus (run under dbus-run-session)");

    let failures = [
        Failed {
            klant: "Bakker B.V.".into(),
            code: Code::Network,
            message: "The service could not be reached.".into(),
            step: FailedStep::Backup,
        },
        Failed {
            klant: "Jansen & Zn".into(),
            code: Code::AuthFailed,
            message: "Sign-in refused.".into(),
            step: FailedStep::Backup,
        },
    ];
    let alert = Alert::failed(&failures, kluis_profiles::Language::En).unwrap();
    DesktopNotifier.notify(&alert).await.expect("shown");
    let kluis_sim::notifications::Notification { app, summary, body } = heard.recv().await.unwrap();
    assert_eq!(app, "Kluis");
    assert_eq!(summary, "2 backups failed");
    assert_eq!(body, "Bakker B.V. (network), Jansen & Zn (auth_failed)");
}
