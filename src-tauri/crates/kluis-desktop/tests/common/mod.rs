//! What the desktop tests share: a stand-in for the native dialogs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use std::sync::Arc;

use async_trait::async_trait;
use kluis_desktop::{
    AppJobEvent, AppPaths, CallbackChoice, CallbackInput, DesktopApp, DesktopAppBuilder, Dialogs,
    MemoryStore, ProfileInput,
};
use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, DEMO_USERNAME};
use kluis_sim::Sim;
use tokio::sync::mpsc;

/// A user who answers every dialog with `path` (and the file name asked about is recorded).
pub struct Chooses {
    pub path: PathBuf,
    pub asked: std::sync::Mutex<Vec<String>>,
}

impl Chooses {
    pub fn new(path: impl Into<PathBuf>) -> std::sync::Arc<Chooses> {
        std::sync::Arc::new(Chooses {
            path: path.into(),
            asked: Default::default(),
        })
    }
}

#[async_trait]
impl Dialogs for Chooses {
    async fn save_file(&self, file_name: &str, _folder: Option<&Path>) -> Option<PathBuf> {
        self.asked.lock().unwrap().push(file_name.to_string());
        Some(self.path.clone())
    }

    async fn pick_folder(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }

    async fn pick_program(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }

    async fn pick_certificate(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }

    async fn pick_key_file(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }

    async fn pick_import_file(&self, _kind: kluis_desktop::ImportFile) -> Option<PathBuf> {
        Some(self.path.clone())
    }

    async fn pick_recovery_key(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }
}

/// Starts a backup of `profile` and returns its id once the service has accepted it.
pub async fn start_until_accepted(app: &DesktopApp, profile: &str) -> uuid::Uuid {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let job = app
        .backups
        .start_backup(profile, Arc::new(move |e| drop(tx.send(e))))
        .await
        .unwrap();
    let accepted = AppJobEvent::Stage {
        stage: kluis_core::Stage::Accepted,
    };
    while let Some(event) = rx.recv().await {
        if event == accepted {
            return job;
        }
    }
    panic!("the backup was never accepted");
}

/// The app on `dir`'s files with an in-memory keyring, saving to `save_folder` when given.
pub fn app(dir: &tempfile::TempDir, save_folder: Option<PathBuf>) -> DesktopApp {
    builder(dir, save_folder).open().unwrap()
}

/// [`app`] whose notifications (failures gathered for 300 ms) come to the receiver.
pub fn told_app(
    dir: &tempfile::TempDir,
    save_folder: PathBuf,
) -> (DesktopApp, mpsc::UnboundedReceiver<kluis_reporting::Alert>) {
    let (tx, told) = mpsc::unbounded_channel();
    let app = (builder(dir, Some(save_folder)))
        .notifier(Arc::new(Told(tx)), std::time::Duration::from_millis(300))
        .open()
        .unwrap();
    (app, told)
}

/// [`app`]'s builder, for a test that changes more.
pub fn builder(dir: &tempfile::TempDir, save_folder: Option<PathBuf>) -> DesktopAppBuilder {
    let paths = english_under(dir.path());
    DesktopApp::builder(paths, Arc::new(MemoryStore::default())).save_folder(save_folder)
}

/// The app's files under `dir` ([`AppPaths::under`]), its settings speaking English (unless a
/// test set another language): the tests read Kluis's English, whatever this machine's locale.
pub fn english_under(dir: &Path) -> AppPaths {
    let paths = AppPaths::under(dir);
    let profiles = kluis_desktop::profiles::ProfileStore::open(paths.profiles_file.clone());
    let profiles = profiles.unwrap();
    if profiles.settings().language.is_none() {
        let english = |settings: &mut kluis_desktop::profiles::Settings| {
            settings.language = Some(kluis_desktop::Language::En);
            Ok(())
        };
        profiles.update_settings(english).unwrap();
    }
    paths
}

/// The profile "Office" of one's own against `sim` (`id`: an existing one, to change it).
pub fn office(sim: &Sim, id: Option<String>) -> ProfileInput {
    ProfileInput {
        id,
        name: "Office".into(),
        base_url: sim.base_url().to_string(),
        username: DEMO_USERNAME.into(),
        api_key: Some(DEMO_API_KEY.to_string()),
        password: Some(DEMO_PASSWORD.into()),
        openapi_url: None,
        tags: None,
    }
}

/// The app on `dir`'s files, with webhook.site played by `sim`'s stand-in. (The test binary
/// must trust `sim` through `KLUIS_CA_CERT`.)
pub fn open_app(dir: &Path, keyring: &Arc<MemoryStore>, sim: &Sim) -> DesktopApp {
    DesktopApp::builder(AppPaths::under(dir), keyring.clone())
        .webhook_site(sim.webhook_site_url())
        .open()
        .unwrap()
}

/// A profile of one's own against `sim`, backups through webhook.site, a backup started and
/// the app closed once the service accepted it (so the backup waits). Returns the profile's
/// id and the job's.
pub async fn close_while_a_backup_waits(
    dir: &Path,
    keyring: &Arc<MemoryStore>,
    sim: &Sim,
) -> (String, uuid::Uuid) {
    let first = open_app(dir, keyring, sim);
    let profile = first
        .accounts
        .save_profile(office(sim, None))
        .await
        .unwrap();
    callbacks_through_webhook_site(&first).await;
    let job = start_until_accepted(&first, &profile.id).await;
    first.shutdown().await;
    (profile.id, job)
}

/// Settings → callbacks through webhook.site (played by the stand-in the builder was given).
pub async fn callbacks_through_webhook_site(app: &DesktopApp) {
    app.settings
        .set_callback(CallbackInput {
            setting: CallbackChoice::WebhookSite,
            relay_secret: None,
        })
        .await
        .unwrap();
}

/// Hands each alert to the test as it is notified.
pub struct Told(pub mpsc::UnboundedSender<kluis_reporting::Alert>);

impl kluis_reporting::Notifier for Told {
    fn notify<'a>(
        &'a self,
        alert: &'a kluis_reporting::Alert,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = kluis_profiles::ProfileResult<()>> + Send + 'a>,
    > {
        let _ = self.0.send(alert.clone());
        Box::pin(async { Ok(()) })
    }
}

/// A backup of the (started) demo's "demo" klant, saved in the save folder: where it went.
pub async fn saved_demo_backup(app: &DesktopApp) -> PathBuf {
    let (tx, mut rx) = mpsc::unbounded_channel();
    (app.backups
        .start_backup("demo", Arc::new(move |e| drop(tx.send(e)))))
    .await
    .unwrap();
    while let Some(event) = rx.recv().await {
        match event {
            AppJobEvent::Saved { path, .. } => return path.into(),
            AppJobEvent::Failed { .. } | AppJobEvent::Staged { .. } => panic!("{event:?}"),
            _ => {}
        }
    }
    panic!("the backup never ended")
}

/// Starts the demo and backs up its "demo" klant; where the backup was saved (the window's
/// "saved" event) and the events the window heard before it, or the test fails with the
/// failure's message.
pub async fn demo_backup_saved(app: &DesktopApp) -> (PathBuf, Vec<kluis_desktop::AppJobEvent>) {
    app.accounts.start_demo().await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let sink = Arc::new(move |e| drop(tx.send(e)));
    app.backups.start_backup("demo", sink).await.unwrap();
    let mut before = Vec::new();
    loop {
        match rx.recv().await.expect("the backup ends") {
            kluis_desktop::AppJobEvent::Saved { path, .. } => break (PathBuf::from(path), before),
            kluis_desktop::AppJobEvent::Failed { message, .. } => panic!("{message}"),
            event => before.push(event),
        }
    }
}
