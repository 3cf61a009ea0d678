//! The attack suite of kluis-core: each test reproduces a fault found by the audit (issue 8)
//! against the simulator over real TLS, and fails on 197df1f.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use async_trait::async_trait;
use kluis_core::callback::Registration;
use kluis_core::download::Address;
use kluis_core::{CallbackTransport, Destination, ListenerTransport, PartialDownload, Result};
use uuid::Uuid;

/// A loopback listener whose URL an attacker has learnt: as soon as the job has it, `burst`
/// junk ids arrive at once before the service calls, then one every `every` around and after
/// the real callback, until the job ends. Every answer the listener gives junk is counted.
struct Attacked {
    inner: ListenerTransport,
    client: reqwest::Client,
    burst: usize,
    every: Duration,
    refused: Arc<std::sync::atomic::AtomicUsize>,
}

impl Attacked {
    async fn start(burst: usize, every: Duration) -> Attacked {
        let inner = ListenerTransport::loopback().await.unwrap();
        let ca = reqwest::Certificate::from_pem(inner.ca_pem().unwrap().as_bytes()).unwrap();
        let client = reqwest::Client::builder()
            .add_root_certificate(ca)
            .build()
            .unwrap();
        Attacked {
            inner,
            client,
            burst,
            every,
            refused: Arc::default(),
        }
    }
}

/// Sends one junk id to `url`; counts an answer other than 200 in `refused`.
async fn send_junk(
    client: &reqwest::Client,
    url: &url::Url,
    refused: &std::sync::atomic::AtomicUsize,
) {
    let junk = format!("{url}?id={}", Uuid::new_v4());
    if let Ok(response) = client.get(junk).send().await {
        if response.status() != reqwest::StatusCode::OK {
            refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

#[async_trait]
impl CallbackTransport for Attacked {
    fn name(&self) -> &'static str {
        "attacked"
    }

    async fn prepare(&self, job: Uuid) -> Result<Registration> {
        let registration = self.inner.prepare(job).await?;
        for _ in 0..self.burst {
            send_junk(&self.client, &registration.webhook_url, &self.refused).await;
        }
        let (client, url) = (self.client.clone(), registration.webhook_url.clone());
        let (every, refused) = (self.every, self.refused.clone());
        let flood = tokio::spawn(async move {
            let mut every = tokio::time::interval(every);
            loop {
                every.tick().await;
                send_junk(&client, &url, &refused).await;
            }
        });
        let guard = (registration.guard, AbortOnDrop(flood));
        Ok(Registration {
            guard: Box::new(guard),
            ..registration
        })
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Junk ids before, around and after the real one cost one `/webhook` call each and never
/// fail or starve the job, whatever client error the service answers a made-up id with.
#[tokio::test]
async fn junk_ids_do_not_stop_a_backup() {
    for status in [404, 400, 410, 422] {
        let mut h = Harness::new(|c| {
            c.faults.callback_delay = Duration::from_millis(300);
            c.faults.unknown_webhook_status = status;
        })
        .await;
        h.transport = Arc::new(Attacked::start(30, Duration::from_millis(200)).await);
        let (saved, _) = h.backup().await;
        let saved = saved.unwrap_or_else(|e| panic!("with {status} for junk: {e}"));
        assert_eq!(saved.sha256, expected_sha(256 * 1024));
        assert!(
            h.sim.stats().webhook >= 31,
            "every distinct id was redeemed"
        );
    }
}

/// A burst on the live callback path never refuses the real callback. The listener gave each
/// live path a burst of 40 and then 10 a second, and answered 429 beyond: 100 junk ids at
/// once, then one every 10 ms, and the service's one call was refused — the job waited out its
/// timeout. Now every request to the live path is answered 200, every distinct id is redeemed
/// oldest first, and the backup is saved within seconds of the callback.
#[tokio::test]
async fn a_burst_on_the_live_path_never_refuses_the_real_callback() {
    let mut h = Harness::new(|c| c.faults.callback_delay = Duration::from_millis(500)).await;
    let attacked = Arc::new(Attacked::start(100, Duration::from_millis(10)).await);
    let refused = attacked.refused.clone();
    h.transport = attacked;
    let (saved, _) = h.backup().await;
    let saved = saved.unwrap_or_else(|e| panic!("the real callback was lost: {e}"));
    assert_eq!(saved.sha256, expected_sha(256 * 1024));
    assert_eq!(
        refused.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "no request to the live path is refused"
    );
    assert!(
        h.sim.stats().webhook > 100,
        "the junk before it was redeemed too"
    );
}

/// Issue 44: junk sent to one klant's callback URL never holds a batch's download turn, nor
/// keeps its callback's deadline from running. One turn, held by a job whose download the
/// simulator holds; a second job that gets no real callback, only a flood of junk ids, ends at
/// its deadline as a timeout — while the first keeps its turn and is then saved. (1dee71f took
/// the turn for junk too: the second job waited for it with its deadline standing still.)
#[tokio::test(flavor = "multi_thread")]
async fn junk_ids_hold_no_download_turn() {
    use kluis_core::download::DownloadTurns;
    use kluis_core::engine::{Launch, Retry, ServiceConnection, Work};
    use kluis_core::{BackupRequest, DownloadOptions, Engine, Error, History, JobEvent, Stage};
    let h = Harness::new(|c| c.faults.hold_downloads = true).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let turns = DownloadTurns::new(1);
    let connection =
        Arc::new(ServiceConnection::open(h.config.clone(), DownloadOptions::default()).unwrap());
    let start = |request: BackupRequest, transport: Arc<dyn CallbackTransport>| {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let job = engine.start(Launch {
            work: Work::New(request),
            connection: connection.clone(),
            transport,
            events: Arc::new(move |event| drop(tx.send(event))),
            cancel: None,
            retry: Retry::NONE,
            download_turns: Some(turns.clone()),
        });
        (job, rx)
    };
    let (first, mut first_events) = start(h.request(), h.transport.clone());
    let downloading = JobEvent::Stage {
        stage: Stage::Downloading,
    };
    let wait = tokio::time::timeout(Duration::from_secs(60), async {
        while first_events.recv().await.expect("the first job runs") != downloading {}
    });
    wait.await.expect("the first job downloads");
    h.sim.set_faults(|f| f.no_callback = true);
    let flooded = BackupRequest {
        callback_timeout: Duration::from_secs(2),
        ..h.request()
    };
    let attacked = Arc::new(Attacked::start(30, Duration::from_millis(20)).await);
    let (second, _) = start(flooded, attacked);
    let ended = tokio::time::timeout(Duration::from_secs(60), second.finished())
        .await
        .expect("the flooded job ends at its deadline");
    assert!(matches!(ended, Err(Error::CallbackTimeout(_))), "{ended:?}");
    assert!(h.sim.stats().webhook > 30, "the junk was redeemed");
    assert_eq!(turns.free(), 0, "the first job kept its turn");
    h.sim.release_downloads();
    let saved = first.finished().await.expect("the first job saved");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
}

/// Continues `partial` (as a resumed job would) into the harness's output folder.
async fn continue_download(
    h: &Harness,
    url: &url::Url,
    partial: PartialDownload,
) -> Result<kluis_core::Saved> {
    let into = Destination::Folder(h.out.path().to_path_buf());
    h.downloader
        .download_resumable(
            Address::fixed(url),
            &into,
            Some(partial),
            None,
            &mut |_| {},
            &mut |_| {},
        )
        .await
}

/// A part file the journal names may have been replaced by a link to another file meanwhile;
/// continuing the download must not write through it (the victim keeps its bytes). (Unix:
/// making a symbolic link on Windows takes a privilege; this binary is only built there.)
#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_part_file_is_not_followed() {
    let h = Harness::new(|_| {}).await;
    let victim_dir = tempfile::tempdir().unwrap();
    let victim = victim_dir.path().join("precious.txt");
    std::fs::write(&victim, b"the user's own file").unwrap();
    let part = h
        .out
        .path()
        .join(format!(".kluis-{}.part", Uuid::new_v4().simple()));
    std::os::unix::fs::symlink(&victim, &part).unwrap();
    let url = h.sim.file_url(64 * 1024);
    let partial = PartialDownload {
        part: part.clone(),
        validator: "\"not-the-file\"".into(),
        total: Some(64 * 1024),
        disposition: None,
        sha256: None,
        encrypted: false,
    };
    let saved = continue_download(&h, &url, partial)
        .await
        .expect("downloaded afresh");
    assert_eq!(std::fs::read(&victim).unwrap(), b"the user's own file");
    assert_eq!(sha256_of(&saved.path), expected_sha(64 * 1024));
}

/// A part file changed while no Kluis ran (one byte flipped) is caught after the resume by
/// the server's digest, journalled with the part.
#[tokio::test]
async fn a_corrupted_part_file_is_caught_after_a_resume() {
    let h = Harness::new(|_| {}).await;
    let size = 256 * 1024u64;
    let url = h.sim.file_url(size);
    let head = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(h.sim.ca_pem().as_bytes()).unwrap())
        .build()
        .unwrap()
        .get(url.clone())
        .send()
        .await
        .unwrap();
    let etag = head.headers()["etag"].to_str().unwrap().to_string();
    drop(head);
    let mut first = kluis_sim::payload::file_slice(size, 0, 60_000).to_vec();
    first[5_000] ^= 0xff;
    let part = h
        .out
        .path()
        .join(format!(".kluis-{}.part", Uuid::new_v4().simple()));
    std::fs::write(&part, &first).unwrap();
    let partial = PartialDownload {
        part,
        validator: etag,
        total: Some(size),
        disposition: None,
        sha256: Some(expected_sha(size)),
        encrypted: false,
    };
    let error = continue_download(&h, &url, partial)
        .await
        .expect_err("the corrupted prefix is detected");
    assert_eq!(error.code(), "download_failed", "{error}");
    assert!(h.out_entries().is_empty(), "nothing is left behind");
}

/// An encrypted part file is never continued without encryption (plain bytes after an age
/// header would be saved, and verified, as a backup that is neither): refused whether the
/// journal says the part is encrypted or, as in journals written before it did, only the
/// part's own header does; the part and the folder are left as they were.
#[tokio::test]
async fn an_encrypted_part_is_never_continued_in_plain() {
    let h = Harness::new(|_| {}).await;
    let size = 256 * 1024u64;
    let url = h.sim.file_url(size);
    for journalled in [true, false] {
        let part = h
            .out
            .path()
            .join(format!(".kluis-{}.part", Uuid::new_v4().simple()));
        let mut sealed = b"age-encryption.org/v1\n-> scrypt salt 18\n".to_vec();
        sealed.extend_from_slice(&[0x5a; 4096]);
        std::fs::write(&part, &sealed).unwrap();
        let partial = PartialDownload {
            part: part.clone(),
            validator: "\"v\"".into(),
            total: Some(size),
            disposition: None,
            sha256: None,
            encrypted: journalled,
        };
        let error = continue_download(&h, &url, partial)
            .await
            .expect_err("an encrypted part is not continued in plain");
        assert_eq!(error.code(), "config", "{error}");
        assert!(error.to_string().contains("encrypt"), "{error}");
        assert_eq!(
            std::fs::read(&part).unwrap(),
            sealed,
            "the part is left as it was (journalled: {journalled})"
        );
        std::fs::remove_file(&part).unwrap();
        assert!(h.out_entries().is_empty(), "nothing saved");
    }
}

/// `--timeout` near `u64::MAX` does not panic after the POST was sent: the backup runs.
#[tokio::test]
async fn an_enormous_timeout_does_not_panic() {
    let h = Harness::new(|_| {}).await;
    let mut request = h.request();
    request.callback_timeout = Duration::from_secs(u64::MAX);
    let (saved, _) = h.backup_with(request).await;
    saved.expect("saved");
}

/// A server that echoes the sign-in request (an error page, or a 200 that is not JSON) puts
/// no part of the password or api key into the error, in any encoding.
#[tokio::test]
async fn an_echoed_password_is_scrubbed_from_errors() {
    for status in [500, 200, 400] {
        let sim = sim(|c| {
            c.faults.echo_authenticate = Some(status);
            c.accounts[0].password = "Kw@kkel Zomerzon!/ü+&".into();
        })
        .await;
        let config = service_config(
            &sim,
            &kluis_sim::config::DEMO_API_KEY.to_string(),
            "Kw@kkel Zomerzon!/ü+&",
        );
        let error = session(config).sign_in().await.expect_err("refused");
        let shown = format!("{error} {}", serde_json::to_string(&error).unwrap());
        for leak in [
            "kkel",
            "Zomerzon",
            &kluis_sim::config::DEMO_API_KEY.to_string(),
        ] {
            assert!(!shown.contains(leak), "{status}: {shown}");
        }
    }
}

/// A relay (or anything at its address) that answers with a huge body is refused after the
/// cap, not buffered whole (on 197df1f the relay's and webhook.site's answers had no cap).
#[tokio::test]
async fn a_huge_relay_answer_is_not_read_into_memory() {
    use axum::routing::post;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let huge = || async {
        let filler = "x".repeat(16 * 1024 * 1024);
        format!("{{\"inbox\":\"a\",\"callback_path\":\"/cb/a/b\",\"pad\":\"{filler}\"}}")
    };
    let router = axum::Router::new().route("/api/inboxes", post(huge));
    tokio::spawn(async move { axum::serve(listener, router).await });
    let config = kluis_core::ServiceConfig::new(
        "http://127.0.0.1:1/webservice_v2",
        kluis_core::Secret::new(Uuid::new_v4().to_string()),
        "klant".into(),
        kluis_core::Secret::new("password"),
        true,
    )
    .unwrap();
    let relay = kluis_core::callback::RelayTransport::new(
        &format!("http://{addr}"),
        kluis_core::Secret::new("relay-secret-relay-secret"),
        &config,
        None,
    )
    .unwrap();
    let refused = relay.prepare(Uuid::new_v4()).await.err().expect("refused");
    assert_eq!(refused.code(), "bad_response", "{refused}");
}
