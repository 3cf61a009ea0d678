//! One klant's unattended backup takes one path (`kluis_profiles::unattended`), whichever host
//! runs it: the same klant — "keep the last 1", a monitor — backed up twice by the app's Backup
//! all (the desktop app's logic, in this process) and twice by `kluis backup --all`, each with
//! its own profiles, history and folder, leaves the same history (each job's stages, which one
//! the rule removed and by which rule), the same files and the same pings.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kluis_copies::{CopyTarget, Place};
use kluis_core::retention::Retention;
use kluis_core::{History, HistoryEntry, KlantKey};
use kluis_desktop::{AppJobEvent, AppPaths, DesktopApp, Dialogs, MemoryStore, ProfileInput};
use kluis_sim::config::{Account, DEMO_API_KEY};

use crate::common::*;
use crate::profiles::KLANT_PASSWORD;

/// The app's dialogs in a test: the certificate dialog picks `0`, every other is cancelled.
struct PicksCertificate(PathBuf);

#[async_trait::async_trait]
impl Dialogs for PicksCertificate {
    async fn save_file(&self, _: &str, _: Option<&Path>) -> Option<PathBuf> {
        None
    }
    async fn pick_folder(&self) -> Option<PathBuf> {
        None
    }
    async fn pick_program(&self) -> Option<PathBuf> {
        None
    }
    async fn pick_certificate(&self) -> Option<PathBuf> {
        Some(self.0.clone())
    }
}

/// What a klant's history says, host aside: each job's stages, oldest first, and the rule
/// that removed its file, if one did.
fn jobs(history: &History, profile: &str) -> Vec<(Vec<String>, Option<String>)> {
    let mut entries: Vec<HistoryEntry> = history
        .list(Some(&KlantKey::profile(profile)), 100)
        .unwrap();
    entries.reverse();
    (entries.into_iter())
        .map(|e| {
            let stages = history.transitions(e.id.parse().unwrap()).unwrap();
            (stages, e.removed.map(|r| r.rule))
        })
        .collect()
}

/// The files below `dir` (one level of folders), by folder and extension — a backup's name
/// carries the minute it was made in.
fn files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for folder in std::fs::read_dir(dir).unwrap() {
        let folder = folder.unwrap().path();
        if !folder.is_dir() {
            continue; // the target's mark
        }
        for file in std::fs::read_dir(&folder).unwrap() {
            let file = file.unwrap().path();
            found.push(format!(
                "{}/*.{}",
                folder.file_name().unwrap().to_string_lossy(),
                file.extension().unwrap().to_string_lossy()
            ));
        }
    }
    found.sort();
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn the_app_and_the_cli_back_up_a_klant_alike() {
    let env = env(|config| {
        config.accounts.push(Account {
            username: "bakker".into(),
            password: KLANT_PASSWORD.into(),
            ..Account::demo()
        });
        config.payload_size = 64 * 1024;
    })
    .await;
    let keep_last_1 = Retention {
        keep_last: Some(1),
        ..Retention::default()
    };

    // The app: the klant added in its form, the simulator's CA picked in the dialog.
    let app_dir = tempfile::tempdir().unwrap();
    let app_out = app_dir.path().join("backups");
    std::fs::create_dir_all(&app_out).unwrap();
    // A copy target (the app's settings, as its Settings would save it).
    let app_nas = app_dir.path().join("nas");
    std::fs::create_dir_all(&app_nas).unwrap();
    let paths = AppPaths::under(app_dir.path());
    let nas = |folder: &Path| {
        // Tested (so marked as the target), as Settings' "Add a folder" does.
        kluis_copies::folder::test("NAS", folder).unwrap();
        let path = folder.to_string_lossy().into_owned();
        CopyTarget::new("NAS", Place::Folder { path }).unwrap()
    };
    (kluis_profiles::ProfileStore::open(paths.profiles_file.clone()).unwrap())
        .update_settings(|settings| {
            settings.copy_targets.push(nas(&app_nas));
            Ok(())
        })
        .unwrap();
    let app = DesktopApp::open(
        paths,
        Arc::new(MemoryStore::default()),
        Some(app_out.clone()),
    )
    .unwrap();
    let input = ProfileInput {
        id: None,
        name: "Bakker".into(),
        base_url: env.sim.base_url().to_string(),
        username: "bakker".into(),
        api_key: Some(DEMO_API_KEY.to_string()),
        password: Some(KLANT_PASSWORD.into()),
        openapi_url: None,
        tags: None,
    };
    let app_klant = app.accounts.save_profile(input).await.unwrap().id;
    app.set_dialogs(Arc::new(PicksCertificate(env.ca.path().to_path_buf())));
    app.accounts.choose_profile_ca(&app_klant).await.unwrap();
    app.keeping
        .set_retention(&app_klant, Some(keep_last_1.clone()))
        .unwrap();
    let app_monitor = env.sim.monitor_url("app").to_string();
    app.plans
        .set_monitor(&app_klant, Some(app_monitor))
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    app.plans
        .watch_planned(Arc::new(move |e| drop(tx.send(e.event))));
    for _ in 0..2 {
        assert_eq!(app.plans.backup_all().await.unwrap(), 1);
        loop {
            match rx.recv().await.expect("the backup ends") {
                AppJobEvent::Saved { .. } => break,
                AppJobEvent::Failed { message, .. } => panic!("{message}"),
                _ => {}
            }
        }
    }

    // The CLI: the same klant in its own profiles file, with the same rule and a monitor.
    let key = DEMO_API_KEY.to_string();
    let cli_klant = env.add("Bakker", "bakker", &key, KLANT_PASSWORD).await;
    let cli_monitor = env.sim.monitor_url("cli").to_string();
    let plan = ["plan", "Bakker", "--keep-last", "1", "--ping", &cli_monitor];
    assert_succeeded(&env.saved(&plan, &[]).await);
    let cli_nas = env.dir.path().join("nas");
    std::fs::create_dir_all(&cli_nas).unwrap();
    let add = [
        "copy-target",
        "add",
        "NAS",
        "--folder",
        cli_nas.to_str().unwrap(),
    ];
    assert_succeeded(&env.saved(&add, &[]).await);
    let cli_out = env.dir.path().join("backups");
    std::fs::create_dir_all(&cli_out).unwrap();
    for _ in 0..2 {
        assert_succeeded(&env.backup_all(&cli_out, &[]).await);
    }

    let app_history = History::open(&app_dir.path().join("history.sqlite3")).unwrap();
    let cli_history = History::open(&env.dir.path().join("history.sqlite3")).unwrap();
    let app_jobs = jobs(&app_history, &app_klant);
    assert_eq!(app_jobs.len(), 2, "{app_jobs:?}");
    assert_eq!(
        app_jobs[0].1.as_deref(),
        Some("keep the last 1"),
        "the rule removed the first"
    );
    assert_eq!(app_jobs, jobs(&cli_history, &cli_klant), "the same history");
    assert_eq!(files(&app_out), ["Bakker/*.zip"], "the newest backup only");
    assert_eq!(files(&app_out), files(&cli_out), "the same files");
    let copies = ["Bakker/*.zip", "Bakker/*.zip"];
    assert_eq!(files(&app_nas), copies, "both copied before the rule ran");
    assert_eq!(files(&app_nas), files(&cli_nas), "the same copies");
    let status = env.saved(&["status", "--json"], &[]).await;
    let line: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(
        line["copies"]["made"], 1,
        "`kluis status` counts the copy: {line}"
    );
    let standing = &app.keeping.dashboard().unwrap()[0];
    assert_eq!(standing.copies.as_ref().map(|c| c.made), Some(1));
    let pings = env.sim.pings();
    let heard = |check: &str| -> Vec<bool> {
        (pings.iter())
            .filter(|p| p.path == check || p.path == format!("{check}/fail"))
            .map(|p| p.path == check && p.body.contains("backup saved"))
            .collect()
    };
    assert_eq!(heard("app"), [true, true], "{pings:?}");
    assert_eq!(heard("app"), heard("cli"), "the same pings");
}
