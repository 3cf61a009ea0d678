//! The relay over real HTTP on 127.0.0.1: secret checks, storing, long-poll, cursor, ack,
//! limits, and surviving its own restart.

use std::sync::Arc;
use std::time::Duration;

use kluis_relay::SqliteStore;
use reqwest::StatusCode;
use serde_json::json;

use crate::common;
use crate::common::{start, SECRET};

/// The inbox API needs the secret; the callback path does not, but needs the token.
#[tokio::test]
async fn secrets_and_capabilities_are_checked() {
    let relay = start(SqliteStore::in_memory().unwrap()).await;
    let unauth = relay
        .client
        .post(format!("{}/api/inboxes", relay.base))
        .send()
        .await
        .unwrap();
    assert_eq!(unauth.status(), StatusCode::UNAUTHORIZED);
    let wrong = relay
        .client
        .post(format!("{}/api/inboxes", relay.base))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let (inbox, path) = relay.create().await;
    assert!(
        path.len() > 2 * 32,
        "inbox id and token each carry ≥128 bits: {path}"
    );
    assert_eq!(
        relay.call(&format!("/cb/{inbox}/wrong-token?id=1")).await,
        StatusCode::NOT_FOUND
    );
    let events = relay
        .client
        .get(format!("{}/api/inboxes/{inbox}/events", relay.base))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        relay.call(&format!("{path}?id={}", "x".repeat(3000))).await,
        StatusCode::NOT_FOUND,
        "query too long"
    );
    let post = relay
        .client
        .post(format!("{}{path}?id=1", relay.base))
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), StatusCode::NOT_FOUND, "only GET is stored");
}

/// Stored callbacks come back after the cursor, again until acknowledged (at least once).
#[tokio::test]
async fn stores_and_delivers_at_least_once() {
    let relay = start(SqliteStore::in_memory().unwrap()).await;
    let (inbox, path) = relay.create().await;
    assert_eq!(
        relay.call(&format!("{path}?id=first")).await,
        StatusCode::OK
    );
    assert_eq!(
        relay.call(&format!("{path}?id=second")).await,
        StatusCode::OK
    );
    let got = relay.poll(&inbox, 0, 0).await;
    assert_eq!(got["events"].as_array().unwrap().len(), 2);
    assert_eq!(got["events"][0]["query"], "id=first");
    let first_seq = got["events"][0]["seq"].as_i64().unwrap();
    let again = relay.poll(&inbox, 0, 0).await;
    assert_eq!(
        again["events"].as_array().unwrap().len(),
        2,
        "not acknowledged: delivered again"
    );
    let after = relay.poll(&inbox, first_seq, 0).await;
    assert_eq!(
        after["events"][0]["query"], "id=second",
        "the cursor skips what was seen"
    );
    let ack = relay
        .client
        .post(format!("{}/api/inboxes/{inbox}/ack", relay.base))
        .bearer_auth(SECRET)
        .json(&json!({ "up_to": first_seq }))
        .send()
        .await
        .unwrap();
    assert_eq!(ack.status(), StatusCode::OK);
    assert_eq!(
        relay.poll(&inbox, 0, 0).await["events"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// A long-poll waits for a callback and returns as soon as it arrives.
#[tokio::test]
async fn long_poll_wakes_on_arrival() {
    let relay = Arc::new(start(SqliteStore::in_memory().unwrap()).await);
    let (inbox, path) = relay.create().await;
    let poller = {
        let relay = relay.clone();
        let inbox = inbox.clone();
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            (relay.poll(&inbox, 0, 20).await, started.elapsed())
        })
    };
    // Wait until the poll is parked at the relay, so the callback must wake it.
    relay.wait_parked(1).await;
    assert_eq!(relay.call(&format!("{path}?id=late")).await, StatusCode::OK);
    let (got, took) = poller.await.unwrap();
    assert_eq!(got["events"][0]["query"], "id=late");
    assert!(
        took < Duration::from_secs(10),
        "returned on arrival, not at the timeout: {took:?}"
    );
}

/// With nothing to deliver a long-poll ends empty after its wait.
#[tokio::test]
async fn long_poll_times_out_empty() {
    let relay = start(SqliteStore::in_memory().unwrap()).await;
    let (inbox, _) = relay.create().await;
    let got = relay.poll(&inbox, 0, 1).await;
    assert_eq!(got, json!({ "events": [], "next": 0 }));
}

/// Callbacks stored before a restart of the relay are still delivered after it.
#[tokio::test]
async fn survives_its_own_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("relay.sqlite3");
    let (inbox, path);
    {
        let relay = start(SqliteStore::open(&db).unwrap()).await;
        (inbox, path) = relay.create().await;
        assert_eq!(relay.call(&format!("{path}?id=kept")).await, StatusCode::OK);
    }
    let relay = start(SqliteStore::open(&db).unwrap()).await;
    assert_eq!(
        relay.poll(&inbox, 0, 0).await["events"][0]["query"],
        "id=kept"
    );
    assert_eq!(
        relay.call(&format!("{path}?id=more")).await,
        StatusCode::OK,
        "the inbox still works"
    );
}

/// Two instances on one database file, which wake only their own long-polls: a poll parked at
/// one still gets a callback stored at the other, because a parked poll looks at the database
/// again every `recheck` (the fallback for a missed wake-up).
#[tokio::test]
async fn a_parked_poll_looks_again_for_callbacks_stored_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("relay.sqlite3");
    let quick = |c: &mut kluis_relay::RelayConfig| c.recheck = Duration::from_millis(200);
    let a = common::start_with(SqliteStore::open(&db).unwrap(), quick, Default::default()).await;
    let b = Arc::new(
        common::start_with(SqliteStore::open(&db).unwrap(), quick, Default::default()).await,
    );
    let (inbox, path) = a.create().await;
    let poll = tokio::spawn({
        let (b, inbox) = (b.clone(), inbox.clone());
        async move { b.poll(&inbox, 0, 20).await }
    });
    b.wait_parked(1).await;
    let sent = std::time::Instant::now();
    assert_eq!(
        a.call(&format!("{path}?id=elsewhere")).await,
        StatusCode::OK
    );
    let got = poll.await.unwrap();
    assert_eq!(got["events"][0]["query"], "id=elsewhere");
    assert!(
        sent.elapsed() < Duration::from_secs(15),
        "found by looking again, not at the poll's end (20 s): {:?}",
        sent.elapsed()
    );
}
