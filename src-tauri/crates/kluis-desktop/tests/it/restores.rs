//! History → a saved backup → Contents, Restore… and Test restore, on a demo backup (the
//! simulator serves a real zip archive): its entry listed, restored into the folder the native
//! dialog picked (the page names none), and its restore test recorded in the history.

use std::sync::{Arc, Mutex};

use kluis_desktop::secrets::MemoryStore;
use kluis_desktop::{AppPaths, DesktopApp};

use crate::common;

/// The demo backup's one entry is listed; restoring it writes it into the picked folder with
/// the progress told up to its whole size; a second restore into that folder is refused
/// (nothing replaced); the restore test passes and is the klant's last one in the history.
#[tokio::test(flavor = "multi_thread")]
async fn a_saved_backup_is_listed_restored_and_tested() {
    let (dir, picked) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let app = DesktopApp::builder(
        AppPaths::under(dir.path()),
        Arc::new(MemoryStore::default()),
    )
    .save_folder(Some(dir.path().join("saved")))
    .open()
    .unwrap();
    app.set_dialogs(common::Chooses::new(picked.path()));
    let (saved, _) = common::demo_backup_saved(&app).await;
    let entry = &app.backups.history(Some("demo")).unwrap()[0];
    let id: uuid::Uuid = entry.id.parse().unwrap();
    assert_eq!(entry.path.as_deref(), saved.to_str());

    let contents = app.backups.backup_contents(id).await.unwrap();
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
        .restore_backup(id, Vec::new(), progress.clone())
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
        .restore_backup(id, Vec::new(), progress)
        .await
        .unwrap_err();
    assert_eq!(again.code().as_str(), "config", "{again}");

    let tested = app.backups.test_restore(id).await.unwrap();
    assert!(
        tested.passed && tested.entries == 1 && tested.bytes == size,
        "{tested:?}"
    );
}
