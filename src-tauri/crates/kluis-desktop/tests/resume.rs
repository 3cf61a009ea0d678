//! Closing the app while a backup waits does not lose it: the next start finishes it.
//! (Its own test binary: it points the app at a simulator's CA through KLUIS_CA_CERT.)

mod common;

use std::sync::Arc;

use kluis_desktop::{AppJobEvent, DesktopApp, MemoryStore, ResumedEvent};
use kluis_sim::{Sim, SimConfig};
use tokio::sync::mpsc;

/// A backup through webhook.site is waiting for the service when the app closes; the next
/// start resumes it, and its verified file is staged and saved where the user chooses. The
/// service is asked once.
#[tokio::test(flavor = "multi_thread")]
async fn closed_app_finishes_its_backup_at_the_next_start() {
    // The callback is held until the app has closed: the backup surely waits then.
    let mut config = SimConfig::default();
    config.faults.hold_callbacks = true;
    let sim = Sim::start(config).await.unwrap();
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), sim.ca_pem()).unwrap();
    // Edition 2021, and this binary's only test: nothing else reads the environment.
    std::env::set_var("KLUIS_CA_CERT", ca.path());
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryStore::default());
    let open = || common::open_app(dir.path(), &keyring, &sim);
    let (_, job) = common::close_while_a_backup_waits(dir.path(), &keyring, &sim).await;
    sim.release_callbacks();
    assert_eq!(
        first_row_stage(&open()),
        "accepted",
        "the closed app's backup is kept"
    );

    let second = open();
    let (tx, mut rx) = mpsc::unbounded_channel::<ResumedEvent>();
    let resumed = second
        .backups
        .resume_backups(Arc::new(move |e| {
            let _ = tx.send(e);
        }))
        .await
        .unwrap();
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].job_id, job.to_string());
    let staged = loop {
        let event = rx.recv().await.expect("events until the file is staged");
        assert_eq!(event.job_id, job.to_string());
        match event.event {
            AppJobEvent::Staged { bytes, sha256, .. } => break (bytes, sha256),
            AppJobEvent::Failed { message, .. } => panic!("{message}"),
            _ => {}
        }
    };
    let target = dir.path().join("chosen.zip");
    second.set_dialogs(common::Chooses::new(&target));
    let saved = second
        .backups
        .save_backup(job)
        .await
        .unwrap()
        .expect("saved");
    assert_eq!((saved.bytes, saved.sha256.clone()), staged);
    assert_eq!(
        saved.sha256,
        hex::encode(kluis_sim::payload::sha256(saved.bytes))
    );
    assert_eq!(first_row_stage(&second), "saved");
    assert_eq!(sim.stats().backups_started, 1);
}

fn first_row_stage(app: &DesktopApp) -> String {
    app.backups.history(None).unwrap()[0].stage.to_string()
}
