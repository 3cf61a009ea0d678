//! The tunnel transport against a fake `cloudflared` that behaves like the real one: a
//! metrics endpoint with `/ready` and `/quicktunnel`, and a TLS front that forwards the
//! public URL to the `--url` it was given. The fake is this very test binary: started with
//! cloudflared's arguments (`tunnel --url …`) it plays cloudflared; otherwise it runs the
//! tests (a custom harness, so they run one after another and may set the fake's mode).
//! `FAKE_CLOUDFLARED_MODE` = `exit-early` | `never-ready` | `exit-when-asked` (it stops once
//! it has told its hostname) makes the fake misbehave.

mod common;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use kluis_core::callback::TunnelTransport;
use kluis_core::CallbackTransport;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    if args.get(1).map(String::as_str) == Some("tunnel") {
        runtime.block_on(fake_cloudflared(&args));
        return;
    }
    type Test = fn() -> Pin<Box<dyn Future<Output = ()>>>;
    let tests: [(&str, Test); 5] = [
        ("backup_through_the_tunnel", || {
            Box::pin(backup_through_the_tunnel())
        }),
        ("cloudflared_that_exits_early", || {
            Box::pin(cloudflared_that_exits_early())
        }),
        ("cloudflared_that_never_gets_ready", || {
            Box::pin(cloudflared_that_never_gets_ready())
        }),
        ("missing_cloudflared", || Box::pin(missing_cloudflared())),
        ("cloudflared_that_stops_after_it_was_ready", || {
            Box::pin(cloudflared_that_stops_after_it_was_ready())
        }),
    ];
    let filter = args.iter().skip(1).find(|a| !a.starts_with('-'));
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in tests {
        if filter.is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runtime.block_on(test())));
        std::env::remove_var("FAKE_CLOUDFLARED_MODE");
        match outcome {
            Ok(()) => {
                println!("test {name} ... ok");
                passed += 1;
            }
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}

fn me() -> PathBuf {
    std::env::current_exe().unwrap()
}

/// A backup whose callback comes in through the (fake) tunnel's public URL.
async fn backup_through_the_tunnel() {
    let tunnel = TunnelTransport::start(&me())
        .await
        .expect("the tunnel comes up");
    assert_eq!(tunnel.public_url().scheme(), "https");
    assert_eq!(tunnel.name(), "tunnel");
    let mut h = Harness::new(|_| {}).await;
    h.transport = Arc::new(tunnel);
    let (saved, _) = h.backup().await;
    let saved = saved.expect("the callback travels through the tunnel");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    assert_eq!(h.history.list(None, 1).unwrap()[0].transport, "tunnel");
}

/// cloudflared that exits before it is ready: a clear network error, not a hang.
async fn cloudflared_that_exits_early() {
    std::env::set_var("FAKE_CLOUDFLARED_MODE", "exit-early");
    let err = TunnelTransport::start(&me())
        .await
        .err()
        .expect("must fail");
    assert_eq!(err.code(), "network");
    assert!(
        err.to_string()
            .contains("stopped before the tunnel was ready"),
        "{err}"
    );
}

/// cloudflared that never reports ready: an error after the timeout.
async fn cloudflared_that_never_gets_ready() {
    std::env::set_var("FAKE_CLOUDFLARED_MODE", "never-ready");
    let err = TunnelTransport::start_with(&me(), Duration::from_secs(2))
        .await
        .err()
        .expect("must fail");
    assert_eq!(err.code(), "network");
    assert!(err.to_string().contains("did not become ready"), "{err}");
}

/// No cloudflared installed: a configuration error that says what to do.
async fn missing_cloudflared() {
    let err = TunnelTransport::start(std::path::Path::new("/nonexistent/cloudflared"))
        .await
        .err()
        .expect("must fail");
    assert_eq!(err.code(), "config");
    assert!(err.to_string().contains("Install cloudflared"), "{err}");
}

/// cloudflared that stops after the tunnel came up (a batch shares one tunnel for all its
/// klanten): the next job is refused at once with what happened, rather than waiting out its
/// callback time for a URL that reaches nothing, and the engine's kept transports build a new
/// tunnel for the next job.
async fn cloudflared_that_stops_after_it_was_ready() {
    std::env::set_var("FAKE_CLOUDFLARED_MODE", "exit-when-asked");
    let tunnel = TunnelTransport::start(&me())
        .await
        .expect("the tunnel comes up");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while tunnel.is_alive() {
        assert!(std::time::Instant::now() < deadline, "the fake stops");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let err = tunnel
        .prepare(uuid::Uuid::new_v4())
        .await
        .err()
        .expect("refused");
    assert_eq!(err.code(), "network");
    assert!(err.to_string().contains("cloudflared stopped"), "{err}");

    let kept = kluis_core::engine::Transports::default();
    let dead: Arc<dyn CallbackTransport> = Arc::new(tunnel);
    let first = kept
        .get_or_build("tunnel", true, async {
            Ok::<_, kluis_core::Error>(dead.clone())
        })
        .await
        .unwrap();
    std::env::set_var("FAKE_CLOUDFLARED_MODE", "");
    let started = async {
        let fresh = TunnelTransport::start(&me()).await?;
        Ok::<_, kluis_core::Error>(Arc::new(fresh) as Arc<dyn CallbackTransport>)
    };
    let second = kept.get_or_build("tunnel", true, started).await.unwrap();
    assert!(Arc::ptr_eq(&first, &dead));
    assert!(
        !Arc::ptr_eq(&second, &dead),
        "a new tunnel for the next job"
    );
    assert!(second.is_alive());
}

/// The fake: `tunnel --url http://HOST:PORT --no-autoupdate --metrics ADDR`.
async fn fake_cloudflared(args: &[String]) {
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .expect(flag)
    };
    let target: SocketAddr = value("--url")
        .trim_start_matches("http://")
        .parse()
        .expect("--url http://HOST:PORT");
    let metrics: SocketAddr = value("--metrics").parse().expect("--metrics ADDR");
    let mode = std::env::var("FAKE_CLOUDFLARED_MODE").unwrap_or_default();
    if mode == "exit-early" {
        std::process::exit(1);
    }
    // The public side: TLS in front of the local listener (the real one's edge does this).
    let (port, _) = tls_front(target, "fake cloudflared edge").await;
    let hostname = format!("127.0.0.1:{port}");
    let ready = mode != "never-ready";
    // (exit-when-asked: once the hostname has been told, the process ends.)
    let told = std::sync::Arc::new(tokio::sync::Notify::new());
    let stop_when_told = (mode == "exit-when-asked").then(|| told.clone());
    let router = axum::Router::new()
        .route(
            "/ready",
            axum::routing::get(move || async move {
                if ready {
                    (
                        axum::http::StatusCode::OK,
                        "{\"status\":200,\"readyConnections\":1}",
                    )
                } else {
                    (
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        "{\"status\":503,\"readyConnections\":0}",
                    )
                }
            }),
        )
        .route(
            "/quicktunnel",
            axum::routing::get(move || async move {
                told.notify_one();
                axum::Json(serde_json::json!({ "hostname": hostname }))
            }),
        );
    let listener = tokio::net::TcpListener::bind(metrics)
        .await
        .expect("metrics address");
    let serving = axum::serve(listener, router);
    match stop_when_told {
        // The answer is sent (graceful: the request in hand is finished) and then it ends.
        Some(told) => {
            (serving.with_graceful_shutdown(async move { told.notified().await }))
                .await
                .unwrap();
            std::process::exit(0);
        }
        None => serving.await.unwrap(),
    }
}
