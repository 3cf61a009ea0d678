//! Property tests of the relay's HTTP API: any method, path, query, header and body — shaped
//! like the real API or not — is answered with a client status or success, never a panic or a
//! server error, and an unauthorised request never changes the store.
//!
//! `cargo test -p kluis-relay fuzz` runs 512 cases; the long run,
//! `cargo test --release -p kluis-relay -- --ignored fuzz`, 100,000.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tower::ServiceExt;

use crate::storage::SHARED_TENANT;
use crate::{router, Relay, RelayConfig, SqliteStore};

const SECRET: &str = "fuzz-secret-fuzz-secret-fuzz-1234";

#[derive(Debug, Clone)]
struct Call {
    method: Method,
    path: String,
    body: Vec<u8>,
    authorised: bool,
}

fn call() -> impl Strategy<Value = Call> {
    let segment = prop_oneof![
        Just("inbox".to_string()),
        "[0-9a-f]{40}",
        "[a-zA-Z0-9%._~-]{0,12}",
        any::<String>().prop_map(|s| s
            .chars()
            .filter(|c| !c.is_control() && *c != '/' && *c != '?' && *c != '#')
            .collect()),
    ];
    let path = (
        prop_oneof![
            Just("/api/inboxes"),
            Just("/cb"),
            Just("/api/stats"),
            Just("/healthz"),
            Just("")
        ],
        proptest::collection::vec(segment, 0..3),
        prop_oneof![Just("events"), Just("ack"), Just("")],
        "(after=-?[0-9]{0,20}|wait=[0-9]{0,22}|id=[^&#]{0,30}|&){0,4}",
    )
        .prop_map(|(root, segments, tail, query)| {
            let mut path = root.to_string();
            for s in segments {
                path.push('/');
                path.push_str(&s);
            }
            if !tail.is_empty() {
                path.push('/');
                path.push_str(tail);
            }
            format!("{path}?{query}")
        });
    let body = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        "\\{\"up_to\": ?(-?[0-9]{0,25}|\"[^\"]{0,10}\"|null|\\[\\]|1e999)\\}"
            .prop_map(String::into_bytes),
    ];
    (
        prop_oneof![
            Just(Method::GET),
            Just(Method::POST),
            Just(Method::DELETE),
            Just(Method::PUT)
        ],
        path,
        body,
        any::<bool>(),
    )
        .prop_map(|(method, path, body, authorised)| Call {
            method,
            path,
            body,
            authorised,
        })
}

fn run(cases: u32) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut config = RelayConfig::new(SECRET.into());
    config.max_wait = std::time::Duration::ZERO; // long-polls answer at once
    config.api_per_sec = 1e9;
    config.callbacks_per_sec = 1e9;
    config.inbox_callbacks_per_sec = 1e9;
    let relay = Relay::new(SqliteStore::in_memory().unwrap(), config);
    let inbox = runtime.block_on(async { create(&relay).await });
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&call(), |mut c| {
            // Aim a share of the calls at the live inbox.
            c.path = c.path.replace("/inbox", &format!("/{inbox}"));
            let status = runtime.block_on(send(&relay, &c));
            prop_assert!(
                !status.is_server_error() || status.as_u16() == 507,
                "{c:?} → {status}"
            );
            if !c.authorised && c.path.starts_with("/api/") {
                prop_assert!(!status.is_success(), "{c:?} → {status} without the secret");
            }
            Ok(())
        })
        .unwrap();
    let still = runtime.block_on(relay.store().events_after(SHARED_TENANT, &inbox, 0, 1));
    assert!(still.is_ok(), "the store still answers");
}

async fn create(relay: &Arc<Relay>) -> String {
    let request = Request::post("/api/inboxes")
        .header("authorization", format!("Bearer {SECRET}"))
        .body(Body::empty())
        .unwrap();
    let response = router(relay.clone()).oneshot(request).await.unwrap();
    let body = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    json["inbox"].as_str().unwrap().to_string()
}

async fn send(relay: &Arc<Relay>, c: &Call) -> axum::http::StatusCode {
    let Ok(uri) = c.path.parse::<axum::http::Uri>() else {
        return axum::http::StatusCode::BAD_REQUEST; // not even a request line
    };
    let mut request = Request::builder().method(c.method.clone()).uri(uri);
    if c.authorised {
        request = request.header("authorization", format!("Bearer {SECRET}"));
    } else if c.path.len().is_multiple_of(2) {
        // Shaped like a tenant key, but made up.
        request = request.header("authorization", "Bearer klr_0123456789abcdef_guess");
    }
    request = request.header("content-type", "application/json");
    let request = request.body(Body::from(c.body.clone())).unwrap();
    router(relay.clone())
        .oneshot(request)
        .await
        .unwrap()
        .status()
}

#[test]
fn fuzz_relay_api() {
    run(512);
}

#[test]
#[ignore = "long run: cargo test --release -p kluis-relay -- --ignored fuzz"]
fn fuzz_relay_api_long() {
    run(100_000);
}
