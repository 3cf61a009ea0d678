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

/// An installer that keeps what it was given: the setup's bytes, read at once.
#[derive(Default)]
struct Installed(Mutex<Vec<Vec<u8>>>);

impl UpdateInstaller for Installed {
    fn installs_here(&self) -> bool {
        true
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

/// *Install now* is refused while a backup runs and when a klant's plan is due within 15
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
/// moment; without it, it only looks.
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
    app.updates.tick().await;
    assert_eq!(installed.0.lock().unwrap().len(), 1, "installed by itself");
}

/// A build changed after it was signed is never handed to the installer, and nothing of it is
/// left in the staging folder; where the package manager updates Kluis, *Install now* says so.
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
