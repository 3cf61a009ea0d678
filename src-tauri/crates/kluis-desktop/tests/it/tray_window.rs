//! A window opened while `kluis-tray` runs the plans (two apps on one data folder, as the two
//! processes are): it shows kluis-tray's backups as its own — where one stands when the window
//! connects, then each event to its end — and its *Cancel* ends one there (`mirror`, over a real
//! Unix socket — a named pipe in the Windows test binary under Wine — against the in-process
//! demo simulator).

use std::sync::Arc;

use kluis_core::Stage;
use kluis_desktop::mirror::{self, Mirror, Request};
use kluis_desktop::{AppJobEvent, DesktopApp, PlannedEvent};
use tokio::sync::mpsc;

use crate::common::app;

/// What a channel of planned events says next about job `job` (others skipped).
async fn next_of(rx: &mut mpsc::UnboundedReceiver<PlannedEvent>, job: &str) -> AppJobEvent {
    loop {
        let event = rx.recv().await.expect("more events");
        if event.job_id == job {
            return event.event;
        }
    }
}

/// kluis-tray's side: `tray`'s planned backups served to windows (as kluis-tray's keeper does);
/// its own view of them comes to the returned channel.
fn serve(tray: &Arc<DesktopApp>) -> mpsc::UnboundedReceiver<PlannedEvent> {
    let mirror = Mirror::new();
    let (seen_tx, seen) = mpsc::unbounded_channel();
    let served = mirror.sink();
    // Recorded by the mirror before the test sees it: a window that connects once the test
    // saw a stage hears at least that stage (the other order failed on a loaded machine).
    tray.plans.watch_planned(Arc::new(move |e: PlannedEvent| {
        served(e.clone());
        let _ = seen_tx.send(e);
    }));
    let listener = mirror::Listener::bind(&mirror::address(tray.paths())).unwrap();
    let asked = {
        let tray = tray.clone();
        Arc::new(move |request| match request {
            Request::Cancel(job) => {
                let tray = tray.clone();
                tokio::spawn(async move { tray.backups.cancel_backup(job).await });
            }
            Request::CancelAll => {
                tray.plans.cancel_all();
            }
            Request::Quit => {}
        })
    };
    tokio::spawn(mirror.serve(listener, asked));
    seen
}

/// Where a backup stands when the window connects, its Cancel from the window, and a backup
/// started while it follows: all as if the window ran them.
#[tokio::test(flavor = "multi_thread")]
async fn a_window_shows_kluis_trays_backups_and_cancels_them() {
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let tray = Arc::new(app(&dir, Some(folder.path().to_path_buf())));
    tray.accounts.start_demo().await.unwrap();
    let mut seen = serve(&tray);

    // A backup under way before the window opens.
    let job = tray.plans.start_planned("demo").await.unwrap().to_string();
    let accepted = AppJobEvent::Stage {
        stage: Stage::Accepted,
    };
    while next_of(&mut seen, &job).await != accepted {}

    // The window: the same folder, another app; it watches planned backups, then follows.
    let window = Arc::new(app(&dir, Some(folder.path().to_path_buf())));
    let (heard_tx, mut heard) = mpsc::unbounded_channel();
    window
        .plans
        .watch_planned(Arc::new(move |e| drop(heard_tx.send(e))));
    let following = tokio::spawn({
        let window = window.clone();
        async move { window.follow_tray(|| true).await }
    });
    let first = next_of(&mut heard, &job).await;
    assert!(
        matches!(first, AppJobEvent::Stage { stage } if stage >= Stage::Accepted),
        "the window first hears where the backup stands, not its start: {first:?}"
    );

    // Its Cancel goes to kluis-tray, which ends the backup; both see it end cancelled.
    let id = job.parse().unwrap();
    window
        .backups
        .cancel_backup(id)
        .await
        .expect("sent to kluis-tray");
    let ended = loop {
        let event = next_of(&mut heard, &job).await;
        if matches!(
            event,
            AppJobEvent::Failed { .. } | AppJobEvent::Saved { .. }
        ) {
            break event;
        }
    };
    assert!(
        matches!(&ended, AppJobEvent::Failed { code, .. } if code == "cancelled"),
        "the window's Cancel ended kluis-tray's backup: {ended:?}"
    );

    // A backup started once the window follows: every event, to its end.
    let job = tray.plans.start_planned("demo").await.unwrap().to_string();
    let mut stages = Vec::new();
    loop {
        match next_of(&mut heard, &job).await {
            AppJobEvent::Stage { stage } => stages.push(stage),
            AppJobEvent::Saved { .. } => break,
            AppJobEvent::Failed { code, message } => panic!("{code}: {message}"),
            _ => {}
        }
    }
    assert_eq!(stages.first(), Some(&Stage::Requested), "{stages:?}");
    following.abort();
}

/// The language chosen in the window is what `kluis-tray` (another process, another copy of the
/// profiles file) speaks in its menu and tooltip from its next look. Said once only: the same
/// language again writes nothing.
#[test]
fn the_window_s_language_is_the_tray_s() {
    use kluis_desktop::{Language, TrayAction};
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let window = app(&dir, Some(folder.path().to_path_buf()));
    let tray = app(&dir, Some(folder.path().to_path_buf()));
    assert_eq!(
        tray.settings.current().language(),
        Language::En,
        "as the tests start"
    );
    window.settings.set_language(Language::Nl).unwrap();
    let spoken = tray.settings.current().language();
    assert_eq!(spoken, Language::Nl);
    assert_eq!(TrayAction::Quit.label(spoken), "Kluis afsluiten");
    assert_eq!(
        TrayAction::plans_said(true, spoken),
        "Uw plannen zijn gepauzeerd."
    );
    // (A mark a rewrite would drop: the file as Kluis writes it, and a blank line after it.)
    let file = &window.paths().profiles_file;
    let marked = format!("{}\n\n", std::fs::read_to_string(file).unwrap().trim_end());
    std::fs::write(file, &marked).unwrap();
    window.settings.set_language(Language::Nl).unwrap();
    let again = std::fs::read_to_string(file).unwrap();
    assert_eq!(again, marked, "the same language is not written again");
    window.settings.set_language(Language::En).unwrap();
    assert_eq!(
        TrayAction::Quit.label(tray.settings.current().language()),
        "Quit Kluis"
    );
}
