//! A relay served over plain HTTP on 127.0.0.1 — as `kluis-relay` serves it behind a proxy,
//! with the same connection limits — and a client for its API.

#![allow(dead_code)]

use kluis_relay::{router, Relay, RelayConfig, Store};
use reqwest::StatusCode;
use serde_json::Value;

pub const SECRET: &str = "test-secret-test-secret-1234";

pub struct Running {
    pub base: String,
    pub addr: std::net::SocketAddr,
    pub client: reqwest::Client,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// The relay with the default limits on `store`.
pub async fn start(store: Store) -> Running {
    start_with(store, |_| {}, Default::default()).await
}

/// The relay on `store`, with `configure`d settings and serving `limits`.
pub async fn start_with(
    store: Store,
    configure: impl FnOnce(&mut RelayConfig),
    limits: kluis_https::ServeLimits,
) -> Running {
    let mut config = RelayConfig::new(SECRET.into());
    configure(&mut config);
    let relay = Relay::new(store, config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(kluis_https::serve(
        listener,
        None,
        router(relay),
        limits,
        async {
            let _ = stopped.await;
        },
    ));
    Running {
        base: format!("http://{addr}"),
        addr,
        client: reqwest::Client::new(),
        _stop: stop,
    }
}

impl Running {
    /// A new inbox: its id and callback path.
    pub async fn create(&self) -> (String, String) {
        let r = self
            .client
            .post(format!("{}/api/inboxes", self.base))
            .bearer_auth(SECRET)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::CREATED);
        let body: Value = r.json().await.unwrap();
        (
            body["inbox"].as_str().unwrap().into(),
            body["callback_path"].as_str().unwrap().into(),
        )
    }

    pub async fn poll(&self, inbox: &str, after: i64, wait: u64) -> Value {
        let url = format!(
            "{}/api/inboxes/{inbox}/events?after={after}&wait={wait}",
            self.base
        );
        self.client
            .get(url)
            .bearer_auth(SECRET)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// A public GET of `path` (with its query), as the service would send.
    pub async fn call(&self, path: &str) -> StatusCode {
        self.client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
            .status()
    }

    /// A callback to `path` with a fresh id.
    pub async fn callback(&self, path: &str) -> StatusCode {
        self.call(&format!("{path}?id={}", uuid::Uuid::new_v4()))
            .await
    }
}
