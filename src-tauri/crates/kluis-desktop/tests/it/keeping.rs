//! What the app keeps: a klant's retention rule previewed, saved and applied after each
//! save; "Verify backups" finding a changed file, and the dashboard showing it. Against the
//! demo's simulator over TLS, with real files.

use std::sync::Arc;

use kluis_core::retention::Retention;
use kluis_core::verify::Finding;
use kluis_desktop::{AppJobEvent, DesktopApp, ReportFormat, ReportRequest};
use tokio::sync::mpsc;

use crate::common::*;

fn keep_last(n: u32) -> Retention {
    Retention {
        keep_last: Some(n),
        ..Retention::default()
    }
}

/// The form's preview names the backups a rule would remove before it is saved (and removes
/// nothing); once saved, the rule is applied after the next save — before the window hears
/// "saved" — and only to Kluis's own files: the user's file in the folder stays.
#[tokio::test(flavor = "multi_thread")]
async fn a_rule_is_previewed_saved_and_applied_after_each_save() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    std::fs::write(folder.path().join("notities.txt"), "mine").unwrap();
    let mut saved = Vec::new();
    for _ in 0..3 {
        saved.push(saved_demo_backup(&app).await);
    }
    let preview = app.keeping.preview_retention("demo", keep_last(2)).unwrap();
    let previewed: Vec<_> = preview.iter().map(|e| e.path.clone().unwrap()).collect();
    assert_eq!(
        previewed,
        [saved[0].to_str().unwrap()],
        "the oldest would go"
    );
    assert!(saved[0].exists(), "a preview removes nothing");

    let view = app
        .keeping
        .set_retention("demo", Some(keep_last(2)))
        .unwrap();
    assert_eq!(view.retention, Some(keep_last(2)));
    saved.push(saved_demo_backup(&app).await);
    assert!(
        !saved[0].exists() && !saved[1].exists(),
        "the two oldest are removed"
    );
    assert!(saved[2].exists() && saved[3].exists());
    assert!(folder.path().join("notities.txt").exists());
    let history = app.backups.history(Some("demo")).unwrap();
    let removed: Vec<_> = (history.iter())
        .filter_map(|e| e.removed.as_ref().map(|r| r.rule.clone()))
        .collect();
    assert_eq!(removed, ["keep the last 2", "keep the last 2"]);

    let view = app
        .keeping
        .set_retention("demo", Some(Retention::default()))
        .unwrap();
    assert_eq!(
        view.retention, None,
        "a rule that keeps everything is no rule"
    );
}

/// "Verify backups" reads every kept backup again: a changed one is reported with its
/// finding, and the dashboard counts it for its klant until it is verified intact again.
#[tokio::test(flavor = "multi_thread")]
async fn verify_finds_a_changed_backup_and_the_dashboard_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    let intact = saved_demo_backup(&app).await;
    let changed = saved_demo_backup(&app).await;
    let original = std::fs::read(&changed).unwrap();
    let mut bytes = original.clone();
    bytes[4096] ^= 1;
    std::fs::write(&changed, &bytes).unwrap();

    let report = app.keeping.verify_backups().await.unwrap();
    assert_eq!(report.verified, 2);
    assert_eq!(report.problems.len(), 1);
    let problem = &report.problems[0];
    assert_eq!(problem.path.as_deref(), changed.to_str());
    assert_eq!(
        problem.last_check.as_ref().map(|c| c.finding),
        Some(Finding::Changed)
    );
    let demo = |app: &DesktopApp| {
        let statuses = app.keeping.dashboard().unwrap();
        statuses
            .into_iter()
            .find(|s| s.profile_id == "demo")
            .unwrap()
    };
    assert_eq!(demo(&app).damaged, 1);
    assert!(intact.exists());

    std::fs::write(&changed, &original).unwrap();
    assert!(app
        .keeping
        .verify_backups()
        .await
        .unwrap()
        .problems
        .is_empty());
    assert_eq!(demo(&app).damaged, 0, "intact again");
}

/// "Verify once a month": nothing is read again while the klant's backups are fresh; once
/// one has gone a month unread, the next save reads every kept backup again (each gets its
/// finding), and the save after that reads none.
#[tokio::test(flavor = "multi_thread")]
async fn monthly_verification_runs_after_a_save_when_due() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    assert!(
        app.keeping
            .set_verify_monthly("demo", true)
            .unwrap()
            .verify_monthly
    );
    assert!(
        !(app.keeping.set_restore_test_monthly("demo", false))
            .unwrap()
            .restore_test_monthly,
        "the monthly restore test turned off from the plan form"
    );
    saved_demo_backup(&app).await;
    let history = kluis_core::History::open(&dir.path().join("history.sqlite3")).unwrap();
    let klant = app.backups.history(Some("demo")).unwrap()[0]
        .profile
        .clone();
    assert_eq!(
        history.last_restore_test(&klant).unwrap(),
        None,
        "turned off: no restore test after the save"
    );
    let checks = |app: &DesktopApp| -> Vec<Option<i64>> {
        (app.backups.history(Some("demo")).unwrap().iter())
            .map(|e| e.last_check.as_ref().map(|c| c.at_ms))
            .collect()
    };
    assert_eq!(checks(&app), [None], "fresh: nothing read again");
    let history = rusqlite::Connection::open(dir.path().join("history.sqlite3")).unwrap();
    let month = 31 * 24 * 3600 * 1000_i64;
    history
        .execute(
            "UPDATE jobs SET finished_at_ms = finished_at_ms - ?1",
            [month],
        )
        .unwrap();
    saved_demo_backup(&app).await;
    let read = checks(&app);
    assert!(
        read.iter().all(Option::is_some),
        "both read again after the save: {read:?}"
    );
    saved_demo_backup(&app).await;
    assert_eq!(checks(&app)[1..], read[..], "not again within the month");
}

/// Settings → free space: with a minimum above what the save folder's disk has, a backup
/// fails before the service is asked (no stage past "requested"), naming the folder; with the
/// minimum back to the default, the next backup of the same klant is saved (its connection
/// follows the setting).
#[tokio::test(flavor = "multi_thread")]
async fn a_backup_is_not_asked_for_without_room_to_save_it() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    saved_demo_backup(&app).await;
    let settings = app
        .settings
        .set_min_free(Some(u64::from(u32::MAX)))
        .unwrap();
    assert_eq!(settings.min_free_mib, Some(u64::from(u32::MAX)));

    let (tx, mut rx) = mpsc::unbounded_channel();
    app.backups
        .start_backup("demo", Arc::new(move |e| drop(tx.send(e))))
        .await
        .unwrap();
    let mut stages = Vec::new();
    let (code, message) = loop {
        match rx.recv().await.expect("the backup ends") {
            AppJobEvent::Failed { code, message } => break (code, message),
            AppJobEvent::Stage { stage } => stages.push(stage),
            AppJobEvent::Saved { .. } => panic!("saved without room"),
            _ => {}
        }
    };
    assert_eq!(code, kluis_core::Code::Io);
    assert!(message.contains("MiB is free"), "{message}");
    assert!(
        message.contains(&folder.path().display().to_string()),
        "names the folder: {message}"
    );
    use kluis_core::Stage;
    assert_eq!(
        stages,
        [Stage::Requested, Stage::Failed],
        "never sent to the service"
    );

    app.settings.set_min_free(None).unwrap();
    saved_demo_backup(&app).await;
}

/// A klant set to encrypt with a passphrase (kept in the keyring, not sent back) gets its next
/// backup saved as `….age`, which opens with that passphrase to the digest the history holds
/// (and its first restore test, after the save, opened it with the passphrase and passed);
/// a recipient that is not one, or no passphrase at all, is refused with what to do.
#[tokio::test(flavor = "multi_thread")]
async fn a_klant_set_to_encrypt_gets_encrypted_backups() {
    use kluis_desktop::EncryptionInput;
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    let none = EncryptionInput::Passphrase { passphrase: None };
    let refused = app.accounts.set_encryption("demo", none).await.unwrap_err();
    assert_eq!(refused.code(), "config");
    let bad = EncryptionInput::Recipient {
        recipient: "age1nope".into(),
    };
    assert_eq!(
        app.accounts
            .set_encryption("demo", bad)
            .await
            .unwrap_err()
            .code(),
        "config"
    );

    let phrase = "de demo klant versleutelt alles";
    let input = EncryptionInput::Passphrase {
        passphrase: Some(phrase.into()),
    };
    let view = app.accounts.set_encryption("demo", input).await.unwrap();
    assert_eq!(
        view.encryption,
        Some(kluis_core::encryption::EncryptionSetting::Passphrase)
    );
    let path = saved_demo_backup(&app).await;
    assert!(path.to_string_lossy().ends_with(".age"), "{path:?}");
    let entry = app.backups.history(Some("demo")).unwrap().remove(0);
    let key = kluis_core::encryption::DecryptKey::Passphrase(kluis_core::Secret::new(phrase));
    let file = std::fs::File::open(&path).unwrap();
    let (_, sha256) = kluis_core::encryption::decrypt(file, &key, std::io::sink()).unwrap();
    assert_eq!(
        Some(hex::encode(sha256)),
        entry.sha256,
        "the plain stream as recorded"
    );
    let history = kluis_core::History::open(&dir.path().join("history.sqlite3")).unwrap();
    let tested = (history.restore_test_of(&entry.id).unwrap())
        .expect("the save restore-tested the encrypted backup with the klant's passphrase");
    assert!(tested.passed && tested.entries == 1, "{tested:?}");

    let off = app
        .accounts
        .set_encryption("demo", EncryptionInput::None)
        .await
        .unwrap();
    assert_eq!(off.encryption, None);
    assert!(!saved_demo_backup(&app)
        .await
        .to_string_lossy()
        .ends_with(".age"));
}

/// "Export report" writes the period's backups where the user chose in the save dialog, whole
/// and readable by the user only: the CSV parses back to the saved backup (its place and the
/// SHA-256 of the file on disk), the printable page lists it too. A cancelled dialog writes
/// nothing; a day that is not one is refused with what to do.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_is_exported_where_the_user_chooses() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let reports = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    let saved = saved_demo_backup(&app).await;
    let today = jiff::Zoned::now().date();
    let (from, to) = (today.yesterday().unwrap(), today.tomorrow().unwrap());
    let request = |format| ReportRequest {
        from: from.to_string(),
        to: to.to_string(),
        format,
        profile: None,
    };

    let cancelled = app
        .keeping
        .export_report(request(ReportFormat::Csv))
        .await
        .unwrap();
    assert!(cancelled.is_none(), "no place chosen: no report");
    assert_eq!(std::fs::read_dir(reports.path()).unwrap().count(), 0);

    let csv_path = reports.path().join("audit.csv");
    let user = Chooses::new(&csv_path);
    app.set_dialogs(user.clone());
    let export = app
        .keeping
        .export_report(request(ReportFormat::Csv))
        .await
        .unwrap();
    let export = export.expect("a place was chosen");
    assert_eq!(export.backups, 1);
    assert_eq!(export.path, csv_path.display().to_string());
    assert_eq!(
        user.asked.lock().unwrap().as_slice(),
        [format!("kluis-report-{from}-{to}.csv")],
        "the dialog suggests a name that says what and which period"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&csv_path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the report names klanten: owner-only");
    }
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1, "one backup in the period");
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        std::fs::read(&saved).unwrap(),
    ));
    assert_eq!(&rows[0][column("status")], "saved");
    assert_eq!(&rows[0][column("path")], saved.to_str().unwrap());
    assert_eq!(&rows[0][column("sha256")], digest);

    let page = reports.path().join("audit.html");
    app.set_dialogs(Chooses::new(&page));
    let export = app
        .keeping
        .export_report(request(ReportFormat::Printable))
        .await;
    assert_eq!(export.unwrap().unwrap().backups, 1);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "a page a browser prints"
    );
    assert!(
        html.contains(&digest),
        "the page lists the backup's SHA-256"
    );

    let bad = ReportRequest {
        from: "30-11-2026".into(),
        ..request(ReportFormat::Csv)
    };
    let refused = app.keeping.export_report(bad).await.unwrap_err();
    assert_eq!(refused.code().as_str(), "config");
    assert!(refused.to_string().contains("YYYY-MM-DD"), "{refused}");
}
