//! A failed connection is named for what it is, with the advice that fits it: the service
//! unreachable, or the backup's file host unreachable (a certificate this computer does not
//! trust: `session.rs`) — over real TLS on 127.0.0.1.

use crate::common::*;
use kluis_core::{Code, Destination, JobEvent, Stage};

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

/// A service that stops while a job waits for its callback is noticed at the next liveness
/// check (not at the callback deadline); a service that keeps answering is not reported.
#[tokio::test]
async fn a_service_that_stops_while_a_job_waits_is_noticed() {
    let sim = sim(|c| c.faults.no_callback = true).await;
    let mut config = demo_config(&sim);
    config.timeouts.liveness_check = std::time::Duration::from_millis(100);
    let h = Harness::with(sim, config, Default::default()).await;
    let cancel = tokio::sync::Notify::new();
    let mut job = h.job();
    job.cancel = Some(&cancel);
    let (sent, mut events) = tokio::sync::mpsc::unbounded_channel();
    let request = h.request();
    let mut forward = |e| {
        let _ = sent.send(e);
    };
    let run = job.run(&request, &mut forward);
    let watch = async {
        let mut seen = Vec::new();
        // Accepted, then a few liveness checks while the service still answers.
        while let Some(e) = events.recv().await {
            seen.push(e.clone());
            if e == (JobEvent::Stage {
                stage: Stage::Accepted,
            }) {
                break;
            }
        }
        // The sim counts each check (a path the document does not name); three answered
        // checks, and no event: a service that answers is not reported.
        let checked = async {
            while h.sim.stats().unknown_paths < 3 {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(10), checked)
            .await
            .expect("the service is asked whether it answers while the job waits");
        assert!(
            events.try_recv().is_err(),
            "nothing said while the service answers"
        );
        h.sim.stop();
        let next = events.recv().await;
        assert_eq!(
            next,
            Some(JobEvent::Service { answering: false }),
            "after {seen:?}"
        );
        cancel.notify_one();
    };
    let (outcome, ()) = tokio::join!(run, watch);
    assert_eq!(outcome.unwrap_err().code(), Code::Cancelled);
}
