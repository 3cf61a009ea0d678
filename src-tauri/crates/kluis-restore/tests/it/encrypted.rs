//! An encrypted backup (age, as Kluis saves one with a passphrase): listed, restored and
//! restore-tested through a decrypting reader — the plain archive never written to disk;
//! without its key, or with a wrong one, said as such.

use std::io::Write;

use kluis_core::encryption::{DecryptKey, Encryption};
use kluis_core::{Code, Secret};
use kluis_restore::{restore, restore_test, Backup, RestoreOptions};

use crate::crafted::{archive, Made};

const PASSPHRASE: &str = "een lange geheime zin";

/// `dir/backup.zip.age`: an archive of a folder and two files, encrypted to the passphrase.
fn encrypted(dir: &std::path::Path) -> std::path::PathBuf {
    let plain = archive(
        dir,
        "plain.zip",
        &[
            Made::Folder("2025/"),
            Made::File("2025/grootboek.csv", &[b'g'; 300_000]),
            Made::File("README.txt", b"read me"),
        ],
    );
    let path = dir.join("backup.zip.age");
    let encryption = Encryption::passphrase(&Secret::new(PASSPHRASE.to_string())).unwrap();
    let mut sealed = encryption
        .seal(std::fs::File::create(&path).unwrap())
        .unwrap();
    sealed.write_all(&std::fs::read(&plain).unwrap()).unwrap();
    sealed.finish().unwrap();
    std::fs::remove_file(plain).unwrap();
    path
}

fn key(passphrase: &str) -> DecryptKey {
    DecryptKey::Passphrase(Secret::new(passphrase.to_string()))
}

/// Listed and restored with its passphrase, byte for byte; its restore test passes; no plain
/// archive appears beside it.
#[test]
fn an_encrypted_backup_is_listed_restored_and_tested() {
    let (dir, out, scratch) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let path = encrypted(dir.path());
    let mut backup = Backup::open(&path, Some(&key(PASSPHRASE))).unwrap();
    let entries = backup.entries();
    assert_eq!(entries.len(), 3);
    assert_eq!(
        (entries[1].path.as_deref(), entries[1].size),
        (Some("2025/grootboek.csv"), 300_000)
    );
    let restored = restore(
        &mut backup,
        out.path(),
        &RestoreOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(restored.files, 2);
    assert_eq!(
        std::fs::read(out.path().join("2025/grootboek.csv")).unwrap(),
        vec![b'g'; 300_000]
    );
    let tested = restore_test(&path, Some(&key(PASSPHRASE)), Some(scratch.path())).unwrap();
    assert!(tested.passed() && tested.entries == 3, "{tested:?}");
    let beside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(beside, ["backup.zip.age"], "no plain archive written");
}

/// Without a key it is said to be encrypted; a wrong passphrase does not open it; a damaged
/// one is said, not a panic.
#[test]
fn without_the_right_key_it_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = encrypted(dir.path());
    let none = Backup::open(&path, None).err().expect("refused");
    assert_eq!(none.code(), Code::Config, "{none}");
    assert!(none.to_string().contains("is encrypted"), "{none}");
    let wrong = Backup::open(&path, Some(&key("not the passphrase at all")))
        .err()
        .expect("refused");
    assert!(wrong.to_string().contains("does not open"), "{wrong}");

    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    match restore_test(&path, Some(&key(PASSPHRASE)), Some(scratch.path())) {
        Ok(tested) => assert!(
            !tested.passed(),
            "a damaged backup does not pass: {tested:?}"
        ),
        Err(e) => assert_eq!(e.code(), Code::BackupsDamaged, "{e}"),
    }
}
