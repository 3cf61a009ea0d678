//! Issue 42: the office's recovery kit and the catalogs it opens, from the command line: the
//! kit printed (its private key, in age's text and 24 words) and never kept on this computer,
//! and after each backup's copy a catalog and the copy's record on the copy target, sealed to
//! the kit's key — which the kit alone reads back to every backup of every klant there.

use std::path::Path;
use std::process::Output;

use crate::common::*;

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    (String::from_utf8_lossy(stdout).lines())
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

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

/// `kluis ARGS` as on a new computer: the demo's service settings, but its own empty
/// profiles file, history and secrets folder under `pc` — nothing of the lost computer's.
async fn on_new_pc(e: &Env, pc: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = e.command(args);
    command
        .env("KLUIS_PROFILES_FILE", pc.join("profiles.json"))
        .env("KLUIS_HISTORY_DB", pc.join("history.sqlite3"))
        .env("KLUIS_SECRETS_DIR", pc.join("secrets"))
        .envs(vars.iter().copied());
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// The one entry of a simulator backup of `size` bytes, as a restore must write it.
fn entry_of_sim_backup(size: u64) -> Vec<u8> {
    use kluis_sim::payload::{slice, LOCAL, MAX_CHUNK, TRAILER};
    let length = size - (LOCAL + TRAILER) as u64;
    let mut bytes = Vec::with_capacity(length as usize);
    while (bytes.len() as u64) < length {
        let n = (length - bytes.len() as u64).min(MAX_CHUNK as u64) as usize;
        bytes.extend_from_slice(&slice(LOCAL as u64 + bytes.len() as u64, n));
    }
    bytes
}

/// The day the copies exist for: the office's computer is gone. On a new one — an empty
/// profiles file, no history, no saved secret — with only the copy target added again and the
/// kit's key, `recover list` names every klant's backups (from the newest catalog; no record read), and
/// `recover restore` brings back a klant whose backups were encrypted with a passphrase (the
/// catalog sealed it) and one that was not, byte for byte. A copy whose bytes were changed on
/// the target is refused (exit 7) with nothing written where the restore was to go; a damaged
/// newest catalog gives way to the one before, and with the catalogs gone the copies' own
/// records still list every backup.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_computer_recovers_every_klant_from_the_copy_target_and_the_kit_alone() {
    let e = crate::profiles::office().await;
    let key = kluis_sim::config::DEMO_API_KEY.to_string();
    e.add("Bakker", "bakker", &key, crate::profiles::KLANT_PASSWORD)
        .await;
    e.add("Visser", "visser", &key, crate::profiles::KLANT_PASSWORD)
        .await;
    let phrase = "bakker bewaart zijn brood veilig";
    assert_succeeded(
        &e.saved(
            &["encryption", "Bakker", "--passphrase"],
            &[("KLUIS_ENCRYPTION_PASSPHRASE", phrase)],
        )
        .await,
    );
    let nas = e.dir.path().join("nas");
    std::fs::create_dir(&nas).unwrap();
    let add_nas = [
        "copy-target",
        "add",
        "NAS",
        "--folder",
        nas.to_str().unwrap(),
    ];
    assert_succeeded(&e.saved(&add_nas, &[]).await);
    let key_file = e.dir.path().join("kit.key");
    let kit = ["recovery-kit", "--key-file", key_file.to_str().unwrap()];
    assert_succeeded(&e.saved(&kit, &[]).await);
    let root = e.dir.path().join("backups");
    assert_succeeded(&e.backup_all(&root, &[]).await);

    let pc = e.dir.path().join("new-pc");
    std::fs::create_dir(&pc).unwrap();
    let key_arg = ["--recovery-key", key_file.to_str().unwrap()];
    let list = |pc: std::path::PathBuf| {
        let mut args = vec!["recover", "list", "--target", "NAS", "--json"];
        args.extend_from_slice(&key_arg);
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        let e = &e;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            on_new_pc(e, &pc, &args, &[]).await
        }
    };
    let before = list(pc.clone()).await;
    assert_eq!(
        before.status.code(),
        Some(2),
        "no target of that name is known yet: {}",
        stderr(&before)
    );
    assert_succeeded(&on_new_pc(&e, &pc, &add_nas, &[]).await);
    let listed = list(pc.clone()).await;
    assert_succeeded(&listed);
    let lines = json_lines(&listed.stdout);
    assert_eq!(lines.len(), 2, "one backup of each klant: {lines:?}");
    let of = |klant: &str| {
        (lines.iter())
            .find(|l| l["klant"] == klant)
            .unwrap_or_else(|| panic!("{klant} listed: {lines:?}"))
            .clone()
    };
    assert_eq!(of("Bakker")["encrypted"], "passphrase");
    assert_eq!(of("Visser")["encrypted"], "no");
    for line in &lines {
        assert_eq!(
            line["proof"], "catalog",
            "named by the newest catalog: {line}"
        );
    }
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&listed.stdout),
        stderr(&listed)
    );
    assert!(
        !said.contains(phrase),
        "the passphrase is never said: {said}"
    );

    let payload = 256 * 1024; // the office's (crate::profiles::office)
    for klant in ["Bakker", "Visser"] {
        let to = pc.join(format!("restored-{klant}"));
        let mut args = vec!["recover", "restore", "--target", "NAS", "--klant", klant];
        args.extend_from_slice(&["--to", to.to_str().unwrap()]);
        args.extend_from_slice(&key_arg);
        let restored = on_new_pc(&e, &pc, &args, &[]).await;
        assert_succeeded(&restored);
        assert!(
            std::fs::read(to.join("owner-data.bin")).unwrap() == entry_of_sim_backup(payload),
            "{klant}'s backup restored byte for byte"
        );
    }

    let visser = nas.join(of("Visser")["location"].as_str().unwrap());
    let mut bytes = std::fs::read(&visser).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&visser, &bytes).unwrap();
    let to = pc.join("from-a-changed-copy");
    let mut args = vec!["recover", "restore", "--target", "NAS", "--klant", "visser"];
    args.extend_from_slice(&["--to", to.to_str().unwrap()]);
    let key_text = std::fs::read_to_string(&key_file).unwrap();
    let refused = on_new_pc(&e, &pc, &args, &[("KLUIS_RECOVERY_KEY", key_text.trim())]).await;
    assert_eq!(
        refused.status.code(),
        Some(7),
        "a changed copy is refused: {}",
        stderr(&refused)
    );
    assert!(stderr(&refused).contains("SHA-256"), "{}", stderr(&refused));
    assert!(!to.exists(), "nothing written where the restore was to go");
    let leftovers: Vec<_> = std::fs::read_dir(&pc)
        .unwrap()
        .flatten()
        .map(|f| f.file_name())
        .collect();
    assert!(
        leftovers
            .iter()
            .all(|f| !f.to_string_lossy().starts_with('.')),
        "the fetched copy is not left beside it: {leftovers:?}"
    );

    let catalogs = nas.join("kluis-recovery").join("catalogs");
    let pc_folder = std::fs::read_dir(&catalogs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(pc_folder.join("000000000099.age"), b"not a catalog").unwrap();
    let past_a_damaged_one = list(pc.clone()).await;
    assert_succeeded(&past_a_damaged_one);
    let lines = json_lines(&past_a_damaged_one.stdout);
    assert!(
        lines.len() == 2 && lines.iter().all(|l| l["proof"] == "catalog"),
        "a newest catalog that does not open gives way to the one before: {lines:?}"
    );
    assert!(
        stderr(&past_a_damaged_one).contains("000000000099"),
        "and is said: {}",
        stderr(&past_a_damaged_one)
    );

    std::fs::remove_dir_all(&catalogs).unwrap();
    let from_records = list(pc.clone()).await;
    assert_succeeded(&from_records);
    let lines = json_lines(&from_records.stdout);
    assert_eq!(lines.len(), 2, "the records alone list both: {lines:?}");
    assert!(lines.iter().all(|l| l["proof"] == "record"), "{lines:?}");
    assert!(
        stderr(&from_records).contains("records"),
        "the listing says what it was made from: {}",
        stderr(&from_records)
    );
}
