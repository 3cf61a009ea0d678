//! The direct transport: a plain-HTTP listener on a fixed address behind a TLS-terminating
//! reverse proxy (here a byte forwarder with its own certificate), so the service calls a
//! public https URL that ends at this process.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::common::*;
use kluis_core::{CallbackTransport, ListenerTransport};

/// A free port on 127.0.0.1 for the direct listener's fixed address.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A backup whose callback travels public URL → proxy → the direct listener; the proxy keeps
/// the URL's path prefix, and the listener still finds the job.
#[tokio::test]
async fn backup_through_a_reverse_proxy() {
    let listen: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let (proxy, _) = tls_front(listen, "office proxy").await;
    let direct = ListenerTransport::direct(&format!("https://127.0.0.1:{proxy}/kluis"), listen)
        .await
        .unwrap();
    assert_eq!(direct.name(), "direct");
    let mut h = Harness::new(|_| {}).await;
    h.transport = Arc::new(direct);
    let (saved, _) = h.backup().await;
    let saved = saved.expect("the callback reaches the listener through the proxy");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    assert_eq!(h.history.list(None, 1).unwrap()[0].transport, "direct");
}

/// The public URL must be https; a taken address is a configuration error.
#[tokio::test]
async fn direct_settings_are_checked() {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    assert_eq!(
        ListenerTransport::direct("http://office.example/kluis", any)
            .await
            .err()
            .unwrap()
            .code(),
        "config"
    );
    let taken = ListenerTransport::direct("https://office.example/kluis", any)
        .await
        .unwrap();
    let again = ListenerTransport::direct("https://office.example/kluis", taken.local_addr()).await;
    assert_eq!(again.err().unwrap().code(), "config");
}

/// `callback-test` through the proxy succeeds; without a proxy in front it names the failure.
#[tokio::test]
async fn callback_test_reports_reachability() {
    let listen: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let (proxy, proxy_ca) = tls_front(listen, "office proxy").await;
    let direct = ListenerTransport::direct(&format!("https://127.0.0.1:{proxy}/kluis"), listen)
        .await
        .unwrap();
    // Trust the proxy's CA, as the service trusts a real proxy's certificate.
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(proxy_ca.as_bytes()).unwrap())
        .build()
        .unwrap();
    let took = kluis_core::callback::test_callback(&direct, &http)
        .await
        .expect("comes back");
    assert!(took.as_secs() < 15);

    let unreachable = ListenerTransport::direct(
        &format!("https://127.0.0.1:{}/kluis", free_port()),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let err = kluis_core::callback::test_callback(&unreachable, &http)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "network", "{err}");
}
