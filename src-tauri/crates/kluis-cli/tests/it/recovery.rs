//! Issue 42: the office's recovery kit and the catalogs it opens, from the command line: the
//! kit printed (its private key, in age's text and 24 words) and never kept on this computer,
//! and after each backup's copy a catalog and the copy's record on the copy target, sealed to
//! the kit's key — which the kit alone reads back to every backup of every klant there.

use std::path::Path;

use crate::common::*;

/// The objects under `root` (a folder copy target), with their paths relative to it.
fn files_under(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap().flatten() {
            match entry.file_type().unwrap().is_dir() {
                true => folders.push(entry.path()),
                false => found.push(
                    entry
                        .path()
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                ),
            }
        }
    }
    found.sort();
    found
}

/// `recovery-kit --key-file` prints the kit (the key in both forms, the office key's
/// fingerprint, the copy target and the steps) and writes the key owner-only; the settings keep
/// only the public half. Each backup then leaves, beside its copy on the folder target, a
/// record, and under `kluis-recovery/` the office key and a new numbered catalog — all sealed:
/// no klant name in them — that the kit's key reads back to the klant's backups, each proven
/// by its catalog and its own record.
#[tokio::test(flavor = "multi_thread")]
async fn the_kit_opens_the_catalogs_each_backup_leaves_on_its_target() {
    let e = env(|c| c.payload_size = 40_000).await;
    let nas = e.dir.path().join("nas");
    std::fs::create_dir(&nas).unwrap();
    assert_succeeded(
        &e.demo(&[
            "copy-target",
            "add",
            "NAS",
            "--folder",
            nas.to_str().unwrap(),
        ])
        .await,
    );
    let key_file = e.dir.path().join("kluis-recovery.key");
    let kit = e
        .demo(&[
            "recovery-kit",
            "--key-file",
            key_file.to_str().unwrap(),
            "--pc-name",
            "RECEPTIE",
        ])
        .await;
    assert_succeeded(&kit);
    let page = String::from_utf8_lossy(&kit.stdout).into_owned();
    let key =
        kluis_recovery::RecoveryKey::parse(&std::fs::read_to_string(&key_file).unwrap()).unwrap();
    let office = key.office_key();
    assert!(
        page.contains(key.to_text().expose()),
        "the key in age's text: {page}"
    );
    assert!(
        page.contains(&office.fingerprint()) && page.contains("NAS") && page.contains("24."),
        "{page}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the key file is owner-only");
    }
    let settings = std::fs::read_to_string(e.dir.path().join("profiles.json")).unwrap();
    assert!(
        settings.contains(&office.to_text()),
        "the public half is kept"
    );
    assert!(
        !settings.contains("AGE-SECRET-KEY"),
        "the private half is not: {settings}"
    );

    for _ in 0..2 {
        assert_succeeded(&e.backup(&["--profile", "Bakker"]).await);
    }
    let files = files_under(&nas);
    let catalogs: Vec<&String> = files.iter().filter(|f| f.contains("/catalogs/")).collect();
    assert_eq!(
        catalogs.len(),
        2,
        "a new catalog after each backup's copy: {files:?}"
    );
    assert!(catalogs[1].ends_with("000000000002.age"), "{catalogs:?}");
    assert!(files.contains(&"kluis-recovery/office-key.txt".to_string()));
    let records = files
        .iter()
        .filter(|f| f.ends_with(".kluis-record"))
        .count();
    assert_eq!(records, 2, "one record beside each copy: {files:?}");
    let read = |f: &String| std::fs::read(nas.join(f)).unwrap();
    for file in files
        .iter()
        .filter(|f| f.ends_with(".age") || f.ends_with(".kluis-record"))
    {
        assert!(
            !String::from_utf8_lossy(&read(file)).contains("Bakker"),
            "{file} is sealed"
        );
    }
    let stored = |f: &&String| kluis_recovery::found::Stored {
        location: (*f).clone(),
        bytes: read(f),
    };
    let listing = kluis_recovery::gather(
        files
            .iter()
            .filter(|f| f.contains("/catalogs/"))
            .map(|f| stored(&f))
            .collect(),
        files
            .iter()
            .filter(|f| f.ends_with(".kluis-record"))
            .map(|f| stored(&f))
            .collect(),
        files
            .iter()
            .map(|f| kluis_recovery::found::Present {
                location: f.clone(),
                bytes: read(f).len() as u64,
            })
            .collect(),
        &key,
    );
    assert!(listing.problems.is_empty(), "{:?}", listing.problems);
    assert_eq!(listing.backups.len(), 2, "{listing:?}");
    for backup in &listing.backups {
        assert_eq!(backup.proof, kluis_recovery::Proof::CatalogAndRecord);
        assert_eq!(backup.pc.as_ref().unwrap().name, "RECEPTIE");
        let copy = std::fs::read(nas.join(&backup.copy.location)).unwrap();
        use sha2::Digest;
        assert_eq!(
            hex::encode(sha2::Sha256::digest(&copy)),
            backup.copy.sha256,
            "the catalog's SHA-256 is the copy's"
        );
    }
    assert_eq!(listing.catalogs[0].1, 2, "the newest catalog is read");

    let other = kluis_recovery::RecoveryKey::generate();
    let catalog = read(catalogs[1]);
    assert!(
        kluis_recovery::sealed::open::<kluis_recovery::Catalog>(&catalog, &other).is_err(),
        "another key reads nothing"
    );
}
