//! `kluis contents`, `kluis restore` and `kluis restore-test` on archives the test writes: the
//! entries listed (a hostile one with its reason), restored into a folder without replacing
//! anything unasked, and restore tests passing (exit 0) and failing (exit 7).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common::*;

/// An archive at `dir/backup.zip`: a folder, two files, and an entry that climbs out.
fn backup(dir: &Path) -> PathBuf {
    archive(dir, "backup.zip", true)
}

/// An archive at `dir/name`: a folder, two files, and (`hostile`) an entry that climbs out.
fn archive(dir: &Path, name: &str, hostile: bool) -> PathBuf {
    let path = dir.join(name);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.add_directory("2025/", options).unwrap();
    let mut entries = vec![
        ("2025/grootboek.csv", &b"ledger"[..]),
        ("README.txt", b"read me"),
    ];
    if hostile {
        entries.push(("../evil.txt", b"evil"));
    }
    for (name, bytes) in entries {
        zip.start_file(name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    path
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `contents --json` lists every entry, the hostile one with why it is not restored.
#[tokio::test]
async fn contents_lists_every_entry() {
    let e = env(|_| {}).await;
    let file = backup(e.dir.path());
    let listed = e
        .demo(&["contents", "--json", file.to_str().unwrap()])
        .await;
    assert_succeeded(&listed);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1]["path"], "2025/grootboek.csv");
    assert_eq!(lines[1]["size"], 6);
    assert_eq!(lines[3]["name"], "../evil.txt");
    assert!(
        lines[3]["refused"].as_str().unwrap().contains("climbs out"),
        "{}",
        lines[3]
    );
}

/// `restore --to` writes the files (the hostile entry said, not written, and so exit 8: not a
/// whole restore); again into the same folder it refuses (exit 2) and writes nothing;
/// `--overwrite` replaces; `--only` restores one (exit 0: all it was asked for).
#[tokio::test]
async fn restore_writes_the_files_and_replaces_nothing_unasked() {
    let e = env(|_| {}).await;
    let file = backup(e.dir.path());
    let to = e.dir.path().join("restored");
    std::fs::create_dir(&to).unwrap();
    let args = [
        "restore",
        file.to_str().unwrap(),
        "--to",
        to.to_str().unwrap(),
    ];
    let restored = e.demo(&args).await;
    assert_eq!(restored.status.code(), Some(8), "{}", stderr(&restored));
    assert!(
        stderr(&restored).contains("not restored: ../evil.txt"),
        "{}",
        stderr(&restored)
    );
    assert_eq!(
        std::fs::read(to.join("2025/grootboek.csv")).unwrap(),
        b"ledger"
    );
    assert!(
        !e.dir.path().join("evil.txt").exists(),
        "nothing outside the folder"
    );

    std::fs::write(to.join("README.txt"), b"mine").unwrap();
    let again = e.demo(&args).await;
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--overwrite"), "{}", stderr(&again));
    assert_eq!(
        std::fs::read(to.join("README.txt")).unwrap(),
        b"mine",
        "nothing written"
    );
    let mut replacing = args.to_vec();
    replacing.push("--overwrite");
    assert_eq!(e.demo(&replacing).await.status.code(), Some(8));
    assert_eq!(std::fs::read(to.join("README.txt")).unwrap(), b"read me");

    let one = e.dir.path().join("one");
    std::fs::create_dir(&one).unwrap();
    let only = [
        "restore",
        file.to_str().unwrap(),
        "--to",
        one.to_str().unwrap(),
        "--only",
        "README.txt",
    ];
    assert_succeeded(&e.demo(&only).await);
    let names: Vec<_> = std::fs::read_dir(&one)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["README.txt"]);
}

/// `restore-test --json` of a good archive passes (exit 0; the hostile entry aside, every
/// entry restores); one whose entry was changed fails with exit 7 naming it; a file that is
/// not an archive is said as damaged (exit 7).
#[tokio::test]
async fn a_restore_test_passes_or_fails_with_exit_7() {
    let e = env(|_| {}).await;
    let dir = e.dir.path();
    let path = dir.join("good.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    // Stored: its bytes can be changed in place.
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("a.csv", options).unwrap();
    zip.write_all(b"alpha").unwrap();
    zip.finish().unwrap();
    let passed = e
        .demo(&["restore-test", "--json", path.to_str().unwrap()])
        .await;
    assert_succeeded(&passed);
    let line: serde_json::Value = serde_json::from_slice(&passed.stdout).unwrap();
    assert_eq!(
        (
            line["passed"].as_bool(),
            line["entries"].as_u64(),
            line["bytes"].as_u64()
        ),
        (Some(true), Some(1), Some(5))
    );

    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(5).position(|w| w == b"alpha").unwrap();
    bytes[at] = b'A';
    std::fs::write(&path, &bytes).unwrap();
    let failed = e.demo(&["restore-test", path.to_str().unwrap()]).await;
    assert_eq!(failed.status.code(), Some(7), "{}", stderr(&failed));
    assert!(
        stderr(&failed).contains("does not restore: a.csv"),
        "{}",
        stderr(&failed)
    );

    let not_zip = dir.join("random.bin");
    std::fs::write(&not_zip, b"not an archive at all").unwrap();
    let said = e.demo(&["restore-test", not_zip.to_str().unwrap()]).await;
    assert_eq!(said.status.code(), Some(7), "{}", stderr(&said));
    assert!(
        stderr(&said).contains("cannot be read as a zip archive"),
        "{}",
        stderr(&said)
    );
}

/// An encrypted backup: `contents` without what opens it says so (exit 2); with its
/// passphrase in KLUIS_ENCRYPTION_PASSPHRASE it is listed and its restore test passes — the
/// passphrase never said.
#[tokio::test]
async fn an_encrypted_backup_is_listed_and_tested_with_its_passphrase() {
    const PASSPHRASE: &str = "een lange geheime zin";
    let e = env(|_| {}).await;
    let plain = archive(e.dir.path(), "plain.zip", false);
    let path = e.dir.path().join("backup.zip.age");
    let secret = kluis_core::Secret::new(PASSPHRASE.to_string());
    let encryption = kluis_core::encryption::Encryption::passphrase(&secret).unwrap();
    let mut sealed = encryption
        .seal(std::fs::File::create(&path).unwrap())
        .unwrap();
    sealed.write_all(&std::fs::read(&plain).unwrap()).unwrap();
    sealed.finish().unwrap();

    let file = path.to_str().unwrap();
    let refused = e.demo(&["contents", file]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("KLUIS_ENCRYPTION_PASSPHRASE"),
        "{}",
        stderr(&refused)
    );
    let with = [("KLUIS_ENCRYPTION_PASSPHRASE", PASSPHRASE)];
    let listed = e.demo_with(&["contents", file], &with).await;
    assert_succeeded(&listed);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("2025/grootboek.csv"));
    let tested = e.demo_with(&["restore-test", file], &with).await;
    assert_succeeded(&tested);
    assert_no_secrets(&tested, &[PASSPHRASE]);
}

/// `restore-test --profile NAME` tests the klant's newest kept backup and records the result
/// in the history (passed; then, its entry changed, failed with the entry named — exit 7).
#[tokio::test]
async fn a_klants_newest_backup_is_tested_and_recorded() {
    let e = env(|_| {}).await;
    let path = archive(e.dir.path(), "bakker.zip", false);
    let bytes = std::fs::read(&path).unwrap();
    let history = e.history();
    let klant = kluis_core::KlantKey::older_label("Bakker");
    let id = uuid::Uuid::new_v4();
    history.start(id, &klant, "relay").unwrap();
    let saved = kluis_core::download::Saved {
        path: path.clone(),
        bytes: bytes.len() as u64,
        sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)),
        encrypted: None,
    };
    history.saved(id, &saved).unwrap();

    let passed = e
        .demo(&["restore-test", "--profile", "Bakker", "--json"])
        .await;
    assert_succeeded(&passed);
    let line: serde_json::Value = serde_json::from_slice(&passed.stdout).unwrap();
    assert_eq!(
        (line["passed"].as_bool(), line["recorded"].as_bool()),
        (Some(true), Some(true))
    );
    let last = history
        .last_restore_test(&klant)
        .unwrap()
        .expect("recorded");
    assert!(
        last.passed && last.entries == 3 && last.job == id.to_string(),
        "{last:?}"
    );

    // The CRC-32 of the first file (in its local and central headers) made another.
    let mut changed = bytes.clone();
    let find = |magic: &[u8], from: usize| {
        from + changed[from..].windows(4).position(|w| w == magic).unwrap()
    };
    let (local, central) = (find(b"PK\x03\x04", 0), find(b"PK\x01\x02", 0));
    let (local, central) = (
        find(b"PK\x03\x04", local + 4),
        find(b"PK\x01\x02", central + 4),
    );
    changed[local + 14] ^= 0xFF;
    changed[central + 16] ^= 0xFF;
    std::fs::write(&path, &changed).unwrap();
    let failed = e.demo(&["restore-test", "--profile", "Bakker"]).await;
    assert_eq!(failed.status.code(), Some(7), "{}", stderr(&failed));
    let last = history
        .last_restore_test(&klant)
        .unwrap()
        .expect("recorded");
    assert!(!last.passed && last.detail.is_some(), "{last:?}");
}

/// The public zip-slip test archives, as made (`good.txt` and an entry climbing out to
/// `/tmp/evil.txt`, or with Windows' backslashes to `Temp\evil.txt`): the climbing entry is
/// refused and named, `good.txt` restored — and the exit code is 8, not 0 (a script took such a
/// partial restore for a whole one). Into a folder that is not there yet but whose parent is:
/// made, owner-only, as `unzip -d` does; a folder whose parent is missing too is refused
/// (exit 2: a mistyped path) and nothing is made.
#[tokio::test]
async fn a_zip_slip_archive_restores_in_part_with_exit_8() {
    let e = env(|_| {}).await;
    let climb = "../".repeat(40);
    let climb_win = "..\\".repeat(40);
    for (name, evil) in [
        ("zip-slip.zip", format!("{climb}tmp/evil.txt")),
        ("zip-slip-win.zip", format!("{climb_win}Temp\\evil.txt")),
    ] {
        let path = e.dir.path().join(name);
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("good.txt", options).unwrap();
        zip.write_all(b"this is a good one").unwrap();
        zip.start_file(evil.as_str(), options).unwrap();
        zip.write_all(b"this is an evil one").unwrap();
        zip.finish().unwrap();
        let to = e.dir.path().join(format!("new-{name}"));
        let args = [
            "restore",
            path.to_str().unwrap(),
            "--to",
            to.to_str().unwrap(),
        ];
        let restored = e.demo(&args).await;
        let said = stderr(&restored);
        assert_eq!(restored.status.code(), Some(8), "{name}: {said}");
        assert!(
            said.contains("not restored")
                && said.contains("evil.txt")
                && said.contains("1 left out"),
            "{said}"
        );
        assert_eq!(
            std::fs::read(to.join("good.txt")).unwrap(),
            b"this is a good one"
        );
        assert_eq!(files_in(&to), 1, "{name}: only good.txt");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&to).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "made owner-only");
        }
    }
    let file = backup(e.dir.path());
    let mistyped = e.dir.path().join("nergens").join("terug");
    let args = [
        "restore",
        file.to_str().unwrap(),
        "--to",
        mistyped.to_str().unwrap(),
    ];
    let refused = e.demo(&args).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(!e.dir.path().join("nergens").exists(), "nothing made");
}
