//! A backup that waited when the app closed, and whose resume is refused for a reason that
//! does not end it (here: the profile now points at another service), keeps its staging folder
//! and stays unfinished — nothing is deleted on a guess. On 197df1f the app removed the folder
//! on any failed resume. (Its own test binary: it sets KLUIS_CA_CERT.)

mod common;

use std::sync::Arc;
use std::time::Duration;

use kluis_desktop::{AppJobEvent, MemoryStore};
use kluis_sim::{Sim, SimConfig};
use tokio::sync::mpsc;

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_resume_keeps_the_staging_folder() {
    let mut config = SimConfig::default();
    config.faults.no_callback = true;
    let sim = Sim::start(config.clone()).await.unwrap();
    let other = Sim::start(config).await.unwrap();
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), format!("{}{}", sim.ca_pem(), other.ca_pem())).unwrap();
    // Edition 2021, and this binary's only test: nothing else reads the environment.
    std::env::set_var("KLUIS_CA_CERT", ca.path());
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryStore::default());
    let (profile, job) = common::close_while_a_backup_waits(dir.path(), &keyring, &sim).await;
    let staging = dir.path().join("staging").join(job.simple().to_string());
    std::fs::write(staging.join(".kluis-0123.part"), b"half a backup").unwrap();

    let second = common::open_app(dir.path(), &keyring, &sim);
    second
        .accounts
        .save_profile(common::office(&other, Some(profile)))
        .await
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let resumed = second
        .backups
        .resume_backups(Arc::new(move |e| {
            let _ = tx.send(e);
        }))
        .await
        .unwrap();
    assert_eq!(resumed.len(), 1, "the job was taken up");
    let refused = loop {
        let event = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the resume ends")
            .expect("events");
        if let AppJobEvent::Failed { code, message } = event.event {
            break (code, message);
        }
    };
    assert_eq!(refused.0, "config", "{}", refused.1);
    let entry = second.backups.history(None).unwrap().remove(0);
    assert_eq!(entry.stage, "accepted", "the backup stays unfinished");
    assert!(
        staging.join(".kluis-0123.part").is_file(),
        "its staging folder and what it held are kept"
    );
}
