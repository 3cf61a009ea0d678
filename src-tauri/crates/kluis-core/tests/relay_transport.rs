//! A whole backup through a kluis-relay inbox (the service calls the relay; Kluis long-polls
//! it), with the relay served over TLS on 127.0.0.1.

mod common;

use std::sync::Arc;

use common::*;
use kluis_core::callback::RelayTransport;
use kluis_core::Secret;
use kluis_relay::{router, Relay, RelayConfig, Store};

const SECRET: &str = "relay-secret-for-tests-0123456789";

/// Starts a relay over TLS; returns its URL, its CA and a handle that keeps it alive.
async fn relay() -> (String, String, tokio::sync::watch::Sender<bool>) {
    let ca = kluis_https::LocalCa::generate("relay test CA").unwrap();
    let tls = ca.server_config(&["127.0.0.1"]).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    let relay = Relay::new(Store::in_memory().unwrap(), RelayConfig::new(SECRET.into()));
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(kluis_https::serve_tls(
        listener,
        tls,
        router(relay),
        Default::default(),
        async move {
            let _ = stopped.wait_for(|s| *s).await;
        },
    ));
    (url, ca.ca_pem(), stop)
}

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
