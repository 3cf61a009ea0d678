//! The relay on a real PostgreSQL (started by tests/postgres/run.sh, which sets
//! KLUIS_TEST_DATABASE_URL; each test makes its own database): the storage contract, relay
//! instances that share one database — a callback at one wakes a long-poll at the other, also
//! when a notice was missed — order and at-least-once delivery per inbox under concurrent
//! callbacks, migrations by instances started together, and the binary's --database-url.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kluis_relay::{PgStore, Storage, StoreError};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common;
use crate::common::fresh_database::fresh_database;
use crate::common::{start_with, Running, SECRET};

/// A relay instance on the database at `url`, serving HTTP on 127.0.0.1.
async fn instance(url: &str, configure: impl FnOnce(&mut kluis_relay::RelayConfig)) -> Running {
    let store = PgStore::connect(url, 8).await.unwrap();
    start_with(store, configure, Default::default()).await
}

/// Two instances on the database at `url` that look again only after a minute (so only a
/// notice can wake a poll sooner), an inbox made at the first, and a long-poll of `wait`
/// seconds parked at the second: the first instance, the inbox's callback path, the poll.
async fn parked_across(url: &str, wait: u64) -> (Running, String, tokio::task::JoinHandle<Value>) {
    let slow_recheck = |c: &mut kluis_relay::RelayConfig| c.recheck = Duration::from_secs(60);
    let a = instance(url, slow_recheck).await;
    let b = Arc::new(instance(url, slow_recheck).await);
    let (inbox, path) = a.create().await;
    let poll = tokio::spawn({
        let b = b.clone();
        async move { b.poll(&inbox, 0, wait).await }
    });
    b.wait_parked(1).await;
    (a, path, poll)
}

/// Instances on one database mint the same callback tokens (the key is made once, in the
/// database): an inbox made at one takes its callback at the other. A path with a NUL, which
/// PostgreSQL refuses in a text parameter, is answered 404 before any query — it was a 503
/// `store_unavailable` and an ERROR in the log for each request.
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn instances_share_their_tokens_and_junk_never_reaches_the_database() {
    let url = fresh_database().await;
    let (a, b) = (instance(&url, |_| {}).await, instance(&url, |_| {}).await);
    let (inbox, path) = a.create().await;
    assert_eq!(
        b.callback(&path).await,
        StatusCode::OK,
        "minted at a, taken at b"
    );
    assert_eq!(
        b.poll(&inbox, 0, 0).await["events"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    for junk in ["/cb/%00/x", "/cb/%00/%00"] {
        assert_eq!(a.callback(junk).await, StatusCode::NOT_FOUND, "{junk}");
    }
    let poll = a
        .api(reqwest::Method::GET, "/api/inboxes/%00/events", SECRET)
        .send()
        .await
        .unwrap();
    assert_eq!(poll.status(), StatusCode::NOT_FOUND);
}

/// A key added by another process (`kluis-relay tenant add`, or another instance) after this
/// instance read the keys, while junk has spent this instance's budget for unknown keys (by a
/// clock that stands still: it never refills): the key gets in as soon as the key change's
/// notice arrived — the keys version moved — and a request before the change is refused.
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn a_key_added_elsewhere_gets_in_past_the_junk() {
    let url = fresh_database().await;
    let store = PgStore::connect(&url, 4).await.unwrap();
    let mut changes = store.keys_changes();
    let still = |c: &mut kluis_relay::RelayConfig| {
        c.clock = kluis_https::Clock::manual();
        c.unauthenticated_per_sec = 1.0;
    };
    let relay = start_with(store, still, Default::default()).await;
    // The instance listens (its connection, once made, moved the version).
    changes.changed().await.unwrap();
    let key = kluis_relay::tenants::new_key();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let r = relay.api(reqwest::Method::GET, "/api/stats", &key.text);
        statuses.push(r.send().await.unwrap().status());
    }
    assert_eq!(
        statuses,
        [
            StatusCode::UNAUTHORIZED,
            StatusCode::UNAUTHORIZED,
            StatusCode::TOO_MANY_REQUESTS
        ],
        "not a key yet: junk, and the junk budget (a burst of 2) is spent"
    );
    let admin = PgStore::connect(&url, 1).await.unwrap();
    assert!(admin
        .add_tenant("late", kluis_relay::Quota::UNLIMITED, &key.id, key.hash)
        .await
        .unwrap());
    changes.changed().await.unwrap();
    let r = relay.api(reqwest::Method::GET, "/api/stats", &key.text);
    assert_eq!(r.send().await.unwrap().status(), StatusCode::OK);
}

/// The PostgreSQL engine keeps the storage contract, as SQLite does.
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn postgres_keeps_the_storage_contract() {
    let url = fresh_database().await;
    let store = PgStore::connect(&url, 4).await.unwrap();
    common::contract::storage_contract(&store).await;
}

/// The PostgreSQL engine keeps the office hub's contract (PCs, turns, reports, invitations),
/// as SQLite
/// does (its clock the database's).
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn postgres_keeps_the_office_contract() {
    let url = fresh_database().await;
    let store = PgStore::connect(&url, 4).await.unwrap();
    common::office_contract::office_contract(&store).await;
    common::office_contract::reports_contract(&store).await;
    common::office_contract::invites_contract(&store).await;
}

/// Ten PCs of one office asking for one klant's turn at once, through two relay instances'
/// stores on one database, get it once between them: the others are told who has it.
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn one_turn_among_pcs_asking_at_once() {
    use kluis_relay::storage::{OfficeStore, Turn};
    let url = fresh_database().await;
    let stores = [
        Arc::new(PgStore::connect(&url, 8).await.unwrap()),
        Arc::new(PgStore::connect(&url, 8).await.unwrap()),
    ];
    let office = kluis_relay::tenants::new_key();
    assert!(stores[0]
        .add_tenant("office", Default::default(), &office.id, office.hash)
        .await
        .unwrap());
    for n in 0..10 {
        let key = kluis_relay::tenants::new_key();
        let name = format!("pc-{n}");
        assert!(stores[0]
            .add_pc("office", &name, &key.id, key.hash)
            .await
            .unwrap());
    }
    let klant = common::office_contract::klant(7);
    let mut asks = tokio::task::JoinSet::new();
    for n in 0..10 {
        let (store, klant) = (stores[n % 2].clone(), klant.clone());
        asks.spawn(async move {
            (store.take_turn("office", &format!("pc-{n}"), &klant, 60_000, 0)).await
        });
    }
    let answers: Vec<Turn> = asks
        .join_all()
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let yours = answers
        .iter()
        .filter(|a| matches!(a, Turn::Yours { .. }))
        .count();
    assert_eq!(yours, 1, "{answers:?}");
    assert!(
        answers
            .iter()
            .all(|a| matches!(a, Turn::Yours { .. } | Turn::Held { .. })),
        "{answers:?}"
    );
}

/// With `sslmode=require` the relay speaks TLS to the database and checks its certificate:
/// with the cluster's CA (`PGSSLROOTCERT`) every connection of the store is encrypted; with
/// another CA the relay refuses to connect and says it was the certificate.
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn tls_to_the_database_checks_its_certificate() {
    let url = fresh_database().await;
    let ca = std::env::var("KLUIS_TEST_DATABASE_CA").expect("tests/postgres/cluster.sh sets it");
    let tls_url = format!("{url}?sslmode=require");
    // PGSSLROOTCERT is read only with sslmode=require, which no other test here uses.
    std::env::set_var("PGSSLROOTCERT", &ca);
    let store = PgStore::connect(&tls_url, 3)
        .await
        .expect("TLS with the cluster's CA");
    store.warm().await.unwrap();
    let (admin, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let row = admin
        .query_one(
            "SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_activity a
             JOIN pg_stat_ssl s USING (pid)
             WHERE a.datname = current_database() AND a.application_name = 'kluis-relay'",
            &[],
        )
        .await
        .unwrap();
    let (encrypted, all): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!((encrypted, all), (3, 3), "every pooled connection is TLS");

    let other = tempfile::NamedTempFile::new().unwrap();
    let stranger = kluis_https::cert::LocalCa::generate("not the database's CA").unwrap();
    std::fs::write(other.path(), stranger.ca_pem()).unwrap();
    std::env::set_var("PGSSLROOTCERT", other.path());
    let refused = PgStore::connect(&tls_url, 1).await;
    std::env::remove_var("PGSSLROOTCERT");
    let message = refused
        .err()
        .expect("a certificate from an unknown CA is refused")
        .to_string();
    assert!(message.contains("certificate"), "says why: {message}");
}

/// A long-poll parked at one instance is answered when the callback is stored at the other:
/// the notice crosses by LISTEN/NOTIFY (the instances' own re-look is a minute, longer than the
/// poll, so nothing else could answer it).
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn a_callback_at_one_instance_wakes_a_poll_at_the_other() {
    let url = fresh_database().await;
    let (a, path, poll) = parked_across(&url, 20).await;
    let sent = std::time::Instant::now();
    assert_eq!(a.call(&format!("{path}?id=across")).await, StatusCode::OK);
    let got = poll.await.unwrap();
    assert_eq!(got["events"][0]["query"], "id=across", "{got}");
    assert!(
        sent.elapsed() < Duration::from_secs(15),
        "woken by the notice, not answered at the poll's end (20 s): {:?}",
        sent.elapsed()
    );
}

/// When the listening connection is cut (a notice may be lost meanwhile), the callback still
/// reaches the parked long-poll: the listener connects again and wakes every parked poll.
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn a_missed_notice_is_made_up_for() {
    let url = fresh_database().await;
    let (a, path, poll) = parked_across(&url, 25).await;
    let (admin, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let cut = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE application_name = 'kluis-relay listen' AND datname = current_database()",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(cut.len(), 2, "both instances were listening");
    let sent = std::time::Instant::now();
    assert_eq!(
        a.call(&format!("{path}?id=while-cut")).await,
        StatusCode::OK
    );
    let got = poll.await.unwrap();
    assert_eq!(got["events"][0]["query"], "id=while-cut", "{got}");
    assert!(
        sent.elapsed() < Duration::from_secs(20),
        "answered when the listener was back, not at the poll's end (25 s): {:?}",
        sent.elapsed()
    );
}

/// 200 callbacks to one inbox, sent at once through two instances while a client long-polls
/// them alternately from each with its cursor, acknowledging at the other: every callback
/// arrives, numbered 1…200 with no gap, in number order, and each exactly once (a cursor that
/// skipped a late-committed number would lose one).
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn order_and_delivery_hold_under_concurrent_callbacks() {
    let url = fresh_database().await;
    let fast = |c: &mut kluis_relay::RelayConfig| c.inbox_callbacks_per_sec = 1e6;
    let instances = Arc::new([instance(&url, fast).await, instance(&url, fast).await]);
    let (inbox, path) = instances[0].create().await;
    const N: usize = 200;
    let senders: Vec<_> = (0..N)
        .map(|i| {
            let (instances, path) = (instances.clone(), path.clone());
            tokio::spawn(async move { instances[i % 2].call(&format!("{path}?id={i}")).await })
        })
        .collect();
    let mut cursor = 0i64;
    let mut seen = Vec::new();
    let mut round = 0;
    while seen.len() < N {
        let (poller, acker) = (&instances[round % 2], &instances[(round + 1) % 2]);
        round += 1;
        let got = poller.poll(&inbox, cursor, 2).await;
        for event in got["events"].as_array().unwrap() {
            seen.push((
                event["seq"].as_i64().unwrap(),
                event["query"].as_str().unwrap().to_string(),
            ));
        }
        cursor = got["next"].as_i64().unwrap();
        let acked = acker
            .client
            .post(format!("{}/api/inboxes/{inbox}/ack", acker.base))
            .bearer_auth(SECRET)
            .json(&json!({ "up_to": cursor }))
            .send()
            .await
            .unwrap();
        assert_eq!(acked.status(), StatusCode::OK);
        assert!(round < 1000, "all {N} arrive: {} so far", seen.len());
    }
    for sender in senders {
        assert_eq!(sender.await.unwrap(), StatusCode::OK);
    }
    let numbers: Vec<i64> = seen.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(
        numbers,
        (1..=N as i64).collect::<Vec<_>>(),
        "1…{N}, in order, once each"
    );
    let queries: BTreeSet<&str> = seen.iter().map(|(_, q)| q.as_str()).collect();
    assert_eq!(queries.len(), N, "every callback, none twice");
    let left = instances[1].poll(&inbox, 0, 0).await;
    assert_eq!(
        left["events"],
        json!([]),
        "all acknowledged, through either instance"
    );
}

/// Instances started together on an empty database migrate it once; a database from a newer
/// relay is refused rather than misread.
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn instances_started_together_migrate_once() {
    let url = fresh_database().await;
    let (one, two, three) = tokio::join!(
        PgStore::connect(&url, 2),
        PgStore::connect(&url, 2),
        PgStore::connect(&url, 2)
    );
    for store in [one, two, three] {
        store.expect("each instance starts");
    }
    let (admin, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let rows = admin
        .query("SELECT version FROM kluis_relay_schema", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    admin
        .execute("UPDATE kluis_relay_schema SET version = 99", &[])
        .await
        .unwrap();
    assert!(matches!(
        PgStore::connect(&url, 2).await,
        Err(StoreError::TooNew { found: 99, .. })
    ));
}

/// `kluis-relay tenant add` works on PostgreSQL, with the URL from the environment; a password
/// on the command line is refused (other users can read process arguments).
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn the_binary_takes_the_database_url() {
    let url = fresh_database().await;
    let bin = env!("CARGO_BIN_EXE_kluis-relay");
    let added = std::process::Command::new(bin)
        .args(["tenant", "add", "office-1"])
        .env("KLUIS_RELAY_DATABASE_URL", &url)
        .output()
        .unwrap();
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    assert!(String::from_utf8_lossy(&added.stdout).starts_with("klr_"));
    let listed = std::process::Command::new(bin)
        .args(["tenant", "list", "--database-url", &url])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("office-1"));
    let with_password = url.replacen("kluis@", "kluis:hunter2@", 1);
    let refused = std::process::Command::new(bin)
        .args(["tenant", "list", "--database-url", &with_password])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("PGPASSWORD") && !said.contains("hunter2"),
        "{said}"
    );
}
