//! A failed connection is named for what it is, with the advice that fits it: the service
//! unreachable, or the backup's file host unreachable (a certificate this computer does not
//! trust: `session.rs`) — over real TLS on 127.0.0.1.

mod common;

use common::*;
use kluis_core::{Code, Destination};

/// A port nothing listens on.
async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

/// A service that cannot be reached: the advice is the connection and the base URL.
#[tokio::test]
async fn an_unreachable_service_is_named_as_such() {
    let sim = sim(|_| {}).await;
    let mut config = demo_config(&sim);
    config.base_url = format!("https://127.0.0.1:{}/webservice_v2/", closed_port().await)
        .parse()
        .unwrap();
    let error = session(config).sign_in().await.unwrap_err();
    assert_eq!(error.code(), Code::Network, "{error}");
    assert!(error.to_string().contains("base URL"), "{error}");
}

/// The file host that serves the backup cannot be reached: said so, and not blamed on the
/// profile's base URL.
#[tokio::test]
async fn an_unreachable_file_host_is_named_as_such() {
    let h = Harness::new(|_| {}).await;
    let url = format!(
        "https://127.0.0.1:{}/files/owner-backup.zip",
        closed_port().await
    )
    .parse()
    .unwrap();
    let destination = Destination::from_out(h.out.path()).unwrap();
    let error = h
        .downloader
        .download(&url, &destination, &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(error.code(), Code::FileHostUnreachable, "{error}");
    let message = error.to_string();
    assert!(message.contains("file host"), "{message}");
    assert!(!message.contains("base URL"), "{message}");
    assert!(h.out_entries().is_empty(), "nothing left behind");
}
