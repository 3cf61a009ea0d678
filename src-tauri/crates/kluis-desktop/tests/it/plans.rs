//! Unattended backups in the app: plans set on a profile (only with a save folder) and shown
//! with their next backup; a planned backup saved in its klant's own folder and told to the
//! window; Backup all within its limit — against the in-process demo simulator over real TLS.
//! (When plans are due is kluis-core's `plan`/`Scheduler` tests.)

use std::sync::Arc;

use kluis_core::plan::{ClockTime, Schedule};
use kluis_desktop::{AppJobEvent, PlanInput, PlannedEvent};
use kluis_profiles::DayMark;
use tokio::sync::mpsc;

use crate::common;
use crate::common::app;

/// The demo app with `folder` as its save folder, and the window's end of planned events.
async fn watched_demo(
    dir: &tempfile::TempDir,
    folder: &tempfile::TempDir,
) -> (
    kluis_desktop::DesktopApp,
    mpsc::UnboundedReceiver<PlannedEvent>,
) {
    watched(app(dir, Some(folder.path().to_path_buf()))).await
}

/// `app` with the demo started, and what its plans report.
async fn watched(
    app: kluis_desktop::DesktopApp,
) -> (
    kluis_desktop::DesktopApp,
    mpsc::UnboundedReceiver<PlannedEvent>,
) {
    app.accounts.start_demo().await.unwrap();
    let (tx, rx) = mpsc::unbounded_channel::<PlannedEvent>();
    app.plans.watch_planned(Arc::new(move |e| drop(tx.send(e))));
    (app, rx)
}

fn daily_at_two() -> PlanInput {
    PlanInput {
        schedule: Schedule::Daily {
            at: ClockTime::parse("02:00").unwrap(),
        },
        paused: false,
    }
}

/// Without a save folder a plan is refused, saying what to choose; with it,
/// the profile shows when it is backed up next (the next 02:00 here), and nothing once paused.
#[tokio::test(flavor = "multi_thread")]
async fn a_plan_needs_a_save_folder_and_shows_its_next_backup() {
    let dir = tempfile::tempdir().unwrap();
    let without = app(&dir, None);
    without.accounts.start_demo().await.unwrap();
    let refused = without.plans.set_plan("demo", daily_at_two()).unwrap_err();
    assert_eq!(refused.code(), "config");
    assert!(
        refused.to_string().contains("Where backups are saved"),
        "{refused}"
    );

    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    let view = app.plans.set_plan("demo", daily_at_two()).unwrap();
    let next =
        jiff::Timestamp::from_millisecond(view.next_backup_ms.expect("a next backup")).unwrap();
    let local = next.to_zoned(jiff::tz::TimeZone::system());
    assert_eq!((local.hour(), local.minute()), (2, 0));
    let wait = next.duration_since(jiff::Timestamp::now());
    assert!(
        wait > jiff::SignedDuration::ZERO && wait <= jiff::SignedDuration::from_hours(25),
        "{wait:?}"
    );
    let listed = app
        .accounts
        .list()
        .into_iter()
        .find(|p| p.id == "demo")
        .unwrap();
    assert_eq!(
        listed.next_backup_ms, view.next_backup_ms,
        "the list shows it too"
    );

    let paused = app
        .plans
        .set_plan(
            "demo",
            PlanInput {
                paused: true,
                ..daily_at_two()
            },
        )
        .unwrap();
    assert_eq!(paused.next_backup_ms, None);
    assert_eq!(
        paused.plan.map(|p| (p.paused, p.set_at_ms)),
        view.plan.map(|p| (true, p.set_at_ms)),
        "pausing keeps the schedule and when it was set"
    );
    let manual = app
        .plans
        .set_plan(
            "demo",
            PlanInput {
                schedule: Schedule::Manual,
                paused: false,
            },
        )
        .unwrap();
    assert_eq!((manual.plan, manual.next_backup_ms), (None, None));
}

/// A planned backup goes to its klant's folder under the save folder, verified, and its
/// events reach the window tagged with the job and the klant.
#[tokio::test(flavor = "multi_thread")]
async fn a_planned_backup_lands_in_its_klants_folder_and_is_told_to_the_window() {
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (app, mut rx) = watched_demo(&dir, &folder).await;
    let job = app.plans.start_planned("demo").await.unwrap();
    let saved = loop {
        let event = rx.recv().await.expect("the job's events");
        assert_eq!(
            (event.job_id.as_str(), event.profile_id.as_str()),
            (job.to_string().as_str(), "demo")
        );
        match event.event {
            AppJobEvent::Saved { path, sha256, .. } => break (path, sha256),
            AppJobEvent::Failed { code, message } => panic!("{code}: {message}"),
            _ => {}
        }
    };
    let path = std::path::Path::new(&saved.0);
    assert_eq!(
        path.parent(),
        Some(folder.path().join("Demo").as_path()),
        "the klant's own folder"
    );
    let name = path.file_name().unwrap().to_string_lossy();
    let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    assert!(
        name.starts_with(&format!("Demo {today} ")) && name.ends_with(".zip"),
        "named by klant and date: {name}"
    );
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)),
        saved.1
    );
    let row = &app.backups.history(Some("demo")).unwrap()[0];
    assert_eq!(
        (row.id.as_str(), row.stage.as_str()),
        (job.to_string().as_str(), "saved")
    );
}

/// The plans' own loop (`run_plans`: what the process that holds the background work runs —
/// the window, or kluis-tray while it is closed) starts a due plan by itself: a plan whose slot
/// has passed with no backup since is handed out at its first look, backed up into its
/// klant's folder, verified, and told to the window — nobody asked for it.
#[tokio::test(flavor = "multi_thread")]
async fn the_plans_loop_starts_a_due_plan_by_itself() {
    let sim = kluis_sim::Sim::start(kluis_sim::SimConfig::default())
        .await
        .unwrap();
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let app = common::builder(&dir, Some(folder.path().to_path_buf()))
        .webhook_site(sim.webhook_site_url())
        .open()
        .unwrap();
    common::callbacks_through_webhook_site(&app).await;
    let profile = (app.accounts.save_profile(common::office(&sim, None)))
        .await
        .unwrap();
    let ca = dir.path().join("service-ca.pem");
    std::fs::write(&ca, sim.ca_pem()).unwrap();
    app.set_dialogs(common::Chooses::new(&ca));
    app.accounts.choose_profile_ca(&profile.id).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel::<PlannedEvent>();
    app.plans.watch_planned(Arc::new(move |e| drop(tx.send(e))));
    app.plans
        .set_plan(
            &profile.id,
            PlanInput {
                schedule: Schedule::Every { hours: 1 },
                paused: false,
            },
        )
        .unwrap();
    // Set three hours ago (as another process would have written it): its slot has passed.
    let file = kluis_desktop::AppPaths::under(dir.path()).profiles_file;
    let mut stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let then = jiff::Timestamp::now().as_millisecond() - 3 * 3_600_000;
    let profiles = stored["profiles"].as_array_mut().unwrap();
    let office = profiles.iter_mut().find(|p| p["id"] == profile.id).unwrap();
    office["plan"]["set_at_ms"] = then.into();
    std::fs::write(&file, serde_json::to_vec(&stored).unwrap()).unwrap();
    let told = async {
        loop {
            let event = rx.recv().await.expect("the plans' events");
            assert_eq!(event.profile_id, profile.id, "only the planned klant");
            match event.event {
                AppJobEvent::Saved { path, sha256, .. } => break (event.job_id, path, sha256),
                AppJobEvent::Failed { code, message } => panic!("{code}: {message}"),
                _ => {}
            }
        }
    };
    let started = async {
        tokio::select! {
            () = app.plans.run_plans() => panic!("the plans' loop ends only with its process"),
            saved = told => saved,
        }
    };
    let (job, path, sha256) = tokio::time::timeout(std::time::Duration::from_secs(300), started)
        .await
        .expect("the due plan is backed up by the loop");
    let path = std::path::Path::new(&path);
    assert_eq!(path.parent(), Some(folder.path().join("Office").as_path()));
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)),
        sha256,
        "verified"
    );
    let row = &app.backups.history(Some(&profile.id)).unwrap()[0];
    assert_eq!(
        (row.id.as_str(), row.stage.as_str()),
        (job.as_str(), "saved")
    );
}

/// The office's own file name template names the next unattended backup (the extension
/// still the download's); one that would give each day's backups the same name is refused with
/// the reason, and an empty one goes back to the default.
#[tokio::test(flavor = "multi_thread")]
async fn the_file_name_template_names_unattended_backups() {
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (app, mut rx) = watched_demo(&dir, &folder).await;
    let e = app
        .settings
        .set_file_name_template("{klant} backup")
        .unwrap_err();
    assert_eq!(e.code().as_str(), "config");
    assert!(e.to_string().contains("needs {date}"), "{e}");
    let settings = app
        .settings
        .set_file_name_template(" {date} backup {klant} ")
        .unwrap();
    assert_eq!(
        settings.file_name_template.as_deref(),
        Some("{date} backup {klant}")
    );

    app.plans.start_planned("demo").await.unwrap();
    let path = loop {
        match rx.recv().await.expect("the job's events").event {
            AppJobEvent::Saved { path, .. } => break path,
            AppJobEvent::Failed { code, message } => panic!("{code}: {message}"),
            _ => {}
        }
    };
    let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    let name = std::path::Path::new(&path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(name, format!("{today} backup Demo.zip"));
    assert_eq!(
        app.settings
            .set_file_name_template("")
            .unwrap()
            .file_name_template,
        None
    );
}

/// Backup all: every klant, one download at a time here (the limit set to 1): no klant starts
/// its download before the one downloading has all its bytes (its last progress; it may still
/// be writing and naming its file); the klant whose key may not make backups fails with its
/// reason and the others are saved in their own folders all the same; the dashboard shows both
/// outcomes.
#[tokio::test(flavor = "multi_thread")]
async fn backup_all_runs_every_klant_within_the_limit_and_one_failure_stops_none() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = (common::builder(&dir, Some(folder.path().to_path_buf())))
        .unattended_at_once(1)
        .open()
        .unwrap();
    app.accounts.start_demo().await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel::<PlannedEvent>();
    app.plans.watch_planned(Arc::new(move |e| drop(tx.send(e))));
    let klanten = kluis_demo::DEMO_ACCOUNTS.len();
    assert_eq!(
        app.plans.backup_all().await.unwrap(),
        klanten,
        "every klant started"
    );
    let mut events = Vec::new();
    let mut ended = 0;
    while ended < klanten {
        let event = rx.recv().await.expect("events of every klant");
        if matches!(
            event.event,
            AppJobEvent::Saved { .. } | AppJobEvent::Failed { .. }
        ) {
            ended += 1;
        }
        events.push(event);
    }
    let mut downloading: Option<&str> = None;
    let mut downloads = 0;
    for event in &events {
        let stage = match event.event {
            AppJobEvent::Stage { stage } => stage,
            AppJobEvent::Progress {
                bytes,
                total: Some(total),
                ..
            } if bytes == total && downloading == Some(&event.profile_id) => {
                downloading = None;
                continue;
            }
            _ => continue,
        };
        match stage {
            kluis_core::Stage::Downloading => {
                assert_eq!(downloading, None, "one download at a time: {events:?}");
                downloading = Some(&event.profile_id);
                downloads += 1;
            }
            kluis_core::Stage::Saved | kluis_core::Stage::Failed
                if downloading == Some(&event.profile_id) =>
            {
                downloading = None;
            }
            _ => {}
        }
    }
    assert_eq!(
        downloads,
        klanten - 1,
        "every klant but the refused one downloaded"
    );
    let outcome = |id: &str| {
        events
            .iter()
            .rev()
            .find(|e| e.profile_id == id)
            .map(|e| e.event.clone())
            .unwrap()
    };
    assert!(
        matches!(outcome("demo-restricted"), AppJobEvent::Failed { code, .. } if code == "permission_denied")
    );
    let saved_path = |id: &str| match outcome(id) {
        AppJobEvent::Saved { path, .. } => path,
        other => panic!("{id}: {other:?}"),
    };
    // (The folder and file names, not the separators: these tests run on Windows too.)
    let names = |path: &str| {
        let path = std::path::Path::new(path);
        let name = |p: Option<&std::path::Path>| {
            p.and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        (name(path.parent()), name(Some(path)))
    };
    let path = saved_path("demo");
    assert_eq!(names(&path).0, "Demo", "{path}");
    let jansen = saved_path("demo-jansen");
    let (folder, file) = names(&jansen);
    assert!(
        folder == "Bakkerij Jansen" && file.starts_with("Bakkerij Jansen "),
        "{jansen}"
    );

    // The dashboard shows each klant's outcome: the saved one with its size and today saved,
    // the refused one with its reason and today failed.
    let dashboard = app.keeping.dashboard().unwrap();
    let row = |id: &str| dashboard.iter().find(|k| k.profile_id == id).unwrap();
    let (saved, refused) = (row("demo"), row("demo-restricted"));
    assert!(saved.last_success_ms.is_some() && saved.last_error.is_none());
    assert_eq!(saved.last_success_path.as_deref(), Some(path.as_str()));
    assert!(saved.last_success_bytes.unwrap() > 0);
    assert_eq!(saved.days.last(), Some(&DayMark::Saved));
    assert!(refused.last_success_ms.is_none());
    let error = refused.last_error.as_ref().expect("the refusal is shown");
    assert_eq!(error.code, kluis_core::Code::PermissionDenied);
    assert_eq!(refused.days.last(), Some(&DayMark::Failed));
}

/// Backup all without a save folder is refused before anything starts.
#[tokio::test(flavor = "multi_thread")]
async fn backup_all_needs_a_save_folder() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    app.accounts.start_demo().await.unwrap();
    assert_eq!(app.plans.backup_all().await.unwrap_err().code(), "config");
    assert!(
        app.backups.history(None).unwrap().is_empty(),
        "nothing started"
    );
}

/// A klant whose turn another process holds (`kluis run-due` from a timer backing it up) is
/// not started twice by the app: refused with the reason, nothing recorded; once the turn is
/// let go, the app starts it — and holds the turn itself while its backup runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_klant_another_process_backs_up_is_not_started_twice() {
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (app, mut rx) = watched_demo(&dir, &folder).await;
    // The timer's process: the same history file, opened on its own.
    let timer = kluis_core::History::open(&dir.path().join("history.sqlite3")).unwrap();
    let turn = kluis_profiles::take_turn(&timer, &kluis_core::KlantKey::profile("demo"))
        .unwrap()
        .unwrap();
    let refused = app.plans.start_planned("demo").await.unwrap_err();
    assert!(
        refused.to_string().contains("another Kluis process"),
        "{refused}"
    );
    assert!(
        app.backups.history(Some("demo")).unwrap().is_empty(),
        "nothing started"
    );
    drop(turn);

    app.plans.start_planned("demo").await.unwrap();
    assert!(
        kluis_profiles::take_turn(&timer, &kluis_core::KlantKey::profile("demo"))
            .unwrap()
            .is_none(),
        "the app holds the klant's turn while its backup runs"
    );
    loop {
        match rx.recv().await.expect("the job's events").event {
            AppJobEvent::Saved { .. } => break,
            AppJobEvent::Failed { code, message } => panic!("{code}: {message}"),
            _ => {}
        }
    }
}

/// A monitor on plain http on 127.0.0.1 (allowed for loopback only): its URL, and each
/// ping's path and body as they arrive.
async fn loopback_monitor() -> (String, mpsc::UnboundedReceiver<(String, String)>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/ping/demo", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            // One small request a connection: its head, then as much body as it announced.
            let (head, body) = loop {
                let n = stream.read(&mut buffer).await.unwrap();
                request.extend_from_slice(&buffer[..n]);
                let text = String::from_utf8_lossy(&request).into_owned();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if body.len() >= length || n == 0 {
                        break (head.to_string(), body.to_string());
                    }
                }
            };
            let path = head
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            tx.send((path, body)).unwrap();
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nOK")
                .await;
        }
    });
    (url, rx)
}

/// A klant's outside monitor: set from the form (a URL that is not https refused, the URL
/// itself never sent back), told of each unattended backup — the saved one with its size and
/// SHA-256, a failed one at `/fail` with the reason — and "Send test" reaches it.
#[tokio::test(flavor = "multi_thread")]
async fn the_klants_monitor_hears_of_each_unattended_backup() {
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (app, mut rx) = watched_demo(&dir, &folder).await;
    let (url, mut pings) = loopback_monitor().await;
    let refused = app
        .plans
        .set_monitor("demo", Some("http://monitor.example/x".into()))
        .unwrap_err();
    assert_eq!(refused.code(), "config", "{refused}");
    let view = app.plans.set_monitor("demo", Some(url.clone())).unwrap();
    assert!(view.monitor);
    assert!(
        !serde_json::to_string(&view).unwrap().contains("/ping/"),
        "the URL is not sent back"
    );
    app.plans
        .set_monitor("demo-restricted", Some(url.replace("demo", "restricted")))
        .unwrap();

    app.plans.start_planned("demo").await.unwrap();
    let sha256 = loop {
        match rx.recv().await.expect("the job's events").event {
            AppJobEvent::Saved { sha256, .. } => break sha256,
            AppJobEvent::Failed { code, message } => panic!("{code}: {message}"),
            _ => {}
        }
    };
    let (path, body) = pings.recv().await.unwrap();
    assert_eq!(path, "/ping/demo");
    assert!(body.contains(&sha256), "{body}");

    app.plans.start_planned("demo-restricted").await.unwrap();
    let (path, body) = pings.recv().await.unwrap();
    assert_eq!(path, "/ping/restricted/fail");
    assert!(body.contains("permission_denied"), "{body}");

    app.plans.test_monitor("demo").await.unwrap();
    let (path, body) = pings.recv().await.unwrap();
    assert_eq!((path.as_str(), body.contains("test")), ("/ping/demo", true));
    let removed = app.plans.set_monitor("demo", None).unwrap();
    assert!(!removed.monitor);
    assert_eq!(
        app.plans.test_monitor("demo").await.unwrap_err().code(),
        "invalid_state"
    );
}

/// The demo app backing up all its klanten one at a time (into `folder`), started on a task of
/// its own (how many it started): the app, its planned events, and that task.
async fn backup_all_one_at_a_time(
    dir: &tempfile::TempDir,
    folder: &tempfile::TempDir,
) -> (
    Arc<kluis_desktop::DesktopApp>,
    mpsc::UnboundedReceiver<PlannedEvent>,
    tokio::task::JoinHandle<usize>,
) {
    let one_at_once = common::builder(dir, Some(folder.path().to_path_buf()))
        .unattended_at_once(1)
        .open()
        .unwrap();
    let (app, rx) = watched(one_at_once).await;
    let app = Arc::new(app);
    let all = tokio::spawn({
        let app = app.clone();
        async move { app.plans.backup_all().await.unwrap() }
    });
    (app, rx, all)
}

/// An app backing up one klant at a time (three places: one downloading, two more) for
/// `names`, each a klant of a simulator that holds every download (its callbacks through the
/// simulator's webhook.site stand-in); the simulator, the app and the klanten's ids.
async fn held_office(
    dir: &tempfile::TempDir,
    folder: &tempfile::TempDir,
    names: &[&str],
) -> (kluis_sim::Sim, kluis_desktop::DesktopApp, Vec<String>) {
    let mut config = kluis_sim::SimConfig::default();
    config.faults.hold_downloads = true;
    config.faults.callback_delay = std::time::Duration::from_millis(50);
    let sim = kluis_sim::Sim::start(config).await.unwrap();
    let ca = dir.path().join("sim-ca.pem");
    std::fs::write(&ca, sim.ca_pem()).unwrap();
    let app = common::builder(dir, Some(folder.path().to_path_buf()))
        .unattended_at_once(1)
        .webhook_site(sim.webhook_site_url())
        .open()
        .unwrap();
    app.set_dialogs(common::Chooses::new(&ca));
    let mut klanten = Vec::new();
    for name in names {
        let input = kluis_desktop::ProfileInput {
            name: name.to_string(),
            ..common::office(&sim, None)
        };
        let profile = app.accounts.save_profile(input).await.unwrap();
        app.accounts.choose_profile_ca(&profile.id).await.unwrap();
        klanten.push(profile.id);
    }
    common::callbacks_through_webhook_site(&app).await;
    (sim, app, klanten)
}

/// "Cancel all" during Backup all (one download at a time here, held by the simulator, and
/// two klanten more under way): the running klanten's backups end as cancelled, with nothing
/// left in their folders (the download's part file included), and the klanten still waiting
/// for a place are never started.
#[tokio::test(flavor = "multi_thread")]
async fn cancel_all_ends_the_running_backup_and_starts_no_waiting_klant() {
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let names = ["Aalbers", "Bakker", "Claes", "De Wit", "Evers"];
    let (sim, app, _) = held_office(&dir, &folder, &names).await;
    let (tx, mut rx) = mpsc::unbounded_channel::<PlannedEvent>();
    app.plans.watch_planned(Arc::new(move |e| drop(tx.send(e))));
    let app = Arc::new(app);
    let all = tokio::spawn({
        let app = app.clone();
        async move { app.plans.backup_all().await.unwrap() }
    });
    // The places full: one klant downloading (held), two with their file's address.
    let mut fetched = std::collections::HashSet::new();
    while fetched.len() < 3 {
        let event = rx.recv().await.expect("the klanten's events");
        match event.event {
            AppJobEvent::Stage {
                stage: kluis_core::Stage::ResultFetched,
            } => {
                fetched.insert(event.profile_id);
            }
            AppJobEvent::Saved { .. } | AppJobEvent::Failed { .. } => {
                panic!("a klant ended before the cancel: {event:?}")
            }
            _ => {}
        }
    }
    // (Its part file made: the download's request reached the simulator.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while sim.stats().downloads < 1 {
        assert!(std::time::Instant::now() < deadline, "the first download");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(app.plans.cancel_all(), 3, "the three running backups");
    // Backup all returns once it started the last klant it starts: none after the cancel.
    let started = all.await.unwrap();
    assert_eq!(started, 3, "the klanten still waiting are never started");
    let mut ended = std::collections::HashSet::new();
    while ended.len() < started {
        let event = rx.recv().await.expect("each started klant's end");
        match event.event {
            AppJobEvent::Failed { code, .. } => {
                assert_eq!(code, "cancelled", "{}", event.profile_id);
                ended.insert(event.profile_id);
            }
            AppJobEvent::Saved { .. } => panic!("a backup of a cancelled batch was saved"),
            _ => {}
        }
    }
    assert_eq!(ended, fetched);
    let history = app.backups.history(None).unwrap();
    assert_eq!(history.len(), started, "{history:?}");
    for klant_folder in std::fs::read_dir(folder.path()).unwrap() {
        let klant_folder = klant_folder.unwrap().path();
        assert_eq!(
            std::fs::read_dir(&klant_folder).unwrap().count(),
            0,
            "nothing left behind in {klant_folder:?}"
        );
    }
}

/// A klant started as a plan starts it (`start_planned`; the scheduler's loop starts each plan
/// it hands out the same way, with the plan looked at again) while the places are full waits
/// for one; "Cancel all" in that
/// moment starts it neither: before, only Backup all's queue heard the cancel, and the plan
/// started as soon as the cancelled backups let go of their slots. (Against a simulator that
/// holds every download: the three slots stay full. The plans still queued in the scheduler:
/// kluis-core's `skipped_plans_wait_for_their_next_slot`.)
#[tokio::test(flavor = "multi_thread")]
async fn cancel_all_starts_no_plan_waiting_for_a_slot() {
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let names = ["Aalbers", "Bakker", "Claes", "De Wit"];
    let (_sim, app, klanten) = held_office(&dir, &folder, &names).await;
    let (tx, mut events) = mpsc::unbounded_channel::<PlannedEvent>();
    app.plans.watch_planned(Arc::new(move |e| drop(tx.send(e))));
    // One download (held) and two klanten more: the three slots taken until they end.
    for id in &klanten[..3] {
        app.plans.start_planned(id).await.unwrap();
    }
    let waiting = app.plans.start_planned(&klanten[3]);
    tokio::pin!(waiting);
    tokio::select! {
        biased;
        started = &mut waiting => panic!("the fourth started with every slot taken: {started:?}"),
        () = std::future::ready(()) => {}
    }
    assert_eq!(app.plans.cancel_all(), 3, "the running backups cancelled");
    let bound = std::time::Duration::from_secs(60);
    let not_started = (tokio::time::timeout(bound, waiting).await)
        .expect("the waiting plan hears the cancel")
        .expect_err("the waiting plan is not started");
    assert_eq!(not_started.code(), "invalid_state", "{not_started}");
    let mut cancelled = Vec::new();
    while cancelled.len() < 3 {
        let event = (tokio::time::timeout(bound, events.recv()).await)
            .expect("each running klant ends")
            .expect("each running klant's end");
        match event.event {
            AppJobEvent::Failed { code, .. } => {
                assert_eq!(code, "cancelled", "{}", event.profile_id);
                cancelled.push(event.profile_id);
            }
            AppJobEvent::Saved { .. } => panic!("a cancelled backup was saved"),
            _ => {}
        }
    }
    let mut running = klanten[..3].to_vec();
    cancelled.sort();
    running.sort();
    assert_eq!(cancelled, running);
    let history = app.backups.history(None).unwrap();
    assert_eq!(
        history.len(),
        3,
        "the waiting klant left no trace: {history:?}"
    );
    assert!(history.iter().all(|row| row.profile.as_str() != klanten[3]));
}

/// Settings → backups at once: 1 to 8, kept in the settings file; a change made in another
/// process (the window, while `kluis-tray` runs the plans) counts there from its next klant.
#[tokio::test(flavor = "multi_thread")]
async fn backups_at_once_is_a_setting() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    let other_process = self::app(&dir, None);
    assert_eq!(other_process.plans.at_once_now(), 2);
    assert_eq!(
        app.settings.current().unattended_at_once,
        2,
        "two by default"
    );
    assert_eq!(
        app.plans.set_unattended_at_once(0).unwrap_err().code(),
        "config"
    );
    assert_eq!(
        app.plans.set_unattended_at_once(9).unwrap_err().code(),
        "config"
    );
    assert_eq!(
        app.plans
            .set_unattended_at_once(3)
            .unwrap()
            .unattended_at_once,
        3
    );
    assert_eq!(app.plans.at_once_now(), 3);
    assert_eq!(
        other_process.plans.at_once_now(),
        3,
        "seen by the other process"
    );
    drop(app);
    assert_eq!(
        self::app(&dir, None).settings.current().unattended_at_once,
        3,
        "kept"
    );
}

/// Backup all with one klant refused: one notification names that klant and its reason (the
/// saved one says nothing); "Send test" is told too. (The setting's off is `app::alerts`'s
/// unit test.)
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_unattended_backup_is_notified_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let (app, mut told) = common::told_app(&dir, folder.path().to_path_buf());
    app.accounts.start_demo().await.unwrap();
    let klanten = kluis_demo::DEMO_ACCOUNTS.len();
    assert_eq!(app.plans.backup_all().await.unwrap(), klanten);
    let alert = told.recv().await.expect("the failure is told");
    assert_eq!(alert.title, "Backup of Demo (key without backups) failed");
    assert!(alert.body.contains("does not allow"), "{}", alert.body);
    app.alerts.test_notification().await.unwrap();
    let next = told.recv().await.unwrap();
    assert_eq!(
        next.title, "Kluis test notification",
        "and nothing about the saved klant"
    );
}

/// Closing the window during Backup all (one at a time here): its process waits for the whole
/// batch, not only the backup running at that moment — between one klant's end and the next
/// one's start none runs, and a window that ended there would leave the rest of the batch
/// undone.
#[tokio::test(flavor = "multi_thread")]
async fn a_closing_window_waits_for_the_whole_batch() {
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (app, mut rx, all) = backup_all_one_at_a_time(&dir, &folder).await;
    // The first klant's backup under way: the window is closed now.
    rx.recv().await.expect("the first klant's events");
    assert!(app.background.backup_runs());
    app.background.until_no_backup_runs().await;
    let history = app.backups.history(None).unwrap();
    let ended = (history.iter())
        .filter(|e| {
            matches!(
                e.reached(),
                kluis_core::Stage::Saved | kluis_core::Stage::Failed
            )
        })
        .count();
    assert_eq!(
        ended,
        kluis_demo::DEMO_ACCOUNTS.len(),
        "every klant's backup had ended when the process could end: {history:?}"
    );
    assert_eq!(all.await.unwrap(), kluis_demo::DEMO_ACCOUNTS.len());
}
