//! A whole backup through a kluis-relay inbox (the service calls the relay; Kluis long-polls
//! it), with the relay served over TLS on 127.0.0.1.

use std::sync::Arc;

use crate::common::*;
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
        download_turns: None,
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

/// A relay instance over TLS on 127.0.0.1 with `ca`'s certificate, on the database at `db`
/// (two instances on one file stand for instances sharing one database): its URL, the relay,
/// and the sender that stops it abruptly, as a crash would.
async fn instance(
    ca: &kluis_https::LocalCa,
    db: &std::path::Path,
) -> (
    String,
    Arc<kluis_relay::Relay>,
    tokio::sync::watch::Sender<bool>,
) {
    use kluis_relay::{router, Relay, RelayConfig, SqliteStore};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let relay = Relay::new(
        SqliteStore::open(db).unwrap(),
        RelayConfig::new(RELAY_SECRET.into()),
    );
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(kluis_https::serve_tls(
        listener,
        ca.server_config(&["127.0.0.1"]).unwrap(),
        router(relay.clone()),
        Default::default(),
        async move {
            let _ = stopped.wait_for(|s| *s).await;
        },
    ));
    (url, relay, stop)
}

/// How many events `relay` has answered long-polls with (its delivery histogram's count).
fn deliveries(relay: &kluis_relay::Relay) -> u64 {
    let text = relay.metrics().render();
    let line = text
        .lines()
        .find(|l| l.starts_with("kluis_relay_delivery_latency_seconds_count"))
        .unwrap_or_else(|| panic!("{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// With two relay URLs, a long-poll whose relay dies moves to the other and goes on from its
/// cursor: the callback stored there reaches the job, and the first one is not read again.
#[tokio::test]
async fn a_long_poll_fails_over_keeping_its_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("relay.sqlite3");
    let ca = kluis_https::LocalCa::generate("relay test CA").unwrap();
    let (a, _, stop_a) = instance(&ca, &db).await;
    let (b, relay_b, _stop_b) = instance(&ca, &db).await;
    let h = Harness::new(|_| {}).await;
    let transport = RelayTransport::new(
        &format!("{a}, {b}"),
        Secret::new(SECRET),
        &h.config,
        Some(ca.ca_pem()),
    )
    .unwrap();
    let mut registration =
        kluis_core::callback::CallbackTransport::prepare(&transport, uuid::Uuid::new_v4())
            .await
            .unwrap();
    let webhook = registration.webhook_url.clone();
    assert!(
        webhook.as_str().starts_with(&a),
        "the inbox was made at the first URL: {webhook}"
    );
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.ca_pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let first = uuid::Uuid::new_v4();
    let called = http
        .get(format!("{webhook}?id={first}"))
        .send()
        .await
        .unwrap();
    assert_eq!(called.status(), 200);
    assert_eq!(
        registration.ids.recv().await.unwrap().expose().expose(),
        first.to_string()
    );

    stop_a.send_replace(true); // the first instance dies, its parked long-poll with it
    let second = uuid::Uuid::new_v4();
    let at_b = format!("{b}{}?id={second}", webhook.path());
    assert_eq!(http.get(at_b).send().await.unwrap().status(), 200);
    let got = tokio::time::timeout(std::time::Duration::from_secs(30), registration.ids.recv())
        .await
        .expect("the poller moved to the other URL")
        .unwrap();
    assert_eq!(
        got.expose().expose(),
        second.to_string(),
        "collected from the other URL"
    );
    assert_eq!(
        deliveries(&relay_b),
        1,
        "the other instance delivered only the new callback: the cursor was kept"
    );
}

/// A relay URL that refuses connections is skipped: the inbox is made at the next one and the
/// whole backup goes through it.
#[tokio::test]
async fn backup_when_the_first_relay_url_is_down() {
    let (url, ca, _relay) = relay().await;
    let closed = {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap() // closed again when dropped here
    };
    let mut h = Harness::new(|_| {}).await;
    let urls = format!("https://{closed}, {url}");
    h.transport =
        Arc::new(RelayTransport::new(&urls, Secret::new(SECRET), &h.config, Some(ca)).unwrap());
    let (saved, _) = h.backup().await;
    let saved = saved.expect("the backup goes through the second URL");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
}
