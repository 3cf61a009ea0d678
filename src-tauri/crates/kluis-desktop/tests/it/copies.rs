//! Copies off this computer in the app: a copy target added from a folder the dialog picked,
//! and each backup copied there once it is saved, before the window hears "saved".

use std::sync::Arc;

use kluis_copies::Place;
use kluis_desktop::AppJobEvent;
use tokio::sync::mpsc;

use crate::common;

/// The name is checked before the dialog opens; the folder the dialog picked is tested and
/// becomes the target; a backup saved to the save folder is then copied there byte for byte;
/// once the target is removed, its copies stay.
#[tokio::test(flavor = "multi_thread")]
async fn a_folder_from_the_dialog_gets_each_saved_backup() {
    let (dir, folder, nas) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let app = common::app(&dir, Some(folder.path().to_path_buf()));
    app.set_dialogs(common::Chooses::new(nas.path()));
    let unnamed = app.settings.add_copy_folder("  ").await.unwrap_err();
    assert_eq!(unnamed.code().as_str(), "config", "{unnamed}");
    let settings = app.settings.add_copy_folder("NAS").await.unwrap();
    let target = settings.copy_targets[0].clone();
    let picked = nas.path().to_string_lossy().into_owned();
    assert_eq!(target.place, Place::Folder { path: picked });
    app.settings.test_copy_target(&target.id).await.unwrap();

    let (saved, heard) = common::demo_backup_saved(&app).await;
    assert!(
        heard
            .iter()
            .any(|e| matches!(e, AppJobEvent::Copying { targets } if targets == &["NAS"])),
        "the window hears the copying: {heard:?}"
    );
    let klant_folder = saved.parent().unwrap().file_name().unwrap();
    let copy = nas
        .path()
        .join(klant_folder)
        .join(saved.file_name().unwrap());
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&saved).unwrap(),
        "copied before the window heard \"saved\""
    );

    let standing = &app.keeping.dashboard().unwrap()[0];
    let copies = standing.copies.as_ref().expect("a target is set");
    assert_eq!(
        (copies.made, copies.wanted),
        (1, 1),
        "the dashboard counts it"
    );

    // The klant may leave a target: its view says so; an unknown target is refused.
    let unknown = app.keeping.set_copy_to("demo", Some(vec!["gone".into()]));
    assert_eq!(unknown.unwrap_err().code().as_str(), "not_found");
    let chosen = app.keeping.set_copy_to("demo", Some(Vec::new())).unwrap();
    assert_eq!(chosen.copy_to, Some(Vec::new()));
    assert!(
        app.keeping.dashboard().unwrap()[0].copies.is_none(),
        "no copy wanted"
    );
    app.keeping.set_copy_to("demo", None).unwrap();

    // The target's own rule: kept in the settings, and gone again with "every copy".
    let monthly = kluis_core::retention::Retention {
        keep_monthly: Some(84),
        ..Default::default()
    };
    let kept = (app
        .settings
        .set_copy_target_rule(&target.id, Some(monthly.clone())))
    .unwrap();
    assert_eq!(kept.copy_targets[0].keep, Some(monthly));
    let every = (app
        .settings
        .set_copy_target_rule(&target.id, Some(Default::default())))
    .unwrap();
    assert_eq!(
        every.copy_targets[0].keep, None,
        "a rule that keeps all is no rule"
    );
    let unknown = app.settings.set_copy_target_rule("gone", None).unwrap_err();
    assert_eq!(unknown.code().as_str(), "not_found", "{unknown}");

    let after = app.settings.remove_copy_target(&target.id).await.unwrap();
    assert!(after.copy_targets.is_empty());
    assert!(copy.exists(), "its copies stay");
    assert!(app.keeping.dashboard().unwrap()[0].copies.is_none());
    let gone = app.settings.test_copy_target(&target.id).await.unwrap_err();
    assert_eq!(gone.code().as_str(), "not_found", "{gone}");
}

/// Fault: the copy target is away (a share not mounted) during Backup all. Each klant's backup
/// is saved; the copies that could not be made are told with the batch's failures, as copies
/// not made (not as failed backups), and the dashboard says the last backup lacks its copy;
/// once the share is back, the app's start makes them.
#[tokio::test(flavor = "multi_thread")]
async fn copies_not_made_in_backup_all_are_told() {
    let (dir, folder, nas) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (app, mut told) = common::told_app(&dir, folder.path().to_path_buf());
    let share = nas.path().join("share");
    std::fs::create_dir(&share).unwrap();
    app.set_dialogs(common::Chooses::new(&share));
    app.settings.add_copy_folder("NAS").await.unwrap();
    let mounted_elsewhere = nas.path().join("the share itself");
    std::fs::rename(&share, &mounted_elsewhere).unwrap(); // unmounted
    let saved = demo_backup_all(&app).await;
    assert!(saved >= 1, "at least one demo klant is saved");
    // (The failed klant's alert may come first, gathered on its own.)
    let alert = loop {
        let alert = told.recv().await.expect("told");
        if alert.body.contains("not copied") || alert.title.contains("not copied") {
            break alert;
        }
        assert!(alert.title.contains("failed"), "{alert:?}");
    };
    // One klant's missed copy is told in its title; several together, each in the body.
    assert!(
        alert.title.contains("not copied to NAS") || alert.body.contains("(not copied to NAS)"),
        "{alert:?}"
    );
    assert!(
        !share.exists(),
        "nothing is written where the share should be"
    );
    let lacking = (app.keeping.dashboard().unwrap().into_iter())
        .filter(|k| k.copies.as_ref().is_some_and(|c| c.made == 0))
        .count();
    assert_eq!(
        lacking, saved,
        "each saved klant's standing says its copy is missing"
    );

    // The share is back: the app's start makes the copies that wait.
    std::fs::rename(&mounted_elsewhere, &share).unwrap();
    assert_eq!(app.keeping.copy_pending().await, saved);
    let lacking = (app.keeping.dashboard().unwrap().into_iter())
        .filter(|k| k.copies.as_ref().is_some_and(|c| c.made < c.wanted))
        .count();
    assert_eq!(lacking, 0, "every saved klant's backup is copied now");
    assert_eq!(
        app.keeping.copy_pending().await,
        0,
        "nothing is copied twice"
    );
}

/// Settings → Recovery kit: a cancelled dialog makes nothing; otherwise the kit's page is
/// written by Rust where the dialog said, owner-only, with the key that opens the catalog
/// written at once to the copy target — while this computer keeps only the public half (the
/// settings) and the vouch key. A new kit replaces it.
#[tokio::test(flavor = "multi_thread")]
async fn the_recovery_kit_is_made_and_its_catalog_written_at_once() {
    let (dir, nas) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let app = common::app(&dir, None);
    app.set_dialogs(common::Chooses::new(nas.path()));
    app.settings.add_copy_folder("NAS").await.unwrap();
    app.set_dialogs(Arc::new(kluis_desktop::NoDialogs));
    assert!(
        app.settings
            .make_recovery_kit(false)
            .await
            .unwrap()
            .is_none(),
        "cancelled"
    );
    assert!(app.settings.current().recovery.is_none(), "nothing made");

    let page_at = dir.path().join("kit.txt");
    app.set_dialogs(common::Chooses::new(&page_at));
    let made = app
        .settings
        .make_recovery_kit(false)
        .await
        .unwrap()
        .expect("made");
    assert_eq!(made.path, page_at.display().to_string());
    assert!(made.not_written.is_empty(), "{:?}", made.not_written);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&page_at).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the page holds the key: owner-only");
    }
    let page = std::fs::read_to_string(&page_at).unwrap();
    let line = (page.lines())
        .map(str::trim)
        .find(|l| l.starts_with("AGE-SECRET-KEY-1"))
        .expect("the key is on the page");
    let key = kluis_recovery::RecoveryKey::parse(line).unwrap();
    let kept = app.settings.current().recovery.expect("kept");
    assert_eq!(kept.fingerprint, made.fingerprint);
    assert_eq!(
        kept.office_key,
        key.office_key().to_text(),
        "only the public half"
    );
    let settings_file = std::fs::read_to_string(dir.path().join("profiles.json")).unwrap();
    assert!(
        settings_file.contains(&kept.office_key) && !settings_file.contains("AGE-SECRET-KEY"),
        "the settings keep the public half, and the private key is kept nowhere here"
    );

    let catalogs = nas.path().join("kluis-recovery/catalogs").join(&kept.pc_id);
    let written: Vec<_> = std::fs::read_dir(&catalogs).unwrap().collect();
    assert_eq!(written.len(), 1, "a catalog written at once");
    let sealed = std::fs::read(written[0].as_ref().unwrap().path()).unwrap();
    let catalog: kluis_recovery::Catalog = kluis_recovery::sealed::open(&sealed, &key).unwrap();
    assert_eq!(catalog.pc.id, kept.pc_id, "and the kit's key opens it");

    let again = app
        .settings
        .make_recovery_kit(false)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(again.fingerprint, made.fingerprint, "a new kit");
    let renewed = app.settings.current().recovery.unwrap();
    assert_eq!(renewed.pc_id, kept.pc_id, "for the same computer");
}

/// Backup all writes each target's recovery catalog once, by the last of its backups to end —
/// before the window hears that one end — not once per klant.
#[tokio::test(flavor = "multi_thread")]
async fn backup_all_writes_the_catalog_once() {
    let (dir, folder, nas) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let app = common::app(&dir, Some(folder.path().to_path_buf()));
    app.set_dialogs(common::Chooses::new(nas.path()));
    app.settings.add_copy_folder("NAS").await.unwrap();
    app.set_dialogs(common::Chooses::new(dir.path().join("kit.txt")));
    app.settings
        .make_recovery_kit(false)
        .await
        .unwrap()
        .expect("made");
    let pc = app.settings.current().recovery.unwrap().pc_id;
    let catalogs = nas.path().join("kluis-recovery/catalogs").join(pc);
    let count = || std::fs::read_dir(&catalogs).unwrap().count();
    assert_eq!(count(), 1, "the kit's own");

    let saved = demo_backup_all(&app).await;
    assert!(saved >= 2, "several klanten copied: {saved}");
    assert_eq!(count(), 2, "one more catalog for the whole of Backup all");
}

/// The demo's klanten backed up with Backup all (every one started); how many were saved, once
/// each has ended.
pub(crate) async fn demo_backup_all(app: &kluis_desktop::DesktopApp) -> usize {
    app.accounts.start_demo().await.unwrap();
    let (events, mut ended) = mpsc::unbounded_channel();
    app.plans
        .watch_planned(Arc::new(move |e| drop(events.send(e.event))));
    let klanten = kluis_demo::DEMO_ACCOUNTS.len();
    assert_eq!(app.plans.backup_all().await.unwrap(), klanten);
    let mut saved = 0;
    for _ in 0..klanten {
        loop {
            match ended.recv().await.expect("each backup ends") {
                AppJobEvent::Saved { .. } => break saved += 1,
                AppJobEvent::Failed { .. } => break,
                _ => {}
            }
        }
    }
    saved
}
