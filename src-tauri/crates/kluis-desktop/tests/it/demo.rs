//! The demo app (`kluis-app --demo`): an office furnished with a month of backups, copies and
//! a restore test, in a folder of its own, touching nothing of the Kluis beside it.

use std::path::Path;
use std::sync::Arc;

use kluis_core::{History, KlantKey, Secret};
use kluis_desktop::profiles::{Profile, ProfileStore};
use kluis_desktop::secrets::{SecretKind, SecretStore, APP};
use kluis_desktop::{AppPaths, DesktopApp, FoundProof, MailInput, MemoryStore};
use kluis_reporting::{MailSettings, MailWhen};

use crate::common;

fn demo_app(dir: &Path, keyring: &Arc<MemoryStore>) -> DesktopApp {
    DesktopApp::builder(AppPaths::under(dir), keyring.clone())
        .demo(true)
        .open()
        .unwrap()
}

/// The files of the Kluis in `dir` (its settings and history), to compare before and after.
fn real_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["profiles.json", "history.sqlite3", "history.sqlite3-wal"]
        .iter()
        .map(|name| {
            (
                name.to_string(),
                std::fs::read(dir.join(name)).unwrap_or_default(),
            )
        })
        .collect()
}

/// A new demo shows Fietsen De Vries's last 30 nights of backups (real files that verify, in
/// the demo's own Backups folder), each copied to *Demo copies*, the newest restore-tested,
/// and one copy to the unplugged USB disk failed and waiting (one: not one per backup the
/// disk lacks); a second start adds nothing.
/// The real Kluis beside it — its settings, history and keyring entries — is untouched: the
/// demo's own e-mail password is kept apart from the real one's, and the demo never becomes a
/// login item.
#[tokio::test(flavor = "multi_thread")]
async fn the_demo_shows_a_month_of_copies_and_a_restore_test_and_touches_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryStore::default());
    // The real Kluis: a klant of its own, a save folder, its e-mail password in the keyring.
    let store = ProfileStore::open(dir.path().join("profiles.json")).unwrap();
    store
        .put(Profile::new("Acme", "https://service.example", "acme"))
        .unwrap();
    let real_folder = dir
        .path()
        .join("real backups")
        .to_string_lossy()
        .into_owned();
    store
        .update_settings(|s| {
            s.save_folder = Some(real_folder);
            Ok(())
        })
        .unwrap();
    drop(store);
    History::open(&dir.path().join("history.sqlite3")).unwrap();
    keyring
        .set(APP, SecretKind::MailPassword, &Secret::new("real-mail-pw"))
        .unwrap();
    let before = real_files(dir.path());

    let app = demo_app(dir.path(), &keyring);
    let refused = DesktopApp::builder(AppPaths::under(dir.path()), keyring.clone())
        .open()
        .unwrap()
        .start_demo()
        .await;
    assert!(
        refused.is_err(),
        "Kluis itself never starts the demo in its own files"
    );
    let info = app.start_demo().await.unwrap();
    let folder = dir.path().join("demo");
    assert_eq!(info.folder.as_deref(), Some(folder.to_str().unwrap()));

    let history = History::open(&folder.join("history.sqlite3")).unwrap();
    let klant = KlantKey::profile("demo-de-vries");
    let kept = history.kept(Some(&klant)).unwrap();
    assert_eq!(kept.len(), 30, "a month of nights");
    for entry in &kept {
        let path = Path::new(entry.path.as_deref().unwrap());
        assert!(
            path.starts_with(folder.join("Backups")),
            "{path:?} in the demo's own folder"
        );
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(
            Some(bytes.len() as u64),
            entry.bytes,
            "{path:?} is as recorded"
        );
    }
    let settings = app.settings.current();
    let id_of = |name: &str| {
        let target = settings.copy_targets.iter().find(|t| t.name == name);
        target.map(|t| t.id.clone()).unwrap()
    };
    let (copies, usb) = (id_of("Demo copies"), id_of("USB disk (not plugged in)"));
    for entry in &kept {
        let records = history.copies_of(&entry.id).unwrap();
        assert!(
            records.iter().any(|c| c.target == copies && c.made),
            "{} copied to Demo copies: {records:?}",
            entry.id
        );
    }
    let newest = kept.last().unwrap();
    let failed_on_usb: Vec<_> = (kept.iter())
        .flat_map(|entry| history.copies_of(&entry.id).unwrap())
        .filter(|c| c.target == usb)
        .collect();
    assert_eq!(
        failed_on_usb.len(),
        1,
        "one try of the disk: {failed_on_usb:?}"
    );
    let waiting = &failed_on_usb[0];
    assert!(
        waiting.job_id == newest.id && !waiting.made && waiting.error_message.is_some(),
        "the newest copy to the unplugged disk failed and waits: {waiting:?}"
    );
    assert_eq!(
        history.copies_missing(Some(&klant), &usb).unwrap().len(),
        30
    );
    let dashboard = app.keeping.dashboard().unwrap();
    let row = dashboard.iter().find(|k| k.profile_id == "demo-de-vries");
    let shown = row
        .and_then(|k| k.copies.clone())
        .expect("De Vries's copies");
    let reason = shown.last_error.unwrap_or_default();
    assert!(
        (shown.made, shown.wanted) == (1, 2)
            && reason.starts_with("USB disk (not plugged in): the folder")
            && !reason.contains("Copy target"),
        "the dashboard names the disk once, then says why: {reason}"
    );
    let tested = history
        .restore_test_of(&newest.id)
        .unwrap()
        .expect("restore-tested");
    assert!(tested.passed, "{tested:?}");
    let view = app.accounts.list();
    let de_vries = view.iter().find(|p| p.id == "demo-de-vries").unwrap();
    assert_eq!(
        de_vries.copy_to,
        Some(vec![copies.clone(), usb.clone()]),
        "{de_vries:?}"
    );

    // Starting at login is Kluis's own setting: the demo refuses it, and says so.
    let refused = app.background.set_start_at_login(true).unwrap_err();
    assert!(refused.to_string().contains("demo"), "{refused}");
    assert!(
        app.background.start_at_login().is_err(),
        "shown unavailable"
    );

    // The demo's own e-mail settings: their password kept apart from the real one's.
    app.alerts
        .set_mail(MailInput {
            settings: MailSettings {
                server: "127.0.0.1".into(),
                port: 587,
                username: "demo".into(),
                password_saved: false,
                from: "kluis@demo.test".into(),
                to: vec!["beheer@demo.test".into()],
                when: MailWhen::EachFailure,
            },
            password: Some("demo-mail-pw".into()),
        })
        .await
        .unwrap();
    drop(app);

    // Started again: the month is not added twice.
    let again = demo_app(dir.path(), &keyring);
    again.start_demo().await.unwrap();
    assert_eq!(
        history.kept(Some(&klant)).unwrap().len(),
        30,
        "furnished once"
    );
    drop(again);

    assert_eq!(
        real_files(dir.path()),
        before,
        "the real Kluis's settings and history unchanged"
    );
    let secret = |id: &str| {
        let kept = keyring.get(id, SecretKind::MailPassword).unwrap();
        kept.map(|s| s.expose().to_string())
    };
    assert_eq!(
        secret(APP).as_deref(),
        Some("real-mail-pw"),
        "the real e-mail password unchanged"
    );
    assert_eq!(
        secret(&format!("demo/{APP}")).as_deref(),
        Some("demo-mail-pw"),
        "the demo's own kept apart"
    );
}

/// In the demo a newcomer can try the day the copies are for: a recovery kit made there (its
/// catalogs written to *Demo copies* at once) finds, from that folder alone, each of De
/// Vries's 30 backups, named by the demo's catalog, with its restore test; one restores whole.
#[tokio::test(flavor = "multi_thread")]
async fn the_demo_s_copies_are_recovered_with_a_kit_made_in_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryStore::default());
    let app = demo_app(dir.path(), &keyring);
    app.start_demo().await.unwrap();
    let page = dir.path().join("kit.txt");
    app.set_dialogs(common::Chooses::new(&page));
    let kit = (app.settings.make_recovery_kit(false).await.unwrap()).expect("made");
    assert_eq!(
        kit.not_written.len(),
        1,
        "only the unplugged disk has no catalog: {:?}",
        kit.not_written
    );
    let settings = app.settings.current();
    let copies = (settings.copy_targets.iter())
        .find(|t| t.name == "Demo copies")
        .unwrap()
        .id
        .clone();

    let found = (app.recovery.find_copies(&copies, None).await.unwrap()).expect("the page read");
    assert_eq!(found.fingerprint, kit.fingerprint);
    assert_eq!(found.backups.len(), 30, "{:?}", found.backups);
    assert!(
        (found.backups.iter()).all(|f| f.proof == FoundProof::Catalog && f.on_target),
        "each named by the demo's catalog and there"
    );
    assert!(
        found
            .backups
            .iter()
            .any(|f| f.restore_test.is_some_and(|(_, passed)| passed)),
        "the newest's restore test shown"
    );
    let to = dir.path().join("restored");
    app.set_dialogs(common::Chooses::new(&to));
    let summary = (app.recovery)
        .restore_found(&found.backups[0].location, Arc::new(|_| {}))
        .await
        .unwrap()
        .expect("restored");
    assert!(
        summary.files > 0 && summary.not_restored.is_empty(),
        "{summary:?}"
    );
}
