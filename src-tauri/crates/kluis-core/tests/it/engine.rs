//! The job engine every front end drives: jobs side by side with typed events, cancel (even
//! before the start), stop and shutdown that keep a collectable job, and the one resume loop —
//! against the simulator (and a relay) over real TLS on 127.0.0.1.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kluis_core::callback::RelayTransport;
use kluis_core::download::DownloadTurns;
use kluis_core::encryption::Encryption;
use kluis_core::engine::{EventSink, Launch, ResumeScope, Retry, ServiceConnection, Work};
use kluis_core::BackupRequest;
use kluis_core::KlantKey;
use kluis_core::{
    CallbackTransport, Code, DownloadOptions, Engine, Error, History, JobEvent, Owner, Secret,
    Stage,
};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

/// An event sink and the receiving end of what it was sent.
fn sink() -> (EventSink, UnboundedReceiver<JobEvent>) {
    let (tx, rx) = unbounded_channel();
    (Arc::new(move |event| drop(tx.send(event))), rx)
}

/// Waits until `events` reports `stage`.
async fn reached(events: &mut UnboundedReceiver<JobEvent>, stage: Stage) {
    while let Some(event) = events.recv().await {
        if event == (JobEvent::Stage { stage }) {
            return;
        }
    }
    panic!("the job ended before {stage}");
}

fn connection(h: &Harness) -> Arc<ServiceConnection> {
    Arc::new(ServiceConnection::open(h.config.clone(), DownloadOptions::default()).unwrap())
}

fn launch(h: &Harness, transport: Arc<dyn CallbackTransport>, events: EventSink) -> Launch {
    Launch {
        work: Work::New(h.request()),
        connection: connection(h),
        transport,
        events,
        cancel: None,
        retry: Retry::NONE,
        download_turns: None,
    }
}

/// Tried again once, after a moment.
const ONCE_MORE: Retry = Retry {
    tries: 1,
    first_delay: Duration::from_millis(10),
};

/// The `Retrying` events `events` received so far.
fn retries_seen(events: &mut UnboundedReceiver<JobEvent>) -> Vec<(Code, u64)> {
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let JobEvent::Retrying { code, in_secs, .. } = event {
            seen.push((code, in_secs));
        }
    }
    seen
}

/// A harness whose service trusts a relay too; returns the relay's URL and its keep-alive.
async fn with_relay(h: &mut Harness) -> (String, tokio::sync::watch::Sender<bool>) {
    let (url, ca, keep) = relay().await;
    h.config.extra_ca_pem = Some(format!("{}{ca}", h.sim.ca_pem()));
    (url, keep)
}

fn relay_transport(h: &Harness, url: &str) -> Arc<dyn CallbackTransport> {
    Arc::new(RelayTransport::new(url, Secret::new(RELAY_SECRET), &h.config, None).unwrap())
}

/// Two jobs run side by side in one engine on one shared transport; each reports its own
/// stages in order, with download progress, and both are saved and verified.
#[tokio::test]
async fn jobs_run_side_by_side_with_their_own_events() {
    let h = Harness::new(|_| {}).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let (first_sink, mut first_events) = sink();
    let (second_sink, mut second_events) = sink();
    let first = engine.start(launch(&h, h.transport.clone(), first_sink));
    let second = engine.start(launch(&h, h.transport.clone(), second_sink));
    assert!(engine.is_running(first.id) && engine.is_running(second.id));
    let (first_id, second_id) = (first.id, second.id);
    let (a, b) = tokio::join!(first.finished(), second.finished());
    let (a, b) = (a.expect("first saved"), b.expect("second saved"));
    assert_ne!(a.path, b.path, "each its own file");
    assert_eq!(a.sha256, expected_sha(a.bytes));
    assert_eq!(b.sha256, expected_sha(b.bytes));
    for events in [&mut first_events, &mut second_events] {
        let mut stages = Vec::new();
        let mut progress = 0;
        while let Ok(event) = events.try_recv() {
            match event {
                JobEvent::Stage { stage } => stages.push(stage),
                JobEvent::Progress(_) => progress += 1,
                JobEvent::Service { answering } => {
                    panic!("the service answered all along, yet answering = {answering}")
                }
                JobEvent::Retrying { message, .. } => panic!("nothing failed, yet: {message}"),
            }
        }
        use Stage::*;
        assert_eq!(
            stages,
            [
                Requested,
                Accepted,
                CallbackReceived,
                ResultFetched,
                Downloading,
                Saved
            ]
        );
        assert!(progress > 0, "download progress is reported");
    }
    for id in [first_id, second_id] {
        assert!(!engine.is_running(id), "an ended job leaves the engine");
        let entry = engine.history().get(id).unwrap().unwrap();
        assert_eq!(entry.reached(), Stage::Saved);
    }
}

/// The user's cancel ends a waiting job as cancelled, through the job's own path (recorded,
/// nothing left in the folder); a second cancel finds nothing to cancel.
#[tokio::test]
async fn cancel_ends_a_job_as_cancelled() {
    let h = Harness::new(|c| c.faults.callback_delay = Duration::from_secs(30)).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let (events, mut seen) = sink();
    let job = engine.start(launch(&h, h.transport.clone(), events));
    let id = job.id;
    reached(&mut seen, Stage::Accepted).await;
    assert!(engine.cancel(id), "a running job can be cancelled");
    assert!(matches!(job.finished().await, Err(Error::Cancelled)));
    let entry = engine.history().get(id).unwrap().unwrap();
    assert_eq!(
        (
            entry.reached(),
            entry.error_code.map(kluis_core::Code::as_str)
        ),
        (Stage::Failed, Some("cancelled"))
    );
    assert!(!engine.cancel(id), "nothing left to cancel");
    assert!(h.out_entries().is_empty(), "no file, no part file");
}

/// A cancel signalled before the job starts counts (the CLI's Ctrl-C while a transport is
/// still being set up): the job ends as cancelled without asking the service.
#[tokio::test]
async fn a_cancel_before_the_start_counts() {
    let h = Harness::new(|_| {}).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let cancel = Arc::new(tokio::sync::Notify::new());
    cancel.notify_one();
    let mut launch = launch(&h, h.transport.clone(), Arc::new(|_| {}));
    launch.cancel = Some(cancel);
    let job = engine.start(launch);
    assert!(matches!(job.finished().await, Err(Error::Cancelled)));
    assert_eq!(h.sim.stats().backups_started, 0, "nothing was asked");
}

/// A relay job stopped after the 202 (the program stopped): journalled, in its stage.
struct Stopped {
    h: Harness,
    _relay: tokio::sync::watch::Sender<bool>,
    history: Arc<History>,
    engine: Engine,
    id: uuid::Uuid,
}

async fn stopped_relay_job() -> Stopped {
    stopped_relay_job_encrypting(None).await
}

/// [`stopped_relay_job`], its download encrypted to `encryption` when given.
async fn stopped_relay_job_encrypting(encryption: Option<Arc<Encryption>>) -> Stopped {
    // The callback is held until the job is stopped: it surely finds the job waiting.
    let mut h = Harness::new(|c| c.faults.hold_callbacks = true).await;
    let (url, relay) = with_relay(&mut h).await;
    let history = Arc::new(History::in_memory().unwrap());
    let engine = Engine::new(history.clone());
    let (events, mut seen) = sink();
    let options = DownloadOptions {
        encryption,
        ..DownloadOptions::default()
    };
    let job = engine.start(Launch {
        connection: Arc::new(ServiceConnection::open(h.config.clone(), options).unwrap()),
        ..launch(&h, relay_transport(&h, &url), events)
    });
    let id = job.id;
    reached(&mut seen, Stage::Accepted).await;
    engine.stop(id).await;
    assert!(matches!(job.finished().await, Err(Error::Interrupted)));
    assert_eq!(history.get(id).unwrap().unwrap().reached(), Stage::Accepted);
    h.sim.release_callbacks();
    Stopped {
        h,
        _relay: relay,
        history,
        engine,
        id,
    }
}

/// Stopping a relay job (the machine's "not now") keeps it journalled in its stage; a new
/// engine's resume loop rebuilds its relay transport from the journal and finishes it, with
/// one backup asked of the service in all.
#[tokio::test]
async fn a_stopped_job_is_finished_by_the_resume_loop() {
    let stopped = stopped_relay_job().await;
    let (h, history, id) = (&stopped.h, &stopped.history, stopped.id);

    let engine = Engine::new(history.clone()); // as a restarted program's
    let scope = ResumeScope {
        base_url: h.config.base_url.to_string(),
        owner: Some(Owner::Cli),
        relay_secret: Some(Secret::new(RELAY_SECRET)),
    };
    let service = connection(h);
    let connect = |profile: KlantKey, _| {
        assert_eq!(profile.as_str(), "test", "asked for the job's profile");
        let service = service.clone();
        async move { Ok(service) }
    };
    let (events, _seen) = sink();
    let resumed = engine
        .resume(scope, connect, |_| events.clone())
        .await
        .unwrap();
    assert!(resumed.ended.is_empty() && resumed.not_started.is_empty());
    let [job] = <[_; 1]>::try_from(resumed.started).ok().expect("one job");
    assert_eq!((job.id, job.stage), (id, Stage::Accepted));
    let saved = job.handle.finished().await.expect("finished");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    assert_eq!(history.get(id).unwrap().unwrap().reached(), Stage::Saved);
    assert_eq!(h.sim.stats().backups_started, 1);
}

/// A job begun encrypted journals how (the recipient, never a secret) and is not finished by a
/// connection that does not encrypt (the app's, once the klant's encryption is switched
/// off): that job refuses before anything changes — nothing saved, the service not asked
/// again, still unfinished — and a connection that encrypts as the journal says, asked for
/// with that setting, finishes it encrypted.
#[tokio::test]
async fn a_job_begun_encrypted_is_never_finished_in_plain() {
    let identity = age::x25519::Identity::generate();
    let recipient = identity.to_public().to_string();
    let encryption = Arc::new(Encryption::recipient(&recipient).unwrap());
    let stopped = stopped_relay_job_encrypting(Some(encryption.clone())).await;
    let (h, history, id) = (&stopped.h, &stopped.history, stopped.id);
    let journalled = history.journal(id).unwrap().unwrap().encryption;
    assert_eq!(journalled, Some(encryption.setting().clone()));

    let scope = || ResumeScope {
        base_url: h.config.base_url.to_string(),
        owner: Some(Owner::Cli),
        relay_secret: Some(Secret::new(RELAY_SECRET)),
    };
    let quiet: EventSink = Arc::new(|_| {});
    let plain = connection(h);
    let engine = Engine::new(history.clone()); // as a restarted program's
    let refused = engine
        .resume(
            scope(),
            |_, _| async { Ok(plain.clone()) },
            |_| quiet.clone(),
        )
        .await
        .unwrap();
    let [job] = <[_; 1]>::try_from(refused.started).ok().expect("one job");
    let error = job
        .handle
        .finished()
        .await
        .expect_err("not finished in plain");
    assert_eq!(error.code(), "config", "{error}");
    assert!(error.to_string().contains(&recipient), "says how: {error}");
    assert_eq!(
        history.get(id).unwrap().unwrap().reached(),
        Stage::Accepted,
        "still unfinished"
    );
    assert!(h.out_entries().is_empty(), "nothing saved");

    let sealed = Arc::new(
        ServiceConnection::open(
            h.config.clone(),
            DownloadOptions {
                encryption: Some(encryption.clone()),
                ..DownloadOptions::default()
            },
        )
        .unwrap(),
    );
    let asked = std::sync::Mutex::new(None);
    let connect = |_, setting| {
        *asked.lock().unwrap() = Some(setting);
        let sealed = sealed.clone();
        async move { Ok(sealed) }
    };
    let resumed = engine
        .resume(scope(), connect, |_| quiet.clone())
        .await
        .unwrap();
    assert_eq!(
        asked.lock().unwrap().clone(),
        Some(journalled),
        "the connection was asked for the journal's encryption"
    );
    let [job] = <[_; 1]>::try_from(resumed.started).ok().expect("one job");
    let saved = job.handle.finished().await.expect("finished encrypted");
    assert!(saved.encrypted.is_some(), "saved encrypted");
    assert!(std::fs::read(&saved.path)
        .unwrap()
        .starts_with(b"age-encryption.org/v1\n"));
    assert_eq!(h.sim.stats().backups_started, 1, "the service asked once");
}

/// The resume loop leaves another program's jobs, and keeps a job whose profile cannot
/// connect now for a later resume instead of ending it.
#[tokio::test]
async fn the_resume_loop_leaves_what_it_may_not_take() {
    let stopped = stopped_relay_job().await;
    let (h, history, engine, id) = (&stopped.h, &stopped.history, &stopped.engine, stopped.id);

    let scope = |owner| ResumeScope {
        base_url: h.config.base_url.to_string(),
        owner: Some(owner),
        relay_secret: Some(Secret::new(RELAY_SECRET)),
    };
    let quiet: EventSink = Arc::new(|_| {});
    let never =
        |_: KlantKey, _| async { Err::<Arc<ServiceConnection>, _>(Error::Config("no".into())) };
    let other = engine
        .resume(scope(Owner::App), never, |_| quiet.clone())
        .await
        .unwrap();
    assert_eq!(
        other.other_owner, 1,
        "the CLI's job is not the app's to take"
    );
    assert!(other.started.is_empty());
    let later = engine
        .resume(scope(Owner::Cli), never, |_| quiet.clone())
        .await
        .unwrap();
    assert_eq!(later.not_started.len(), 1, "kept for later");
    assert_eq!(
        history.get(id).unwrap().unwrap().reached(),
        Stage::Accepted,
        "still unfinished"
    );
}

/// Shutdown stops every running job and waits for each: collectable ones stay journalled,
/// and their handles end as interrupted.
#[tokio::test]
async fn shutdown_stops_every_job_and_keeps_them() {
    let mut h = Harness::new(|c| c.faults.callback_delay = Duration::from_secs(30)).await;
    let (url, _relay) = with_relay(&mut h).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let mut handles = Vec::new();
    for _ in 0..2 {
        let (events, mut seen) = sink();
        handles.push(engine.start(launch(&h, relay_transport(&h, &url), events)));
        reached(&mut seen, Stage::Accepted).await;
    }
    engine.shutdown().await;
    for job in handles {
        let id = job.id;
        assert!(!engine.is_running(id));
        assert!(matches!(job.finished().await, Err(Error::Interrupted)));
        let entry = engine.history().get(id).unwrap().unwrap();
        assert_eq!(entry.reached(), Stage::Accepted, "kept for the next start");
    }
}

/// A backup nobody watches that fails for a passing reason (the service answers 500 to the
/// POST) is tried again as the same job: one handle, a `Retrying` event with the reason, and
/// the second try saved. The history keeps both tries, the first failed with its reason.
#[tokio::test]
async fn a_passing_failure_is_tried_again_as_the_same_job() {
    let h = Harness::new(|c| c.faults.backup_failures_after_start = 1).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let (events, mut seen) = sink();
    let job = engine.start(Launch {
        retry: ONCE_MORE,
        ..launch(&h, h.transport.clone(), events)
    });
    let first_try = job.id;
    let (last_try, outcome) = job.finished_try().await;
    let saved = outcome.expect("saved at the second try");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    assert_eq!(retries_seen(&mut seen), [(Code::ServiceError, 0)]);
    assert_ne!(last_try, first_try, "each try is its own history entry");
    let history = engine.history();
    let first = history.get(first_try).unwrap().unwrap();
    assert_eq!(first.reached(), Stage::Failed);
    assert_eq!(first.error_code, Some(Code::ServiceError));
    assert_eq!(
        history.get(last_try).unwrap().unwrap().reached(),
        Stage::Saved
    );
    assert_eq!(h.sim.stats().backups_started, 2);
}

/// Tries run out: the job ends with the last try's failure, after as many `Retrying` events
/// as tries, each wait twice the one before.
#[tokio::test]
async fn a_lasting_passing_failure_ends_when_the_tries_run_out() {
    let h = Harness::new(|c| c.faults.backup_failures_after_start = 10).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let (events, mut seen) = sink();
    let job = engine.start(Launch {
        retry: Retry {
            tries: 2,
            first_delay: Duration::from_millis(1),
        },
        ..launch(&h, h.transport.clone(), events)
    });
    let (last_try, outcome) = job.finished_try().await;
    assert!(
        matches!(outcome, Err(Error::ServiceError(_))),
        "{outcome:?}"
    );
    assert_eq!(retries_seen(&mut seen).len(), 2);
    assert_eq!(
        h.sim.stats().backups_started,
        3,
        "the first try and two more"
    );
    let last = engine.history().get(last_try).unwrap().unwrap();
    assert_eq!(last.error_code, Some(Code::ServiceError));
}

/// A lasting fault (a wrong password) fails the same way again: no second try.
#[tokio::test]
async fn a_lasting_fault_is_not_tried_again() {
    let mut h = Harness::new(|_| {}).await;
    h.config = service_config(
        &h.sim,
        &kluis_sim::config::DEMO_API_KEY.to_string(),
        "wrong",
    );
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let (events, mut seen) = sink();
    let job = engine.start(Launch {
        retry: ONCE_MORE,
        ..launch(&h, h.transport.clone(), events)
    });
    let outcome = job.finished().await;
    assert!(matches!(outcome, Err(Error::AuthFailed(_))), "{outcome:?}");
    assert!(retries_seen(&mut seen).is_empty());
    assert_eq!(h.sim.stats().backups_started, 0);
}

/// Cancel reaches a job that waits to try again (by the id its host knows): it ends as
/// cancelled at once, and no further try is made.
#[tokio::test]
async fn cancel_reaches_a_job_waiting_to_try_again() {
    let h = Harness::new(|c| c.faults.backup_failures_after_start = 1).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let (events, mut seen) = sink();
    let job = engine.start(Launch {
        retry: Retry {
            tries: 1,
            first_delay: Duration::from_secs(3600),
        },
        ..launch(&h, h.transport.clone(), events)
    });
    let id = job.id;
    while let Some(event) = seen.recv().await {
        if matches!(event, JobEvent::Retrying { .. }) {
            break;
        }
    }
    assert!(engine.is_running(id), "waiting to try again is running");
    assert!(engine.cancel(id));
    assert!(matches!(job.finished().await, Err(Error::Cancelled)));
    assert!(!engine.is_running(id));
    assert_eq!(h.sim.stats().backups_started, 1, "no second try");
}

/// Issue 44: jobs that share one download turn (a batch's, download/turns.rs) download one at
/// a time, yet the second signs in, asks for its backup, receives its callback and learns its
/// file's address while the first downloads. When the turn comes its address is older than the
/// turns keep one (a second here), so it asks for it again, and downloads. Its callback's
/// deadline no longer counts once the address is in hand: the wait for the turn is the
/// batch's.
///
/// The simulator holds every download until released, so the first is surely still running;
/// the test then lets the waiting job's whole callback deadline pass (a wait for the clock
/// itself, which is what is tested) before it looks.
#[tokio::test(flavor = "multi_thread")]
async fn jobs_sharing_a_download_turn_download_one_at_a_time() {
    const DEADLINE: Duration = Duration::from_secs(3);
    let h = Harness::new(|c| c.faults.hold_downloads = true).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let turns = DownloadTurns::new(1).fresh_for_only(Duration::from_secs(1));
    let mut jobs = Vec::new();
    let mut seen = Vec::new();
    for _ in 0..2 {
        let (events, rx) = sink();
        let request = BackupRequest {
            callback_timeout: DEADLINE,
            ..h.request()
        };
        jobs.push(engine.start(Launch {
            work: Work::New(request),
            download_turns: Some(turns.clone()),
            ..launch(&h, h.transport.clone(), events)
        }));
        seen.push(rx);
    }
    let mut last_accepted = tokio::time::Instant::now();
    for events in &mut seen {
        reached(events, Stage::Accepted).await;
        last_accepted = tokio::time::Instant::now();
        let fetched = tokio::time::timeout(
            Duration::from_secs(60),
            reached(events, Stage::ResultFetched),
        );
        fetched
            .await
            .expect("the address learnt while the other downloads");
    }
    // (Seen after it happened: the deadline counted from then has surely passed.)
    tokio::time::sleep_until(last_accepted + DEADLINE + Duration::from_millis(500)).await;
    let stats = h.sim.stats();
    assert_eq!(stats.backups_started, 2, "both asked for their backup");
    assert_eq!(stats.webhook, 2, "both learnt their file's address");
    assert_eq!(stats.downloads_at_once_max, 1, "one download at a time");
    assert_eq!(turns.free(), 0, "the downloading job holds the turn");
    for job in &jobs {
        assert!(
            engine.is_running(job.id),
            "past its deadline, waiting for its turn"
        );
    }
    h.sim.release_downloads();
    for job in jobs {
        let saved = job.finished().await.expect("saved after its turn");
        assert_eq!(saved.sha256, expected_sha(saved.bytes));
    }
    let stats = h.sim.stats();
    assert_eq!(
        stats.webhook, 3,
        "the job whose address grew old asked for it again"
    );
    assert_eq!(stats.downloads_at_once_max, 1, "one download at a time");
    assert_eq!(turns.free(), 1, "the turn given back");
}

/// A job that waited for its turn less than the turns keep an address (a minute) downloads
/// with the address it has: a batch's klant waits milliseconds on a fast line, and asking
/// again cost a request and the line's time per klant.
#[tokio::test(flavor = "multi_thread")]
async fn a_short_wait_for_the_turn_keeps_the_address() {
    let h = Harness::new(|c| c.faults.hold_downloads = true).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let turns = DownloadTurns::new(1);
    let mut jobs = Vec::new();
    for _ in 0..2 {
        let (events, mut rx) = sink();
        jobs.push(engine.start(Launch {
            download_turns: Some(turns.clone()),
            ..launch(&h, h.transport.clone(), events)
        }));
        reached(&mut rx, Stage::ResultFetched).await;
    }
    assert_eq!(turns.free(), 0, "the second waits for the first's turn");
    h.sim.release_downloads();
    for job in jobs {
        job.finished().await.expect("saved");
    }
    let stats = h.sim.stats();
    assert_eq!(stats.webhook, 2, "each address asked for once");
    assert_eq!(stats.downloads_at_once_max, 1, "one download at a time");
}

/// The download gives its turn back once every byte is in: when the job's end is recorded
/// and told (saved), the next klant's download may already run — the line is not held while
/// the last bytes are hashed, synced and named. (It was held until after the end was told.)
#[tokio::test]
async fn the_turn_is_given_back_once_every_byte_is_in() {
    let h = Harness::new(|_| {}).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let turns = DownloadTurns::new(1);
    let free_when_saved = Arc::new(std::sync::Mutex::new(None));
    let events: EventSink = Arc::new({
        let (turns, free_when_saved) = (turns.clone(), free_when_saved.clone());
        // Called inside the job, as it tells its stage: the turns as they are at that moment.
        move |event| {
            if event
                == (JobEvent::Stage {
                    stage: Stage::Saved,
                })
            {
                *free_when_saved.lock().unwrap() = Some(turns.free());
            }
        }
    });
    let job = engine.start(Launch {
        download_turns: Some(turns.clone()),
        ..launch(&h, h.transport.clone(), events)
    });
    job.finished().await.expect("saved");
    assert_eq!(
        *free_when_saved.lock().unwrap(),
        Some(1),
        "free when saved is told"
    );
}

/// A file host that refuses the address when the download starts — a signed link whose time
/// ran out while the job waited — does not fail the backup: the job asks the service for the
/// address once more and downloads from the new one, the whole file, verified. (It failed
/// with "The file host answered 403 Forbidden" before.)
#[tokio::test]
async fn an_expired_download_address_is_asked_for_again() {
    let h = Harness::new(|c| c.faults.hold_downloads = true).await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let (events, mut rx) = sink();
    let job = engine.start(launch(&h, h.transport.clone(), events));
    reached(&mut rx, Stage::Downloading).await;
    // Its request held, or not sent yet: either way its link is checked after this.
    h.sim.expire_download_links();
    h.sim.release_downloads();
    let saved = job.finished().await.expect("saved from the new address");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    let stats = h.sim.stats();
    assert_eq!(stats.webhook, 2, "the address asked for once more");
    assert_eq!(stats.downloads, 2, "refused once, then downloaded");
}

/// A download cut midway whose address then expired goes on from a new address (asked for
/// once more) — but not spliced onto another file: the new address's host answers the resume
/// with the range even though its file is not the one `If-Range` names (its ETag differs), and
/// the download starts over instead of appending it. The file saved is whole and verified.
#[tokio::test]
async fn a_renewed_address_mid_download_is_not_spliced_onto_another_file() {
    renewed_mid_download_starts_over(false).await;
}

/// The same when the new address's host leaves the ETag out of its 206: a range that does not
/// say which file it is of is not taken for ours.
#[tokio::test]
async fn a_range_that_does_not_name_its_file_is_not_spliced_on() {
    renewed_mid_download_starts_over(true).await;
}

async fn renewed_mid_download_starts_over(no_etag_on_partial: bool) {
    let h = Harness::new(|c| {
        c.payload_size = 3 * 1024 * 1024;
        c.faults.cut_download_after = Some(1024 * 1024);
        c.faults.cut_download_times = 1;
        c.faults.expire_link_on_cut = true;
        c.faults.ignore_if_range = true;
        c.faults.no_etag_on_partial = no_etag_on_partial;
    })
    .await;
    let engine = Engine::new(Arc::new(History::in_memory().unwrap()));
    let (events, _rx) = sink();
    let job = engine.start(launch(&h, h.transport.clone(), events));
    let saved = job.finished().await.expect("saved from the new address");
    assert_eq!(saved.bytes, 3 * 1024 * 1024);
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    let stats = h.sim.stats();
    assert_eq!(stats.webhook, 2, "the address asked for once more");
    assert_eq!(
        (stats.downloads, stats.partial_downloads),
        (4, 1),
        "cut; refused; the other file's range not taken; the whole file"
    );
}
