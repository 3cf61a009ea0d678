//! Closing the app while a backup waits does not lose it: the next start finishes it.
//! (Its own test binary: it points the app at a simulator's CA through KLUIS_CA_CERT.)

mod common;

use std::sync::Arc;
use std::time::Duration;

use kluis_desktop::{
    AppJobEvent, AppPaths, CallbackInput, CallbackSetting, DesktopApp, MemoryStore, ProfileInput,
    ResumedEvent,
};
use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, DEMO_USERNAME};
use kluis_sim::{Sim, SimConfig};
use tokio::sync::mpsc;

/// A backup through webhook.site is waiting for the service when the app closes; the next
/// start resumes it, and its verified file is staged and saved where the user chooses. The
/// service is asked once.
#[tokio::test(flavor = "multi_thread")]
async fn closed_app_finishes_its_backup_at_the_next_start() {
    let mut config = SimConfig::default();
    config.faults.callback_delay = Duration::from_millis(1500);
    let sim = Sim::start(config).await.unwrap();
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), sim.ca_pem()).unwrap();
    // Edition 2021, and this binary's only test: nothing else reads the environment.
    std::env::set_var("KLUIS_CA_CERT", ca.path());
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryStore::default());
    let open = || {
        let mut app = DesktopApp::open(AppPaths::under(dir.path()), keyring.clone(), None).unwrap();
        app.webhook_site = sim.webhook_site_url().to_string();
        app
    };

    let first = open();
    let profile = first
        .save_profile(ProfileInput {
            id: None,
            name: "Office".into(),
            base_url: sim.base_url().to_string(),
            username: DEMO_USERNAME.into(),
            api_key: Some(DEMO_API_KEY.to_string()),
            password: Some(DEMO_PASSWORD.into()),
            openapi_url: None,
        })
        .await
        .unwrap();
    first
        .set_callback(CallbackInput {
            setting: CallbackSetting::WebhookSite,
            relay_secret: None,
        })
        .await
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let job = first
        .start_backup(
            &profile.id,
            Arc::new(move |e| {
                let _ = tx.send(e);
            }),
        )
        .await
        .unwrap();
    while let Some(event) = rx.recv().await {
        if event
            == (AppJobEvent::Stage {
                stage: kluis_core::Stage::Accepted,
            })
        {
            break;
        }
    }
    first.shutdown().await;
    drop(first);
    assert_eq!(
        first_row_stage(&open()),
        "accepted",
        "the closed app's backup is kept"
    );

    let second = open();
    let (tx, mut rx) = mpsc::unbounded_channel::<ResumedEvent>();
    let resumed = second
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
    let saved = second.save_backup(job).await.unwrap().expect("saved");
    assert_eq!((saved.bytes, saved.sha256.clone()), staged);
    assert_eq!(
        saved.sha256,
        hex::encode(kluis_sim::payload::sha256(saved.bytes))
    );
    assert_eq!(first_row_stage(&second), "saved");
    assert_eq!(sim.stats().backups_started, 1);
}

fn first_row_stage(app: &DesktopApp) -> String {
    app.history(None).unwrap()[0].stage.clone()
}
