//! Settings → *Updates* against an update server on loopback over TLS (kluis-update's tests'
//! server, its builds signed with a throw-away key): a newer Kluis looked for once a day and
//! on request, what is new shown; installed when asked, but not while a backup runs nor when
//! a plan is due within a quarter of an hour; by itself only when chosen; a changed build
//! never handed to the installer; where the package manager updates Kluis, said so.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use kluis_core::plan::{ClockTime, Schedule};
use kluis_desktop::{
    AppError, AppJobEvent, DesktopApp, PlanInput, UpdateInstaller, UpdateState, VerifiedSetup,
};
use tokio::sync::mpsc;

use crate::common;
use crate::update_server::{manifest, setup, Setup};

/// An installer that keeps what it was given: the setup's bytes, read at once; and why it
/// may not install now, as a test sets it.
#[derive(Default)]
struct Installed(Mutex<Vec<Vec<u8>>>, Mutex<Option<String>>);

impl UpdateInstaller for Installed {
    fn installs_here(&self) -> bool {
        true
    }

    fn not_now(&self) -> Option<String> {
        self.1.lock().unwrap().clone()
    }

    fn install(&self, setup: &VerifiedSetup) -> Result<(), AppError> {
        // (What Tauri's updater checks the setup against once more: the manifest it came with.)
        assert_eq!(setup.manifest["version"], "9.9.9");
        self.0
            .lock()
            .unwrap()
            .push(std::fs::read(&setup.file).unwrap());
        Ok(())
    }
}

/// The app following the test's update server, offering 9.9.9 (`build`, signed, or
/// `signed_build`'s signature over it), and the installer it hands setups to.
async fn app_with_update(
    dir: &tempfile::TempDir,
    build: &[u8],
    signed_build: &[u8],
) -> (DesktopApp, Setup, Arc<Installed>) {
    let s = setup().await;
    *s.served.build.lock().unwrap() = build.to_vec();
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(signed_build, "9.9.9"));
    // (A save folder: a plan needs one.)
    let app = common::builder(dir, Some(dir.path().join("saved")))
        .update_server(s.publisher.clone(), Some(s.ca.clone()))
        .open()
        .unwrap();
    let installed = Arc::new(Installed::default());
    app.updates.set_installer(installed.clone());
    (app, s, installed)
}

fn stamp(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("update-looked")
}

/// The first look asks the server and shows 9.9.9 with what is new; within the day the next
/// look does not ask again (a look by the CLI counts too: the stamp beside the history), and
/// *Look now* does.
#[tokio::test(flavor = "multi_thread")]
async fn a_newer_kluis_is_looked_for_once_a_day_and_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let (app, s, _) = app_with_update(&dir, b"MZ next", b"MZ next").await;
    assert_eq!(app.updates.view().state, UpdateState::NotLooked);
    let view = app.updates.look(false).await;
    assert_eq!(
        view.state,
        UpdateState::Available {
            version: "9.9.9".into(),
            notes: "Sneller importeren.".into()
        }
    );
    assert_eq!(view.current, env!("CARGO_PKG_VERSION"));
    assert!(stamp(&dir).is_file(), "the look noted beside the history");
    let asked = || s.served.manifest_asked.load(Ordering::SeqCst);
    assert_eq!(asked(), 1);
    let again = app.updates.look(false).await;
    assert_eq!(
        (asked(), &again.state),
        (1, &view.state),
        "not asked again today"
    );
    app.updates.look(true).await;
    assert_eq!(asked(), 2, "Look now asks");
}

/// *Install and restart* is refused while a backup runs and when a klant's plan is due within 15
/// minutes (naming it); at a quiet moment the setup, verified, goes to the installer.
#[tokio::test(flavor = "multi_thread")]
async fn it_waits_for_backups_and_plans_then_installs() {
    let dir = tempfile::tempdir().unwrap();
    let build = b"MZ the next Kluis".repeat(1000);
    let (app, _s, installed) = app_with_update(&dir, &build, &build).await;
    app.updates.look(false).await;
    app.accounts.start_demo().await.unwrap();

    let (tx, mut rx) = mpsc::unbounded_channel();
    let job = (app.backups)
        .start_backup("demo", Arc::new(move |e| drop(tx.send(e))))
        .await
        .unwrap();
    while let Some(event) = rx.recv().await {
        if matches!(event, AppJobEvent::Progress { .. }) {
            break;
        }
    }
    let refused = app.updates.install().await.unwrap_err();
    assert!(refused.to_string().contains("running"), "{refused}");
    app.backups.cancel_backup(job).await.unwrap();
    while rx.recv().await.is_some() {}

    let soon = jiff::Zoned::now()
        .checked_add(jiff::SignedDuration::from_mins(5))
        .unwrap();
    let at = ClockTime::parse(&soon.strftime("%H:%M").to_string()).unwrap();
    let plan = |schedule| PlanInput {
        schedule,
        paused: false,
    };
    app.plans
        .set_plan("demo-jansen", plan(Schedule::Daily { at }))
        .unwrap();
    let refused = app.updates.install().await.unwrap_err();
    assert!(
        refused.to_string().contains("Bakkerij Jansen")
            && refused.to_string().contains("15 minutes"),
        "{refused}"
    );
    assert!(
        installed.0.lock().unwrap().is_empty(),
        "nothing installed yet"
    );

    app.plans
        .set_plan("demo-jansen", plan(Schedule::Manual))
        .unwrap();
    let view = app.updates.install().await.unwrap();
    assert!(matches!(view.state, UpdateState::Ready { ref version, .. } if version == "9.9.9"));
    assert_eq!(
        *installed.0.lock().unwrap(),
        [build],
        "the verified setup installed"
    );
}

/// With *Install updates by themselves* the daily round installs a newer Kluis at a quiet
/// moment — not while the installer says why not (kluis-tray: a window follows it) — and
/// starts a setup by itself once a day at most, whatever the version (a setup that stopped
/// would otherwise be started again at each round), and only once that is noted; without it,
/// it only looks. *Install and restart* always installs.
#[tokio::test(flavor = "multi_thread")]
async fn it_installs_by_itself_only_when_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _s, installed) = app_with_update(&dir, b"MZ next", b"MZ next").await;
    app.updates.tick().await;
    assert!(matches!(
        app.updates.view().state,
        UpdateState::Available { .. }
    ));
    assert!(
        installed.0.lock().unwrap().is_empty(),
        "not chosen: only looked"
    );
    assert!(app.updates.set_automatic(true).unwrap().automatic);
    *installed.1.lock().unwrap() = Some("A window follows.".into());
    assert_eq!(app.updates.busy().as_deref(), Some("A window follows."));
    app.updates.tick().await;
    assert!(
        installed.0.lock().unwrap().is_empty(),
        "not while the installer says why not"
    );
    *installed.1.lock().unwrap() = None;
    app.updates.tick().await;
    assert_eq!(installed.0.lock().unwrap().len(), 1, "installed by itself");

    // The process a setup stopped at starts again: no setup by itself again within the day.
    let note = dir.path().join("update-started");
    let said = std::fs::read_to_string(&note).unwrap();
    assert!(said.trim_end().ends_with(" 9.9.9"), "{said:?}");
    app.updates.tick().await;
    let count = || installed.0.lock().unwrap().len();
    assert_eq!(count(), 1, "not started by itself twice in a day");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let day = kluis_desktop::GAP_BETWEEN_SETUPS_BY_ITSELF.as_secs();
    let noted_at = |at: u64| std::fs::write(&note, format!("{at} 9.9.8\n")).unwrap();
    noted_at(now + 3600);
    app.updates.tick().await;
    assert_eq!(count(), 1, "a note an hour ahead of the clock counts");
    noted_at(now - day - 60);
    app.updates.tick().await;
    assert_eq!(
        count(),
        2,
        "started by itself again a day later, whatever the version"
    );
    noted_at(now + 2 * day);
    app.updates.tick().await;
    assert_eq!(
        count(),
        3,
        "a note days ahead (a clock set back) is not taken"
    );

    // Where the note cannot be written, no setup is started by itself.
    std::fs::remove_file(&note).unwrap();
    std::fs::create_dir(&note).unwrap();
    app.updates.tick().await;
    assert_eq!(count(), 3, "not noted, not started");
    std::fs::remove_dir(&note).unwrap();
    noted_at(now);
    app.updates.install().await.unwrap();
    assert_eq!(count(), 4, "Install and restart always");
}

/// A setup kept from an earlier download is verified again before it is handed on: changed
/// on disk since, it is fetched again, and the installer gets the publisher's.
#[tokio::test(flavor = "multi_thread")]
async fn a_kept_setup_that_changed_is_fetched_again() {
    let dir = tempfile::tempdir().unwrap();
    let build = b"MZ the next Kluis".repeat(1000);
    let (app, s, installed) = app_with_update(&dir, &build, &build).await;
    app.updates.look(false).await;
    app.updates.install().await.unwrap();
    let kept: Vec<_> = std::fs::read_dir(dir.path().join("staging/update"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    std::fs::write(&kept[0], b"MZ something else").unwrap();
    app.updates.install().await.unwrap();
    let handed: Vec<bool> = (installed.0.lock().unwrap().iter())
        .map(|setup| *setup == build)
        .collect();
    assert_eq!(handed, [true, true], "the publisher's setup both times");
    assert_eq!(
        s.served.build_asked.load(Ordering::SeqCst),
        2,
        "fetched again"
    );
}

/// A build changed after it was signed is never handed to the installer, and nothing of it is
/// left in the staging folder; where the package manager updates Kluis, *Install and restart* says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_build_is_not_installed_and_a_package_manager_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _s, installed) = app_with_update(&dir, b"MZ changed", b"MZ signed").await;
    app.updates.look(false).await;
    let refused = app.updates.install().await.unwrap_err();
    assert_eq!(refused.code().to_string(), "update", "{refused}");
    assert!(
        refused.to_string().contains("does not match its signature"),
        "{refused}"
    );
    assert!(installed.0.lock().unwrap().is_empty());
    let update_folder = dir.path().join("staging/update");
    let left = std::fs::read_dir(&update_folder)
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "nothing kept");

    app.updates
        .set_installer(Arc::new(kluis_desktop::PackageManagerUpdates));
    assert!(!app.updates.view().installs_here);
    let refused = app.updates.install().await.unwrap_err();
    assert!(refused.to_string().contains("apt upgrade"), "{refused}");
}

/// A setup started by itself lately that did not install — this Kluis is still older than the
/// version noted (its setup stopped at a program still running) — is told on the desktop once,
/// by the round once the setup has had its minutes, or at once when the setup this process
/// started stopped; one just started, one that installed (this version), one told already,
/// one from days ago, and any with notifications off are not.
#[tokio::test(flavor = "multi_thread")]
async fn a_setup_that_did_not_install_is_told_once() {
    let dir = tempfile::tempdir().unwrap();
    let (app, mut told) = common::told_app(&dir, dir.path().join("saved"));
    let note = dir.path().join("update-started");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let takes = kluis_desktop::SETUP_TAKES.as_secs();
    let noted =
        |at: u64, version: &str| std::fs::write(&note, format!("{at} {version}\n")).unwrap();

    noted(now, "99.0.0");
    app.updates.tell_a_setup_that_did_not_install().await;
    assert!(told.try_recv().is_err(), "a setup just started: not yet");
    noted(now - takes - 60, "99.0.0");
    app.updates.tell_a_setup_that_did_not_install().await;
    let alert = told.try_recv().expect("told");
    assert_eq!(alert.title, "Kluis 99.0.0 was not installed");
    assert!(alert.body.contains("Settings → Updates"), "{}", alert.body);
    app.updates.tell_a_setup_that_did_not_install().await;
    app.updates.tell_a_setup_that_stopped().await;
    assert!(told.try_recv().is_err(), "told once");

    noted(now, "99.0.1");
    app.updates.tell_a_setup_that_stopped().await;
    assert_eq!(
        told.try_recv().expect("told at once").title,
        "Kluis 99.0.1 was not installed"
    );

    let this = env!("CARGO_PKG_VERSION");
    let day = kluis_desktop::GAP_BETWEEN_SETUPS_BY_ITSELF.as_secs();
    for (at, version) in [(now - takes - 60, this), (now - 2 * day, "99.0.0")] {
        noted(at, version);
        app.updates.tell_a_setup_that_did_not_install().await;
        assert!(
            told.try_recv().is_err(),
            "{version} noted at {at}: not told"
        );
    }
    app.alerts.set_notify_desktop(false).unwrap();
    noted(now - takes - 60, "99.0.2");
    app.updates.tell_a_setup_that_did_not_install().await;
    assert!(told.try_recv().is_err(), "notifications off");
}

/// A build that does not verify is not fetched by itself again within the day (a round every
/// ten minutes would fetch it each time); *Install and restart* still tries.
#[tokio::test(flavor = "multi_thread")]
async fn a_build_that_does_not_verify_is_not_fetched_by_itself_again_today() {
    let dir = tempfile::tempdir().unwrap();
    let (app, s, installed) = app_with_update(&dir, b"MZ changed", b"MZ signed").await;
    app.updates.set_automatic(true).unwrap();
    let fetched = || s.served.build_asked.load(Ordering::SeqCst);
    app.updates.tick().await;
    assert_eq!(fetched(), 1, "fetched, refused");
    app.updates.tick().await;
    assert_eq!(fetched(), 1, "not fetched by itself again today");
    assert!(
        app.updates.install().await.is_err(),
        "refused again when asked"
    );
    assert_eq!(fetched(), 2, "fetched when asked");
    assert!(installed.0.lock().unwrap().is_empty(), "nothing installed");
    assert!(
        !dir.path().join("update-started").exists(),
        "no setup noted as started"
    );
}

/// An installer that cannot start the setup.
struct FailsToStart;

impl UpdateInstaller for FailsToStart {
    fn installs_here(&self) -> bool {
        true
    }

    fn install(&self, _: &VerifiedSetup) -> Result<(), AppError> {
        Err(AppError::Update(
            "The update's setup could not be started.".into(),
        ))
    }
}

/// A setup that could not start when installing by itself is told at once (it was noted as
/// started, so no round tries again today), and not started again by the next round.
#[tokio::test(flavor = "multi_thread")]
async fn a_setup_that_could_not_start_is_told_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup().await;
    *s.served.build.lock().unwrap() = b"MZ next".to_vec();
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(b"MZ next", "9.9.9"));
    let (tx, mut told) = mpsc::unbounded_channel();
    let app = common::builder(&dir, Some(dir.path().join("saved")))
        .update_server(s.publisher.clone(), Some(s.ca.clone()))
        .notifier(
            Arc::new(common::Told(tx)),
            std::time::Duration::from_millis(300),
        )
        .open()
        .unwrap();
    app.updates.set_installer(Arc::new(FailsToStart));
    app.updates.set_automatic(true).unwrap();
    app.updates.tick().await;
    let alert = told.try_recv().expect("told at once");
    assert_eq!(alert.title, "Kluis 9.9.9 was not installed");
    app.updates.tick().await;
    assert_eq!(
        s.served.build_asked.load(Ordering::SeqCst),
        1,
        "not again today"
    );
    assert!(told.try_recv().is_err(), "told once");
}
