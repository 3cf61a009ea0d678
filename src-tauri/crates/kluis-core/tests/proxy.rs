//! Attack: with plain http to loopback allowed, an `HTTP_PROXY` in the environment must not
//! receive the `/authenticate` request, whose query carries the password in clear text. (On
//! 197df1f reqwest sent it to the proxy.) Its own test binary: it sets the process's
//! environment.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::routing::get;
use kluis_core::{Secret, ServiceClient, ServiceConfig};

#[tokio::test]
async fn plain_loopback_calls_bypass_the_proxy() {
    // A "service" on loopback over plain http.
    let service = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let service_addr = service.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/webservice_v2/authenticate",
        get(|| async { axum::Json(serde_json::json!({ "token": uuid::Uuid::new_v4() })) }),
    );
    tokio::spawn(async move { axum::serve(service, router).await });
    // A "proxy" that only counts who connects to it (and answers nothing).
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_addr = proxy.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = proxy.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    // SAFETY: this test binary has one test; nothing else reads the environment meanwhile.
    unsafe {
        std::env::set_var("HTTP_PROXY", format!("http://{proxy_addr}"));
        std::env::set_var("http_proxy", format!("http://{proxy_addr}"));
        std::env::remove_var("NO_PROXY");
        std::env::remove_var("no_proxy");
    }
    let config = ServiceConfig::new(
        &format!("http://{service_addr}/webservice_v2"),
        Secret::new(uuid::Uuid::new_v4().to_string()),
        "klant".into(),
        Secret::new("a password in clear text"),
        true,
    )
    .unwrap();
    let client = ServiceClient::new(config).unwrap();
    client.authenticate().await.expect("signed in directly");
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the proxy saw the request"
    );
}
