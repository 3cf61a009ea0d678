//! The callback transport interface with a transport other than loopback: a receiver that
//! fails its first callbacks, as a flaky proxy would, so the service must retry.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use async_trait::async_trait;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use kluis_core::callback::Registration;
use kluis_core::{CallbackId, CallbackTransport, Result};
use tokio::sync::watch;
use url::Url;
use uuid::Uuid;

struct Flaky {
    failures_left: u32,
    ids: Option<kluis_core::callback::ids::IdSender>,
}

/// Answers 503 to the first `failures` callbacks, then delivers ids.
struct FlakyTransport {
    url: Url,
    state: Arc<Mutex<Flaky>>,
    _stop: watch::Sender<bool>,
}

impl FlakyTransport {
    async fn start(failures: u32) -> FlakyTransport {
        let ca = kluis_https::LocalCa::generate("flaky").unwrap();
        let tls = ca.server_config(&["127.0.0.1"]).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = Url::parse(&format!(
            "https://127.0.0.1:{}/cb",
            listener.local_addr().unwrap().port()
        ))
        .unwrap();
        let state = Arc::new(Mutex::new(Flaky {
            failures_left: failures,
            ids: None,
        }));
        let router = axum::Router::new()
            .route("/cb", axum::routing::get(receive))
            .with_state(state.clone());
        let (stop, mut stopped) = watch::channel(false);
        tokio::spawn(kluis_https::serve_tls(
            listener,
            tls,
            router,
            Default::default(),
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            },
        ));
        FlakyTransport {
            url,
            state,
            _stop: stop,
        }
    }
}

async fn receive(State(state): State<Arc<Mutex<Flaky>>>, RawQuery(query): RawQuery) -> StatusCode {
    let mut state = state.lock().unwrap();
    if state.failures_left > 0 {
        state.failures_left -= 1;
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let id = query
        .as_deref()
        .and_then(|q| q.strip_prefix("id="))
        .and_then(CallbackId::parse);
    match (id, &state.ids) {
        (Some(id), Some(ids)) => {
            ids.push(id);
            StatusCode::OK
        }
        _ => StatusCode::NOT_FOUND,
    }
}

#[async_trait]
impl CallbackTransport for FlakyTransport {
    fn name(&self) -> &'static str {
        "flaky"
    }

    async fn prepare(&self, _job: Uuid) -> Result<Registration> {
        let (tx, rx) = kluis_core::callback::ids::channel();
        self.state.lock().unwrap().ids = Some(tx);
        Ok(Registration::local(self.url.clone(), rx, Box::new(())))
    }
}

async fn harness(receiver_failures: u32, service_retries: u32) -> Harness {
    let mut h = Harness::new(|c| c.faults.callback_retries = service_retries).await;
    h.transport = Arc::new(FlakyTransport::start(receiver_failures).await);
    h
}

/// The service retries a callback the receiver failed; the job completes on the retry.
#[tokio::test]
async fn service_retries_failed_callbacks() {
    let h = harness(2, 3).await;
    let (saved, _) = h.backup().await;
    saved.expect("the third callback gets through");
    assert_eq!(h.sim.stats().callbacks_sent, 3);
    assert_eq!(h.history.list(None, 1).unwrap()[0].transport, "flaky");
}

/// When every try fails the job ends in callback_timeout, with nothing saved.
#[tokio::test]
async fn callbacks_that_never_get_through_time_out() {
    let h = harness(10, 2).await;
    let mut request = h.request();
    request.callback_timeout = Duration::from_millis(800);
    let (saved, _) = h.backup_with(request).await;
    assert_eq!(saved.unwrap_err().code(), "callback_timeout");
    // (The service's tries go on after the job gave up: on a slow machine some come later.)
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while h.sim.stats().callbacks_sent < 3 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(h.sim.stats().callbacks_sent, 3, "one try and two retries");
    assert!(h.out_entries().is_empty());
}
