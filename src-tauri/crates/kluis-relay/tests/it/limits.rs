//! The relay's bounds under attack (issue 8): per-inbox and database caps, rate limits after
//! the capability check, the private API's rate limit, slow request heads on plain HTTP, and
//! an owner-only database. Each fails on 197df1f.

use std::time::Duration;

use kluis_relay::{RelayConfig, SqliteStore, Storage};
use reqwest::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common;
use crate::common::{Running, SECRET};

/// An in-memory relay with `configure`d settings, served under `limits`.
async fn start(
    configure: impl FnOnce(&mut RelayConfig),
    limits: kluis_https::ServeLimits,
) -> Running {
    common::start_with(SqliteStore::in_memory().unwrap(), configure, limits).await
}

/// An inbox takes a bounded number of unacknowledged callbacks (507 beyond, so the service
/// may retry); acknowledging makes room again.
#[tokio::test]
async fn an_inbox_holds_a_bounded_number_of_events() {
    let relay = start(|c| c.max_events_per_inbox = 5, Default::default()).await;
    let (inbox, path) = relay.create().await;
    for _ in 0..5 {
        assert_eq!(relay.callback(&path).await, StatusCode::OK);
    }
    assert_eq!(
        relay.callback(&path).await,
        StatusCode::INSUFFICIENT_STORAGE
    );
    let acked = relay
        .client
        .post(format!("{}/api/inboxes/{inbox}/ack", relay.base))
        .bearer_auth(SECRET)
        .json(&serde_json::json!({ "up_to": i64::MAX }))
        .send()
        .await
        .unwrap();
    assert!(acked.status().is_success());
    assert_eq!(
        relay.callback(&path).await,
        StatusCode::OK,
        "room again after the ack"
    );
}

/// A full database refuses callbacks with 507 rather than filling the disk.
#[tokio::test]
async fn a_full_database_refuses_with_507() {
    let relay = start(|c| c.max_db_bytes = 1, Default::default()).await;
    let (_, path) = relay.create().await;
    assert_eq!(
        relay.callback(&path).await,
        StatusCode::INSUFFICIENT_STORAGE
    );
}

/// A flood of junk paths, and a flood of one inbox, exhaust only their own budgets: another
/// inbox's real callback is still stored. (By a clock that stands still, each budget admits
/// exactly its burst, however fast the machine sends.)
#[tokio::test]
async fn floods_do_not_crowd_out_a_real_callback() {
    let relay = start(
        |c| {
            c.clock = kluis_https::Clock::manual();
            c.callbacks_per_sec = 20.0;
            c.inbox_callbacks_per_sec = 5.0;
        },
        Default::default(),
    )
    .await;
    let (_, flooded) = relay.create().await;
    let (_, real) = relay.create().await;
    let mut limited = (0, 0);
    for _ in 0..100 {
        let junk = format!(
            "/cb/{}/{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        if relay.callback(&junk).await == StatusCode::TOO_MANY_REQUESTS {
            limited.0 += 1;
        }
        if relay.callback(&flooded).await == StatusCode::TOO_MANY_REQUESTS {
            limited.1 += 1;
        }
    }
    assert_eq!(
        limited,
        (100 - 20, 100 - 20),
        "junk past its burst of 20, the inbox past its burst of 4 × 5"
    );
    assert_eq!(
        relay.callback(&real).await,
        StatusCode::OK,
        "the real callback is stored"
    );
}

/// Guesses at the private API are answered 429 beyond a budget of their own (5 a second, a
/// burst of 10, by a clock that stands still), whether they look like a tenant key (a key id
/// the relay does not know) or not; a second later, 5 more are answered.
#[tokio::test]
async fn guesses_are_rate_limited() {
    let clock = kluis_https::Clock::manual();
    let relay = start(
        |c| {
            c.clock = clock.clone();
            c.unauthenticated_per_sec = 5.0;
        },
        Default::default(),
    )
    .await;
    let mut limited = Vec::new();
    for guess in ["a guess", "klr_0123456789abcdef_notthesecret"] {
        let mut refused = 0;
        for _ in 0..50 {
            let r = relay
                .client
                .get(format!("{}/api/stats", relay.base))
                .bearer_auth(guess)
                .send()
                .await
                .unwrap();
            match r.status() {
                StatusCode::TOO_MANY_REQUESTS => refused += 1,
                status => assert_eq!(status, StatusCode::UNAUTHORIZED),
            }
        }
        limited.push(refused);
    }
    assert_eq!(
        limited,
        [40, 50],
        "one budget of 10 for both kinds of guess"
    );
    clock.advance(Duration::from_secs(1));
    let mut answered = 0;
    for _ in 0..10 {
        let r = (relay.client.get(format!("{}/api/stats", relay.base)))
            .bearer_auth("a guess")
            .send()
            .await
            .unwrap();
        answered += usize::from(r.status() == StatusCode::UNAUTHORIZED);
    }
    assert_eq!(answered, 5, "refilled at 5 a second");
}

/// Junk callback paths cost the database nothing beyond the junk budget: a path that is no
/// id the relay makes (a NUL, which PostgreSQL refused with a 503 and an ERROR in the log,
/// upper case, too long) is answered 404 without a query, and a well-formed path the relay
/// did not mint spends the junk budget before the store is asked — every one of 100 was a
/// write transaction before. A real inbox's first callback, minted, is still stored.
#[tokio::test]
async fn junk_callbacks_are_refused_before_the_database() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let store = common::counting::CountingStore {
        inner: SqliteStore::in_memory().unwrap(),
        calls: calls.clone(),
    };
    let still = |c: &mut RelayConfig| {
        c.clock = kluis_https::Clock::manual();
        c.callbacks_per_sec = 20.0;
    };
    let relay = common::start_with(store, still, Default::default()).await;
    let (_, real) = relay.create().await;
    let count = || calls.load(std::sync::atomic::Ordering::Relaxed);
    let before = count();
    for malformed in [
        "/cb/%00/x",
        &format!("/cb/{}/%00", "a".repeat(40)),
        &format!("/cb/{}/{}", "A".repeat(40), "b".repeat(40)),
        &format!("/cb/{}/{}", "a".repeat(65), "b".repeat(40)),
    ] {
        let status = relay.callback(malformed).await;
        assert!(
            [StatusCode::NOT_FOUND, StatusCode::TOO_MANY_REQUESTS].contains(&status),
            "{malformed}: {status}"
        );
    }
    assert_eq!(count(), before, "no query for a malformed path");
    let mut statuses = Vec::new();
    for _ in 0..100 {
        let junk = format!("/cb/{}/{}", "c".repeat(40), uuid::Uuid::new_v4().simple());
        statuses.push(relay.callback(&junk).await);
    }
    // The four malformed paths spent four of the budget's 20.
    let reached = count() - before;
    assert_eq!(
        reached, 16,
        "only junk within what is left of its budget reaches the database"
    );
    assert_eq!(
        (statuses.iter())
            .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
            .count(),
        84
    );
    assert_eq!(
        relay.callback(&real).await,
        StatusCode::OK,
        "the real callback"
    );
}

/// Slowloris on plain HTTP: clients that never finish their request head are cut off after
/// the header timeout, so with every connection slot taken by them a real request is still
/// answered (on 197df1f plain HTTP had no timeout and no cap).
#[tokio::test]
async fn slow_request_heads_are_cut_off() {
    let limits = kluis_https::ServeLimits {
        max_connections: 2,
        header_read_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let relay = start(|_| {}, limits).await;
    let mut slow = Vec::new();
    for _ in 0..2 {
        let mut socket = tokio::net::TcpStream::connect(relay.addr).await.unwrap();
        socket
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        slow.push(socket);
    }
    let answered = tokio::time::timeout(
        Duration::from_secs(10),
        relay.client.get(format!("{}/healthz", relay.base)).send(),
    )
    .await
    .expect("answered once the slow heads were cut off")
    .unwrap();
    assert_eq!(answered.status(), StatusCode::OK);
    for mut socket in slow {
        let mut rest = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "the server closed the slow connection");
    }
}

/// The database, which holds the callbacks' secret ids, is owner-only whatever the umask.
#[cfg(unix)]
#[test]
fn the_database_is_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: umask only sets the process's creation mask; 022 is the usual default.
    unsafe { libc::umask(0o022) };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("relay.sqlite3");
    let store = SqliteStore::open(&path).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let created =
        runtime.block_on(store.create_inbox("*", &kluis_relay::Quota::UNLIMITED, "a", "t"));
    assert_eq!(created.unwrap(), Ok(()));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}
