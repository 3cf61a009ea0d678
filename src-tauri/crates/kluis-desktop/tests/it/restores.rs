//! History → a saved backup → Contents, Restore… and Test restore, on a demo backup (the
//! simulator serves a real zip archive): its entry listed, restored into the folder the native
//! dialog picked (the page names none), and its restore test recorded in the history.

use std::sync::{Arc, Mutex};

use kluis_desktop::secrets::MemoryStore;
use kluis_desktop::DesktopApp;

use crate::common;

/// The app with its files under `dir`, saving into `dir/saved`.
fn app_under(dir: &tempfile::TempDir) -> DesktopApp {
    DesktopApp::builder(
        crate::common::english_under(dir.path()),
        Arc::new(MemoryStore::default()),
    )
    .save_folder(Some(dir.path().join("saved")))
    .open()
    .unwrap()
}

/// The demo backup's one entry is listed; restoring it writes it into the picked folder with
/// the progress told up to its whole size; a second restore into that folder is refused
/// (nothing replaced); the restore test passes and is the klant's last one in the history.
#[tokio::test(flavor = "multi_thread")]
async fn a_saved_backup_is_listed_restored_and_tested() {
    let (dir, picked) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let app = app_under(&dir);
    app.set_dialogs(common::Chooses::new(picked.path()));
    let (saved, _) = common::demo_backup_saved(&app).await;
    let entry = &app.backups.history(Some("demo")).unwrap()[0];
    let id: uuid::Uuid = entry.id.parse().unwrap();
    assert_eq!(entry.path.as_deref(), saved.to_str());

    let contents = app.backups.backup_contents(id, None).await.unwrap();
    assert_eq!(contents.len(), 1);
    assert_eq!(contents[0].path.as_deref(), Some("owner-data.bin"));
    let size = contents[0].size;

    let told = Arc::new(Mutex::new(Vec::new()));
    let progress = {
        let told = told.clone();
        Arc::new(move |p: kluis_desktop::RestoreProgress| {
            told.lock().unwrap().push((p.done, p.total))
        })
    };
    let summary = app
        .backups
        .restore_backup(id, None, Vec::new(), progress.clone())
        .await
        .unwrap()
        .expect("a folder was picked");
    assert_eq!((summary.files, summary.bytes), (1, size));
    let restored = std::fs::metadata(picked.path().join("owner-data.bin")).unwrap();
    assert_eq!(restored.len(), size);
    assert_eq!(
        told.lock().unwrap().last(),
        Some(&(size, size)),
        "the progress reaches the whole"
    );
    let again = app
        .backups
        .restore_backup(id, None, Vec::new(), progress)
        .await
        .unwrap_err();
    assert_eq!(again.code().as_str(), "config", "{again}");

    let tested = app.backups.test_restore(id).await.unwrap();
    let tested = &tested[0].record;
    assert!(
        tested.passed && tested.entries == 1 && tested.bytes == size,
        "{tested:?}"
    );
}

/// A lost disk, in the app: the demo backup's copy on a folder target is listed among its
/// copies; with the saved file gone, Contents and Restore… read the copy (fetched back and
/// checked) and restore its entry into the picked folder, and Test restore fails the lost
/// file but passes the copy — both recorded.
#[tokio::test(flavor = "multi_thread")]
async fn a_copy_is_read_when_the_saved_file_is_lost() {
    let (dir, nas, picked) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let app = app_under(&dir);
    app.set_dialogs(common::Chooses::new(nas.path()));
    let settings = app.settings.add_copy_folder("NAS").await.unwrap();
    let nas_id = settings.copy_targets[0].id.clone();
    let (saved, _) = common::demo_backup_saved(&app).await;
    let id: uuid::Uuid = app.backups.history(Some("demo")).unwrap()[0]
        .id
        .parse()
        .unwrap();
    let copies = app.backups.backup_copies(id).await.unwrap();
    assert_eq!(
        copies,
        [kluis_desktop::HeldCopy {
            target_id: nas_id.clone(),
            name: "NAS".into()
        }]
    );

    std::fs::remove_file(&saved).unwrap(); // the disk is lost
    let lost = app.backups.backup_contents(id, None).await.unwrap_err();
    assert!(!lost.to_string().is_empty());
    let from_copy = (app.backups.backup_contents(id, Some(nas_id.clone())))
        .await
        .unwrap();
    assert_eq!(from_copy[0].path.as_deref(), Some("owner-data.bin"));
    app.set_dialogs(common::Chooses::new(picked.path()));
    let progress = Arc::new(|_: kluis_desktop::RestoreProgress| {});
    let summary = app
        .backups
        .restore_backup(id, Some(nas_id.clone()), Vec::new(), progress)
        .await
        .unwrap()
        .expect("a folder was picked");
    let restored = std::fs::metadata(picked.path().join("owner-data.bin")).unwrap();
    assert_eq!((summary.files, restored.len()), (1, from_copy[0].size));

    let tested = app.backups.test_restore(id).await.unwrap();
    let passed: Vec<(bool, Option<&str>)> = (tested.iter())
        .map(|t| (t.record.passed, t.copy_on.as_deref()))
        .collect();
    assert_eq!(passed, [(false, None), (true, Some("NAS"))], "{tested:?}");
}

/// Fault: the service sends a damaged archive (a byte changed, and no digest to tell it by):
/// the backup is saved as received, its first restore test — run after the save of a plan or
/// Backup all — fails, that is notified as a failed backup is, and the dashboard flags the
/// klant with what did not restore.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_restore_test_is_notified() {
    let mut config = kluis_sim::SimConfig::default();
    config.faults.corrupt_download = true;
    config.faults.send_digest = false;
    config.faults.callback_delay = std::time::Duration::from_millis(50);
    let sim = kluis_sim::Sim::start(config).await.unwrap();
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), sim.ca_pem()).unwrap();
    let (dir, folder) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (tx, mut told) = tokio::sync::mpsc::unbounded_channel();
    let app = DesktopApp::builder(
        crate::common::english_under(dir.path()),
        Arc::new(MemoryStore::default()),
    )
    .save_folder(Some(folder.path().to_path_buf()))
    .notifier(
        Arc::new(common::Told(tx)),
        std::time::Duration::from_millis(100),
    )
    .webhook_site(sim.webhook_site_url())
    .open()
    .unwrap();
    app.set_dialogs(common::Chooses::new(ca.path()));
    let profile = (app.accounts.save_profile(common::office(&sim, None)))
        .await
        .unwrap();
    app.accounts.choose_profile_ca(&profile.id).await.unwrap();
    common::callbacks_through_webhook_site(&app).await;
    let (events, mut ended) = tokio::sync::mpsc::unbounded_channel();
    app.plans
        .watch_planned(Arc::new(move |e| drop(events.send(e.event))));
    assert_eq!(app.plans.backup_all().await.unwrap(), 1);
    loop {
        match ended.recv().await.expect("the backup ends") {
            kluis_desktop::AppJobEvent::Saved { .. } => break,
            kluis_desktop::AppJobEvent::Failed { message, .. } => panic!("{message}"),
            _ => {}
        }
    }
    let alert = told.recv().await.expect("the failed restore test is told");
    assert_eq!(alert.title, "Backup of Office failed its restore test");
    assert!(
        alert
            .body
            .starts_with("The restore test failed: owner-data.bin"),
        "{alert:?}"
    );
    let standing = &app.keeping.dashboard().unwrap()[0];
    assert!(
        (standing.restore_test_failed.as_deref())
            .is_some_and(|what| what.contains("owner-data.bin")),
        "the dashboard flags the klant: {:?}",
        standing.restore_test_failed
    );
}
