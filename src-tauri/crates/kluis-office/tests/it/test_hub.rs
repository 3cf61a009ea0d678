//! An office hub for tests: a kluis-relay over TLS on 127.0.0.1 with its own CA and the tenant
//! `office`, and PC keys made for it as `kluis-relay tenant pc-key add office NAME` makes them.
//! Shared by kluis-office's, kluis-desktop's and kluis-cli's tests (included by path).

use std::sync::Arc;

use kluis_relay::tenants::new_key;

pub struct TestHub {
    pub url: String,
    /// The hub's CA, PEM.
    pub ca_pem: String,
    pub relay: Arc<kluis_relay::Relay>,
    /// Stops the hub (it answers no more; connections are refused).
    pub stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// Where it listens, with what certificate, and the task serving (for [`TestHub::restart`]).
    addr: std::net::SocketAddr,
    ca: kluis_https::LocalCa,
    serving: Option<tokio::task::JoinHandle<()>>,
}

impl TestHub {
    /// A hub on `store`, with the tenant `office`.
    pub async fn start(store: impl kluis_relay::Storage) -> TestHub {
        let relay = kluis_relay::Relay::new(
            store,
            kluis_relay::RelayConfig::new("office-hub-test-secret-0123456789".into()),
        );
        let ca = kluis_https::LocalCa::generate("office hub CA").unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("https://127.0.0.1:{}", addr.port());
        let (stop, serving) = serve(listener, &ca, relay.clone());
        let tenant = new_key();
        let added = relay
            .store()
            .add_tenant("office", Default::default(), &tenant.id, tenant.hash);
        assert!(added.await.unwrap());
        TestHub {
            url,
            ca_pem: ca.ca_pem(),
            relay,
            stop: Some(stop),
            addr,
            ca,
            serving: Some(serving),
        }
    }

    /// The hub back after it was stopped (a restart): the same address, certificate and data.
    pub async fn restart(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            serving.await.unwrap();
        }
        let listener = tokio::net::TcpListener::bind(self.addr).await.unwrap();
        let (stop, serving) = serve(listener, &self.ca, self.relay.clone());
        (self.stop, self.serving) = (Some(stop), Some(serving));
    }

    /// A hub on SQLite in memory (a one-instance relay).
    pub async fn in_memory() -> TestHub {
        Self::start(kluis_relay::SqliteStore::in_memory().unwrap()).await
    }

    /// A PC key of the office for PC `name`.
    pub async fn pc_key(&self, name: &str) -> String {
        let key = new_key();
        assert!(self
            .relay
            .store()
            .add_pc("office", name, &key.id, key.hash)
            .await
            .unwrap());
        key.text
    }
}

/// Serves `relay` on `listener` until the returned sender is used (or dropped).
fn serve(
    listener: tokio::net::TcpListener,
    ca: &kluis_https::LocalCa,
    relay: Arc<kluis_relay::Relay>,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(kluis_https::serve_tls(
        listener,
        ca.server_config(&["127.0.0.1"]).unwrap(),
        kluis_relay::router(relay),
        Default::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    (stop, serving)
}
