//! A whole backup through a kluis-relay inbox (the service calls the relay; Kluis long-polls
//! it), with the relay served over TLS on 127.0.0.1.

mod common;

use std::sync::Arc;

use common::*;
use kluis_core::callback::RelayTransport;
use kluis_core::Secret;

const SECRET: &str = RELAY_SECRET;

/// The service's callback goes to the relay, and the job collects it from there.
#[tokio::test]
async fn backup_through_the_relay() {
    let (url, ca, _relay) = relay().await;
    let mut h = Harness::new(|_| {}).await;
    h.transport =
        Arc::new(RelayTransport::new(&url, Secret::new(SECRET), &h.config, Some(ca)).unwrap());
    let (saved, _) = h.backup().await;
    let saved = saved.expect("the callback travels through the relay");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    assert_eq!(h.history.list(None, 1).unwrap()[0].transport, "relay");
}

/// Duplicate callbacks at the relay reach the job once.
#[tokio::test]
async fn relay_duplicates_are_dropped() {
    let (url, ca, _relay) = relay().await;
    let mut h = Harness::new(|c| c.faults.duplicate_callbacks = 2).await;
    h.transport =
        Arc::new(RelayTransport::new(&url, Secret::new(SECRET), &h.config, Some(ca)).unwrap());
    let (saved, _) = h.backup().await;
    saved.unwrap();
    assert_eq!(h.sim.stats().webhook, 1);
}

/// A wrong relay secret is a configuration error, said before anything is sent to the service.
#[tokio::test]
async fn wrong_relay_secret_is_config_error() {
    let (url, ca, _relay) = relay().await;
    let mut h = Harness::new(|_| {}).await;
    h.transport = Arc::new(
        RelayTransport::new(
            &url,
            Secret::new("wrong-secret-wrong-secret"),
            &h.config,
            Some(ca),
        )
        .unwrap(),
    );
    let (saved, _) = h.backup().await;
    let err = saved.unwrap_err();
    assert_eq!(err.code(), "config");
    assert!(!err.to_string().contains("wrong-secret"), "{err}");
    assert_eq!(h.sim.stats().backups_started, 0);
}

/// `callback-test` through the relay: the test call goes to the relay and comes back by
/// long-poll.
#[tokio::test]
async fn callback_test_through_the_relay() {
    let (url, ca, _relay) = relay().await;
    let h = Harness::new(|_| {}).await;
    let transport =
        RelayTransport::new(&url, Secret::new(SECRET), &h.config, Some(ca.clone())).unwrap();
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .build()
        .unwrap();
    kluis_core::callback::test_callback(&transport, &http)
        .await
        .expect("the test call comes back");
}

/// Stops the job's future once it reports `stage`: the program stopping at that point.
async fn run_until(h: &Harness, stage: kluis_core::Stage) -> uuid::Uuid {
    let request = h.request();
    let (reached, mut wait) = tokio::sync::mpsc::unbounded_channel();
    let mut events = move |e: kluis_core::JobEvent| {
        if e == (kluis_core::JobEvent::Stage { stage }) {
            let _ = reached.send(());
        }
    };
    let job = h.job();
    tokio::select! {
        outcome = job.run(&request, &mut events) => panic!("the job ended early: {outcome:?}"),
        _ = wait.recv() => {}
    }
    request.id
}

/// A relay job dropped after the 202 (the program stopped) stays journalled in its stage,
/// nothing acknowledged at the relay; a later resume collects the callback from the inbox,
/// saves the file, and only then deletes the inbox.
#[tokio::test]
async fn interrupted_relay_job_is_resumed() {
    let (url, ca, _relay) = relay().await;
    let mut h =
        Harness::new(|c| c.faults.callback_delay = std::time::Duration::from_millis(300)).await;
    let transport = || {
        Arc::new(
            RelayTransport::new(&url, Secret::new(SECRET), &h.config, Some(ca.clone())).unwrap(),
        )
    };
    h.transport = transport();
    let id = run_until(&h, kluis_core::Stage::Accepted).await;
    let row = h.history.get(id).unwrap().unwrap();
    assert_eq!(row.stage, "accepted", "kept, not cancelled");
    let journal = h.history.journal(id).unwrap().expect("journalled");
    let Some(kluis_core::callback::Reattach::Relay { inbox, .. }) = journal.reattach.clone() else {
        panic!("{journal:?}")
    };

    let unfinished = h.history.unfinished().unwrap();
    assert_eq!(unfinished.len(), 1);
    let resumed_transport = transport();
    let job = kluis_core::BackupJob {
        session: &h.session,
        transport: &*resumed_transport,
        downloader: &h.downloader,
        history: &h.history,
        cancel: None,
    };
    let saved = job
        .resume(&unfinished[0], &mut |_| {})
        .await
        .expect("resumed");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    assert_eq!(h.history.get(id).unwrap().unwrap().stage, "saved");
    assert!(
        h.history.journal(id).unwrap().is_none(),
        "the journal ends with the job"
    );
    assert_eq!(h.sim.stats().backups_started, 1);

    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .build()
        .unwrap();
    let after = http
        .get(format!("{url}/api/inboxes/{inbox}/events?after=0&wait=0"))
        .bearer_auth(SECRET)
        .send()
        .await
        .unwrap();
    assert_eq!(
        after.status(),
        404,
        "the inbox is deleted once the job has ended"
    );
}

/// A loopback job dropped after the 202 cannot be collected by anyone else: it ends as
/// cancelled at once.
#[tokio::test]
async fn interrupted_loopback_job_is_cancelled() {
    let h = Harness::new(|c| c.faults.callback_delay = std::time::Duration::from_millis(300)).await;
    let id = run_until(&h, kluis_core::Stage::Accepted).await;
    let row = h.history.get(id).unwrap().unwrap();
    assert_eq!(
        (
            row.stage.as_str(),
            row.failed_stage.map(kluis_core::Stage::as_str),
            row.error_code.map(kluis_core::Code::as_str)
        ),
        ("failed", Some("accepted"), Some("cancelled"))
    );
    assert!(h.history.unfinished().unwrap().is_empty());
}
