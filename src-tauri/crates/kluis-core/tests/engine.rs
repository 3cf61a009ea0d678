//! The job engine every front end drives: jobs side by side with typed events, cancel (even
//! before the start), stop and shutdown that keep a collectable job, and the one resume loop —
//! against the simulator (and a relay) over real TLS on 127.0.0.1.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use kluis_core::callback::RelayTransport;
use kluis_core::engine::{EventSink, Launch, ResumeScope, ServiceConnection, Work};
use kluis_core::{
    CallbackTransport, DownloadOptions, Engine, Error, History, JobEvent, Owner, Secret, Stage,
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
    }
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
    let mut h = Harness::new(|c| c.faults.callback_delay = Duration::from_millis(300)).await;
    let (url, relay) = with_relay(&mut h).await;
    let history = Arc::new(History::in_memory().unwrap());
    let engine = Engine::new(history.clone());
    let (events, mut seen) = sink();
    let job = engine.start(launch(&h, relay_transport(&h, &url), events));
    let id = job.id;
    reached(&mut seen, Stage::Accepted).await;
    engine.stop(id).await;
    assert!(matches!(job.finished().await, Err(Error::Interrupted)));
    assert_eq!(history.get(id).unwrap().unwrap().reached(), Stage::Accepted);
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
    let connect = |profile: String| {
        assert_eq!(profile, "test", "asked for the job's profile");
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
    let never = |_: String| async { Err::<Arc<ServiceConnection>, _>(Error::Config("no".into())) };
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
