//! A relay served over plain HTTP on 127.0.0.1 — as `kluis-relay` serves it behind a proxy,
//! with the same connection limits — and a client for its API.

#![allow(dead_code)]

pub mod contract;
pub mod counting;
pub mod fresh_database;
pub mod office_contract;

use kluis_relay::{router, Relay, RelayConfig, Storage};
use reqwest::StatusCode;
use serde_json::Value;

pub const SECRET: &str = "test-secret-test-secret-1234";

pub struct Running {
    pub relay: std::sync::Arc<Relay>,
    pub base: String,
    pub addr: std::net::SocketAddr,
    pub client: reqwest::Client,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// The relay with the default limits on `store`.
pub async fn start(store: impl Storage) -> Running {
    start_with(store, |_| {}, Default::default()).await
}

/// The relay on `store`, with `configure`d settings and serving `limits`.
pub async fn start_with(
    store: impl Storage,
    configure: impl FnOnce(&mut RelayConfig),
    limits: kluis_https::ServeLimits,
) -> Running {
    let mut config = RelayConfig::new(SECRET.into());
    configure(&mut config);
    let relay = Relay::new(store, config);
    let served = relay.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(kluis_https::serve(
        listener,
        None,
        router(served),
        limits,
        async {
            let _ = stopped.await;
        },
    ));
    Running {
        relay,
        base: format!("http://{addr}"),
        addr,
        client: reqwest::Client::new(),
        _stop: stop,
    }
}

impl Running {
    /// A request to the inbox API at `path` with `key` as the bearer.
    pub fn api(&self, method: reqwest::Method, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(key)
    }

    /// A new inbox of the tenant with `key`: its id and callback path.
    pub async fn create_as(&self, key: &str) -> (String, String) {
        let r = self
            .api(reqwest::Method::POST, "/api/inboxes", key)
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

    /// Waits until this instance has `n` long-polls parked.
    pub async fn wait_parked(&self, n: u64) {
        loop {
            let stats: Value = self
                .api(reqwest::Method::GET, "/api/stats", SECRET)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if stats["polls_waiting"] == n {
                return;
            }
            tokio::task::yield_now().await;
        }
    }

    /// A new inbox with the shared secret: its id and callback path.
    pub async fn create(&self) -> (String, String) {
        self.create_as(SECRET).await
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
