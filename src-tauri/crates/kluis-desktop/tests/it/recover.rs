//! *Restore from a copy…* in the app: a new computer with only the copy target and the
//! recovery kit finds the lost computer's backups, restores one, and carries on for it.

use std::sync::Arc;

use kluis_desktop::{AppError, FoundEncryption, FoundProof};

/// The code the window branches on.
fn code(error: &AppError) -> String {
    serde_json::to_value(error).unwrap()["code"]
        .as_str()
        .unwrap()
        .to_string()
}

use crate::common;

/// Computer A backs up two klanten — one of them encrypted with a passphrase — to a save
/// folder, copies each to a folder target and makes the recovery kit. Computer B — a fresh
/// app, the same target added, nothing else of A — with the kit's key (read by Rust from the
/// kit's page, and pasted): finds every backup A copied, named by its catalog; restores the
/// encrypted one (opened with the passphrase the kit's catalog sealed: B never had it) into
/// the folder its dialog picked, with the same files as A's saved backup; a restore cancelled
/// leaves nothing behind; and *Carry on* makes A's klanten B's, with their copies in B's
/// history and A's kit kept by B (the public half only).
#[tokio::test(flavor = "multi_thread")]
async fn a_new_computer_finds_restores_and_carries_on_from_the_copy_alone() {
    use kluis_sim::config::{klant_password, klant_username, Account};
    let mut config = kluis_sim::SimConfig::default();
    config.accounts.extend((1..=2).map(Account::klant));
    let sim = kluis_sim::Sim::start(config).await.unwrap();
    let (dir_a, saved_a, nas) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let a = (common::builder(&dir_a, Some(saved_a.path().to_path_buf())))
        .webhook_site(sim.webhook_site_url())
        .open()
        .unwrap();
    let ca = dir_a.path().join("service-ca.pem");
    std::fs::write(&ca, sim.ca_pem()).unwrap();
    let phrase = "het kantoor versleutelt alles";
    let mut klanten = Vec::new();
    for (n, name) in [(1, "Bakker"), (2, "Visser")] {
        let input = kluis_desktop::ProfileInput {
            name: name.into(),
            username: klant_username(n),
            password: Some(klant_password(n)),
            ..common::office(&sim, None)
        };
        let profile = a.accounts.save_profile(input).await.unwrap();
        a.set_dialogs(common::Chooses::new(&ca));
        a.accounts.choose_profile_ca(&profile.id).await.unwrap();
        klanten.push(profile.id);
    }
    let encrypt = kluis_desktop::EncryptionInput::Passphrase {
        passphrase: Some(phrase.into()),
    };
    a.accounts
        .set_encryption(&klanten[0], encrypt)
        .await
        .unwrap();
    a.set_dialogs(common::Chooses::new(nas.path()));
    a.settings.add_copy_folder("NAS").await.unwrap();
    let page = dir_a.path().join("kit.txt");
    a.set_dialogs(common::Chooses::new(&page));
    let kit = a
        .settings
        .make_recovery_kit(false)
        .await
        .unwrap()
        .expect("made");
    for id in &klanten {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        a.backups
            .start_backup(id, Arc::new(move |e| drop(tx.send(e))))
            .await
            .unwrap();
        loop {
            match rx.recv().await.expect("the backup ends") {
                kluis_desktop::AppJobEvent::Saved { .. } => break,
                failed @ kluis_desktop::AppJobEvent::Failed { .. } => panic!("{failed:?}"),
                _ => {}
            }
        }
    }
    let copied: Vec<_> = (a.backups.history(None).unwrap().into_iter())
        .filter(|e| e.path.is_some())
        .collect();
    let saved = copied.len();
    assert_eq!(saved, 2, "both saved");
    a.shutdown().await;
    drop(a);

    let (dir_b, restored) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let b = Arc::new(common::app(&dir_b, None));
    b.set_dialogs(common::Chooses::new(nas.path()));
    b.settings.add_copy_folder("NAS").await.unwrap();
    let target = b.settings.current().copy_targets[0].id.clone();

    let not_yet = b.recovery.restore_found("anything", Arc::new(|_| {})).await;
    assert!(
        not_yet.is_err(),
        "nothing to restore before the backups are looked for"
    );
    let wrong = b
        .recovery
        .find_copies(&target, Some("not a key".into()))
        .await;
    assert!(
        matches!(&wrong, Err(e) if code(e) == "config"),
        "a key that is not one is said: {wrong:?}"
    );

    b.set_dialogs(common::Chooses::new(&page));
    let found =
        (b.recovery.find_copies(&target, None).await.unwrap()).expect("the kit's page read");
    assert_eq!(found.fingerprint, kit.fingerprint, "the kit's key");
    assert_eq!(
        found.backups.len(),
        saved,
        "every copy found: {:?}",
        found.backups
    );
    assert!(
        (found.backups.iter()).all(|f| f.proof == FoundProof::Catalog && f.on_target),
        "each named by A's catalog, and on the target"
    );
    assert_eq!(found.computers.len(), 1, "A's catalog");
    let line = (std::fs::read_to_string(&page).unwrap().lines())
        .map(str::trim)
        .find(|l| l.starts_with("AGE-SECRET-KEY-1"))
        .unwrap()
        .to_string();
    let pasted = b.recovery.find_copies(&target, Some(line)).await.unwrap();
    assert_eq!(
        pasted.expect("pasted").backups.len(),
        saved,
        "the key pasted"
    );

    let encrypted = (found.backups.iter())
        .find(|f| f.encrypted == FoundEncryption::Passphrase)
        .expect("the encrypted backup, its passphrase sealed to the kit");
    let to = restored.path().join("Bakker");
    b.set_dialogs(common::Chooses::new(&to));
    let stopper = b.clone();
    let cancelled = (b.recovery)
        .restore_found(
            &encrypted.location,
            Arc::new(move |_| stopper.recovery.cancel_restore()),
        )
        .await;
    assert!(
        matches!(&cancelled, Err(e) if code(e) == "cancelled"),
        "cancelled at its first progress: {cancelled:?}"
    );
    assert_eq!(
        std::fs::read_dir(restored.path()).unwrap().count(),
        0,
        "a cancelled restore leaves nothing: no folder, no fetched file"
    );

    let progress = Arc::new(std::sync::Mutex::new(Vec::new()));
    let heard = progress.clone();
    let summary = (b.recovery)
        .restore_found(
            &encrypted.location,
            Arc::new(move |p| heard.lock().unwrap().push(p)),
        )
        .await
        .unwrap()
        .expect("restored");
    assert!(
        summary.files > 0 && summary.not_restored.is_empty(),
        "{summary:?}"
    );
    assert!(!progress.lock().unwrap().is_empty(), "its progress told");
    let original = (copied.iter())
        .find(|e| {
            e.path
                .as_deref()
                .is_some_and(|p| p.ends_with(&encrypted.name))
        })
        .expect("A saved it");
    let passphrase =
        kluis_core::encryption::DecryptKey::Passphrase(kluis_core::Secret::new(phrase));
    let saved_at = std::path::Path::new(original.path.as_ref().unwrap());
    let mut archive = kluis_restore::Backup::open(saved_at, Some(&passphrase)).unwrap();
    for entry in archive.entries() {
        if let (kluis_restore::archive::EntryKind::File, Some(path)) = (entry.kind, &entry.path) {
            let there = std::fs::metadata(to.join(path)).expect("restored");
            assert_eq!(there.len(), entry.size, "{path} as A saved it");
        }
    }

    let lost = found.computers[0].id.clone();
    let carried = b.recovery.carry_on(lost.clone(), false).await.unwrap();
    assert_eq!(
        carried.klanten.len(),
        saved,
        "each klant taken over: {carried:?}"
    );
    assert_eq!(
        carried.added as usize, saved,
        "each copy now in B's history"
    );
    assert!(carried.not_written.is_empty(), "{:?}", carried.not_written);
    assert_eq!(b.accounts.list().len(), saved, "A's klanten are B's");
    let kept = b.settings.current().recovery.expect("B keeps the kit");
    assert_eq!(kept.fingerprint, kit.fingerprint);
    let settings_file = std::fs::read_to_string(dir_b.path().join("profiles.json")).unwrap();
    assert!(
        !settings_file.contains("AGE-SECRET-KEY"),
        "the private key is kept nowhere on B"
    );
    let again = b.recovery.carry_on(lost.clone(), false).await.unwrap();
    assert_eq!(again.added, 0, "run again, nothing is added twice");
    b.recovery.close();
    assert!(
        matches!(
            b.recovery.carry_on(lost.clone(), false).await,
            Err(AppError::NotFound(_))
        ),
        "closed: the key is forgotten"
    );
}

/// Settings → *Use the office's kit…*: a second computer of the office makes no kit of its
/// own but takes the one made on the first — its key read by Rust from the kit's page picked
/// in the dialog — keeps only its public half, and writes its own catalog under it at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_second_computer_uses_the_offices_kit() {
    let (dir_a, dir_b, nas) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let a = common::app(&dir_a, None);
    a.set_dialogs(common::Chooses::new(nas.path()));
    a.settings.add_copy_folder("NAS").await.unwrap();
    let page = dir_a.path().join("kit.txt");
    a.set_dialogs(common::Chooses::new(&page));
    let kit = a
        .settings
        .make_recovery_kit(false)
        .await
        .unwrap()
        .expect("made");

    let b = common::app(&dir_b, None);
    b.set_dialogs(common::Chooses::new(nas.path()));
    b.settings.add_copy_folder("NAS").await.unwrap();
    b.set_dialogs(Arc::new(kluis_desktop::NoDialogs));
    assert!(
        b.settings.join_recovery_kit().await.unwrap().is_none(),
        "cancelled: nothing"
    );
    assert!(b.settings.current().recovery.is_none());
    b.set_dialogs(common::Chooses::new(&page));
    let joined = b
        .settings
        .join_recovery_kit()
        .await
        .unwrap()
        .expect("joined");
    assert_eq!(joined.fingerprint, kit.fingerprint, "the office's kit");
    assert!(joined.not_written.is_empty(), "{:?}", joined.not_written);
    let kept = b.settings.current().recovery.expect("kept");
    assert_ne!(
        kept.pc_id,
        a.settings.current().recovery.unwrap().pc_id,
        "as itself"
    );
    let catalogs = nas.path().join("kluis-recovery/catalogs").join(&kept.pc_id);
    assert_eq!(
        std::fs::read_dir(catalogs).unwrap().count(),
        1,
        "its catalog written at once"
    );
    let settings_file = std::fs::read_to_string(dir_b.path().join("profiles.json")).unwrap();
    assert!(
        !settings_file.contains("AGE-SECRET-KEY"),
        "the private key is not kept"
    );
}
