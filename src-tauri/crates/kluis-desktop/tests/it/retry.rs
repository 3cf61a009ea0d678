//! Backup all and plans try a klant again after a passing failure (the service answering 500
//! to the POST), as one job the window follows, before it counts as failed; Cancel all
//! reaches a klant while it waits to try again — against a simulator over real TLS.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use kluis_core::engine::Retry;
use kluis_desktop::{AppJobEvent, DesktopApp, MemoryStore, PlannedEvent};
use kluis_sim::{Sim, SimConfig};
use tokio::sync::mpsc;

struct Office {
    sim: Sim,
    app: DesktopApp,
    events: mpsc::UnboundedReceiver<PlannedEvent>,
    told: mpsc::UnboundedReceiver<kluis_reporting::Alert>,
    _dirs: (
        tempfile::TempDir,
        tempfile::TempDir,
        tempfile::NamedTempFile,
    ),
}

/// The app with one klant of its own against a simulator whose first `failures` POSTs answer
/// 500, backups through webhook.site's stand-in into a save folder, tried again as `retry`
/// says; the window's planned events and the notifications come to the test.
async fn office(failures: u32, retry: Retry) -> Office {
    let mut config = SimConfig::default();
    config.faults.backup_failures_after_start = failures;
    config.faults.callback_delay = Duration::from_millis(100);
    let sim = Sim::start(config).await.unwrap();
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), sim.ca_pem()).unwrap();
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (tx, told) = mpsc::unbounded_channel();
    let app = DesktopApp::builder(
        crate::common::english_under(dir.path()),
        Arc::new(MemoryStore::default()),
    )
    .save_folder(Some(folder.path().to_path_buf()))
    .notifier(Arc::new(common::Told(tx)), Duration::from_millis(100))
    .webhook_site(sim.webhook_site_url())
    .retry(retry)
    .open()
    .unwrap();
    // The simulator's CA, trusted as a user does: "Trust a certificate" on the profile.
    app.set_dialogs(common::Chooses::new(ca.path()));
    let profile = app
        .accounts
        .save_profile(common::office(&sim, None))
        .await
        .unwrap();
    app.accounts.choose_profile_ca(&profile.id).await.unwrap();
    common::callbacks_through_webhook_site(&app).await;
    let (tx, events) = mpsc::unbounded_channel();
    app.plans.watch_planned(Arc::new(move |e| drop(tx.send(e))));
    Office {
        sim,
        app,
        events,
        told,
        _dirs: (dir, folder, ca),
    }
}

/// The service fails the first POST: the window hears that the klant is tried again (with
/// the reason), then the same job saved; the history keeps the failed try; no failure is
/// notified (the wait is longer than the notifications' gathering, so one would have come).
#[tokio::test(flavor = "multi_thread")]
async fn a_passing_failure_is_tried_again_and_the_klant_ends_saved() {
    let retry = Retry {
        tries: 1,
        first_delay: Duration::from_millis(500),
    };
    let mut office = office(1, retry).await;
    assert_eq!(office.app.plans.backup_all().await.unwrap(), 1);
    let mut seen = Vec::new();
    let job = loop {
        let event = office.events.recv().await.expect("the klant's events");
        match &event.event {
            AppJobEvent::Saved { .. } => break event.job_id,
            AppJobEvent::Failed { message, .. } => panic!("{message}"),
            _ => seen.push(event),
        }
    };
    let retrying: Vec<_> = (seen.iter())
        .filter_map(|e| match &e.event {
            AppJobEvent::Retrying { code, in_secs, .. } => {
                Some((e.job_id.clone(), *code, *in_secs))
            }
            _ => None,
        })
        .collect();
    assert_eq!(retrying, [(job, kluis_core::Code::ServiceError, 0)]);
    let stages: Vec<_> = office
        .app
        .backups
        .history(None)
        .unwrap()
        .into_iter()
        .map(|e| e.stage)
        .collect();
    use kluis_core::Stage::*;
    assert_eq!(stages, [Saved, Failed], "newest first: both tries");
    assert_eq!(office.sim.stats().backups_started, 2);
    office.app.alerts.test_notification().await.unwrap();
    let first = office.told.recv().await.unwrap();
    assert_eq!(
        first.title, "Kluis test notification",
        "no failure was told"
    );
}

/// Cancel all while the klant waits to try again: it ends as cancelled at once and is not
/// tried again.
#[tokio::test(flavor = "multi_thread")]
async fn cancel_all_reaches_a_klant_waiting_to_try_again() {
    let retry = Retry {
        tries: 2,
        first_delay: Duration::from_secs(3600),
    };
    let mut office = office(5, retry).await;
    assert_eq!(office.app.plans.backup_all().await.unwrap(), 1);
    loop {
        let event = office.events.recv().await.expect("the klant's events");
        match event.event {
            AppJobEvent::Retrying { .. } => break,
            AppJobEvent::Failed { message, .. } => panic!("{message}"),
            _ => {}
        }
    }
    assert_eq!(
        office.app.plans.cancel_all(),
        1,
        "the waiting klant counts as running"
    );
    let end = loop {
        let event = office.events.recv().await.expect("the klant's end");
        if let AppJobEvent::Failed { code, .. } = event.event {
            break code;
        }
    };
    assert_eq!(end, kluis_core::Code::Cancelled);
    assert_eq!(office.sim.stats().backups_started, 1, "never tried again");
}
