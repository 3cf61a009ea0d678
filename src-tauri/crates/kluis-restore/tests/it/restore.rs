//! Restoring into a folder: everything or only a path, nothing replaced unless asked, the
//! archive's dates kept; restore tests passing and failing, their folder always removed.

use kluis_core::Code;
use kluis_restore::{restore, restore_test, Backup, RestoreOptions};

use crate::crafted::{archive, central_headers, local_headers, Made};

fn sample(dir: &std::path::Path) -> std::path::PathBuf {
    archive(
        dir,
        "backup.zip",
        &[
            Made::Folder("2024/"),
            Made::File("2024/grootboek.csv", b"2024 ledger"),
            Made::File("2025/grootboek.csv", b"2025 ledger"),
            Made::File("2025/memoriaal/jan.csv", b"january"),
            Made::File("README.txt", b"read me"),
        ],
    )
}

/// Everything is restored byte for byte with the archive's dates; the progress ends at the
/// total; a second restore into the same folder writes nothing (files are there) unless
/// replacing is asked for.
#[test]
fn a_backup_is_restored_and_nothing_is_replaced_unasked() {
    let (dir, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut backup = Backup::open(&sample(dir.path()), None).unwrap();
    let mut last = (0, 0);
    let restored = restore(
        &mut backup,
        out.path(),
        &RestoreOptions::default(),
        &mut |done, total| last = (done, total),
    )
    .unwrap();
    assert_eq!((restored.files, restored.folders), (4, 1));
    assert_eq!(last, (36, 36), "the progress reaches the total");
    let ledger = out.path().join("2025/grootboek.csv");
    assert_eq!(std::fs::read(&ledger).unwrap(), b"2025 ledger");
    assert_eq!(
        std::fs::read(out.path().join("2025/memoriaal/jan.csv")).unwrap(),
        b"january"
    );
    let modified = std::fs::metadata(&ledger).unwrap().modified().unwrap();
    let year_2025 = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_735_689_600);
    assert!(
        modified > year_2025 && modified < year_2025 + std::time::Duration::from_secs(100 * 86400),
        "dated as in the archive"
    );

    std::fs::write(&ledger, b"changed by the user").unwrap();
    let refused = restore(
        &mut backup,
        out.path(),
        &RestoreOptions::default(),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert_eq!(refused.code(), Code::Config, "{refused}");
    assert!(
        refused.to_string().contains("4 of the files")
            && refused.to_string().contains("--overwrite"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read(&ledger).unwrap(),
        b"changed by the user",
        "nothing written"
    );
    let replacing = RestoreOptions {
        overwrite: true,
        ..RestoreOptions::default()
    };
    restore(&mut backup, out.path(), &replacing, &mut |_, _| {}).unwrap();
    assert_eq!(std::fs::read(&ledger).unwrap(), b"2025 ledger");
}

/// `--only 2025` restores that folder's entries and nothing else; a path the backup does not
/// hold is said.
#[test]
fn only_the_paths_asked_for_are_restored() {
    let (dir, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut backup = Backup::open(&sample(dir.path()), None).unwrap();
    let only = RestoreOptions {
        only: vec!["2025/".into()],
        ..RestoreOptions::default()
    };
    let restored = restore(&mut backup, out.path(), &only, &mut |_, _| {}).unwrap();
    assert_eq!(restored.files, 2);
    assert!(!out.path().join("2024").exists() && !out.path().join("README.txt").exists());
    let none = RestoreOptions {
        only: vec!["2023".into()],
        ..RestoreOptions::default()
    };
    let said = restore(&mut backup, out.path(), &none, &mut |_, _| {}).unwrap_err();
    assert!(said.to_string().contains("nothing at 2023"), "{said}");
}

/// A folder already holding a link where the archive has a folder is not restored through.
#[cfg(unix)]
#[test]
fn nothing_is_restored_through_a_link_in_the_folder() {
    let (dir, out, elsewhere) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::os::unix::fs::symlink(elsewhere.path(), out.path().join("2025")).unwrap();
    let mut backup = Backup::open(&sample(dir.path()), None).unwrap();
    let only = RestoreOptions {
        only: vec!["2025".into()],
        ..RestoreOptions::default()
    };
    let refused = restore(&mut backup, out.path(), &only, &mut |_, _| {}).unwrap_err();
    assert!(
        refused.to_string().contains("a file or a link"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_dir(elsewhere.path()).unwrap().count(),
        0,
        "nothing written through the link"
    );
}

/// A restore test of a good backup passes, counting its entries and bytes; one with a changed
/// entry fails naming it; either way its temporary folder is gone afterwards.
#[test]
fn a_restore_test_checks_every_entry_and_leaves_nothing() {
    let (dir, scratch) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let path = sample(dir.path());
    let tested = restore_test(&path, None, Some(scratch.path())).unwrap();
    assert!(tested.passed(), "{tested:?}");
    assert_eq!((tested.entries, tested.bytes), (5, 36));
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        0,
        "the folder is removed"
    );

    let mut bytes = std::fs::read(&path).unwrap();
    let (central, local) = (central_headers(&bytes)[2], local_headers(&bytes)[2]);
    bytes[central + 16] ^= 0xFF;
    bytes[local + 14] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    let failed = restore_test(&path, None, Some(scratch.path())).unwrap();
    assert!(!failed.passed());
    assert_eq!(failed.failed.len(), 1, "{failed:?}");
    assert_eq!(failed.failed[0].0, "2025/grootboek.csv");
    assert_eq!(failed.entries, 4);
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        0,
        "the folder is removed"
    );
}
