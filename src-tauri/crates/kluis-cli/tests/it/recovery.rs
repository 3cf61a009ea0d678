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
    let secrets = e.dir.path().join("secrets");
    let secrets = [("KLUIS_SECRETS_DIR", secrets.to_str().unwrap())];
    assert_succeeded(
        &e.demo_with(
            &[
                "copy-target",
                "add",
                "NAS",
                "--folder",
                nas.to_str().unwrap(),
            ],
            &secrets,
        )
        .await,
    );
    let key_file = e.dir.path().join("kluis-recovery.key");
    let kit = e
        .demo_with(
            &[
                "recovery-kit",
                "--key-file",
                key_file.to_str().unwrap(),
                "--pc-name",
                "RECEPTIE",
            ],
            &secrets,
        )
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
        page.contains(&office.fingerprint()) && page.contains("24."),
        "{page}"
    );
    let add_again = format!("kluis copy-target add NAS --folder {}", nas.display());
    assert!(
        page.contains(&add_again),
        "how to add the target again: {page}"
    );
    let written_now = files_under(&nas);
    assert!(
        written_now.iter().any(|f| f.ends_with("000000000001.age")),
        "the kit's first catalog is written at once, for the kit to be checked: {written_now:?}"
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
        let out = e.out();
        let backup = [
            "backup",
            "--out",
            out.to_str().unwrap(),
            "--profile",
            "Bakker",
        ];
        assert_succeeded(&e.demo_with(&backup, &secrets).await);
    }
    let files = files_under(&nas);
    let catalogs: Vec<&String> = files.iter().filter(|f| f.contains("/catalogs/")).collect();
    assert_eq!(
        catalogs.len(),
        3,
        "the kit's, and a new catalog after each backup's copy: {files:?}"
    );
    assert!(catalogs[2].ends_with("000000000003.age"), "{catalogs:?}");
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
    assert_eq!(listing.catalogs[0].1, 3, "the newest catalog is read");

    let other = kluis_recovery::RecoveryKey::generate();
    let catalog = read(catalogs[2]);
    assert!(
        kluis_recovery::sealed::open::<kluis_recovery::Catalog>(&catalog, &other).is_err(),
        "another key reads nothing"
    );

    // A kit that cannot be made (its vouch key refused by a secrets folder others can read)
    // leaves no key file of no kit behind.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let open = e.dir.path().join("open-secrets");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let second = e.dir.path().join("second.key");
        let args = ["recovery-kit", "--key-file", second.to_str().unwrap()];
        let failed = e
            .demo_with(&args, &[("KLUIS_SECRETS_DIR", open.to_str().unwrap())])
            .await;
        assert!(!failed.status.success(), "the kit is not made");
        assert!(!second.exists(), "and its key file is removed");
    }
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

/// Bakker's passphrase on the lost computer.
const PHRASE: &str = "bakker bewaart zijn brood veilig";

/// The lost computer: klanten Bakker (encrypted with [`PHRASE`]) and Visser, a folder target
/// "NAS" (with `rule`, a `copy-target keep` when given), and a kit made there as computer
/// "OUD". Returns the NAS folder, the kit's key file, the `copy-target add` that adds NAS and
/// the kit's page.
async fn lost_office(
    e: &Env,
    rule: &[&str],
) -> (std::path::PathBuf, std::path::PathBuf, Vec<String>, String) {
    let api_key = kluis_sim::config::DEMO_API_KEY.to_string();
    for (name, username) in [("Bakker", "bakker"), ("Visser", "visser")] {
        e.add(name, username, &api_key, crate::profiles::KLANT_PASSWORD)
            .await;
    }
    let encrypt = ["encryption", "Bakker", "--passphrase"];
    let passphrase = [("KLUIS_ENCRYPTION_PASSPHRASE", PHRASE)];
    assert_succeeded(&e.saved(&encrypt, &passphrase).await);
    let nas = e.dir.path().join("nas");
    std::fs::create_dir(&nas).unwrap();
    let add_nas: Vec<String> = [
        "copy-target",
        "add",
        "NAS",
        "--folder",
        nas.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    assert_succeeded(&e.saved(&as_args(&add_nas), &[]).await);
    if !rule.is_empty() {
        assert_succeeded(&e.saved(rule, &[]).await);
    }
    let key_file = e.dir.path().join("kit.key");
    let kit = [
        "recovery-kit",
        "--key-file",
        key_file.to_str().unwrap(),
        "--pc-name",
        "OUD",
    ];
    let made = e.saved(&kit, &[]).await;
    assert_succeeded(&made);
    let page = String::from_utf8_lossy(&made.stdout).into_owned();
    (nas, key_file, add_nas, page)
}

fn as_args(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// The one entry of a simulator backup of `size` bytes, as a restore must write it.
pub(crate) fn entry_of_sim_backup(size: u64) -> Vec<u8> {
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
/// A backup planted on the target with a record sealed to the office key (which is on the
/// target for anyone to read) is not taken for the klant's: the office did not vouch for it.
/// Planted catalogs and an oversized record are passed over and said, stop no listing, and
/// neither stop the old computer's numbering nor are removed by it. A copy whose bytes or
/// length were changed on the target is refused (exit 7) with nothing written where the
/// restore was to go; with the catalogs gone the copies' own records still list every backup.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_computer_recovers_every_klant_from_the_copy_target_and_the_kit_alone() {
    let e = crate::profiles::office().await;
    let (nas, key_file, add_nas, _) = lost_office(&e, &[]).await;
    let phrase = PHRASE;
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
    assert_succeeded(&on_new_pc(&e, &pc, &as_args(&add_nas), &[]).await);
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

    let other_key = pc.join("other.key");
    let other = kluis_recovery::RecoveryKey::generate();
    std::fs::write(&other_key, other.to_text().expose()).unwrap();
    let args = [
        "recover",
        "list",
        "--target",
        "NAS",
        "--recovery-key",
        other_key.to_str().unwrap(),
    ];
    let wrong = on_new_pc(&e, &pc, &args, &[]).await;
    let office = kluis_recovery::RecoveryKey::parse(&std::fs::read_to_string(&key_file).unwrap())
        .unwrap()
        .office_key();
    assert!(
        stderr(&wrong).contains("No catalog here opens with the key given")
            && stderr(&wrong).contains(&office.fingerprint()),
        "another kit's key is told, with the fingerprint of the kit to use: {}",
        stderr(&wrong)
    );
    let mut args = vec![
        "recover", "restore", "--target", "NAS", "--klant", "Bakkerij",
    ];
    args.extend_from_slice(&["--to", "unused"]);
    args.extend_from_slice(&key_arg);
    let unknown = on_new_pc(&e, &pc, &args, &[]).await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("klanten there: Bakker, Visser"),
        "the klanten there are named: {}",
        stderr(&unknown)
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

    // Whoever can write to the target plants: a backup of "Visser" dated 2099 with a record
    // sealed to the office key (public, on the target) but not vouched for by the office, a
    // record too large to be one, and catalogs numbered past the office's own.
    let forged_at = "Visser/Visser 2099-01-01 0000.zip";
    std::fs::write(nas.join(forged_at), b"PK the attacker's files").unwrap();
    let key =
        kluis_recovery::RecoveryKey::parse(&std::fs::read_to_string(&key_file).unwrap()).unwrap();
    let mut forged: kluis_recovery::CopyRecord = {
        let genuine = std::fs::read(nas.join(kluis_recovery::layout::record(
            of("Visser")["location"].as_str().unwrap(),
        )))
        .unwrap();
        kluis_recovery::sealed::open(&genuine, &key).unwrap()
    };
    forged.copy.location = forged_at.into();
    forged.copy.saved_ms = 4_070_908_800_000;
    use sha2::Digest;
    forged.copy.sha256 = hex::encode(sha2::Sha256::digest(b"PK the attacker's files"));
    let forger = kluis_recovery::RecoveryKey::generate().vouch_key();
    let sealed = kluis_recovery::sealed::seal(&forged, &key.office_key(), &forger).unwrap();
    std::fs::write(nas.join(kluis_recovery::layout::record(forged_at)), sealed).unwrap();
    std::fs::write(
        nas.join("Visser/huge.zip.kluis-record"),
        vec![0u8; 1024 * 1024 + 1],
    )
    .unwrap();
    let catalogs = nas.join("kluis-recovery").join("catalogs");
    let pc_folder = (std::fs::read_dir(&catalogs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap())
    .path();
    for planted in ["000000000099.age", "999999999999.age"] {
        std::fs::write(pc_folder.join(planted), b"not a catalog").unwrap();
    }
    let planted = list(pc.clone()).await;
    assert_succeeded(&planted);
    let said = stderr(&planted);
    let lines = json_lines(&planted.stdout);
    let genuine =
        |lines: &[serde_json::Value]| (lines.iter()).filter(|l| l["proof"] == "catalog").count();
    assert_eq!(genuine(&lines), 2, "{lines:?}");
    let forgery = (lines.iter())
        .find(|l| l["location"] == forged_at)
        .unwrap_or_else(|| panic!("the planted file is listed: {lines:?}"));
    assert!(
        forgery["proof"] == "unverified" && forgery["klant"].is_null(),
        "as nobody's: {forgery}"
    );
    for expected in [
        "no computer of this office wrote it",
        "huge.zip.kluis-record is not read",
        "999999999999.age is not used",
        "000000000099.age is not used",
    ] {
        assert!(said.contains(expected), "{expected}: {said}");
    }

    // The old computer's next run numbers its catalog past the planted 99 (not past the
    // 999999999999 it never wrote, which would leave it no number) and removes neither.
    assert_succeeded(&e.backup_all(&root, &[]).await);
    for planted in ["000000000099.age", "999999999999.age"] {
        assert!(
            pc_folder.join(planted).exists(),
            "{planted} is not Kluis's to remove"
        );
    }
    let after = list(pc.clone()).await;
    assert_succeeded(&after);
    let lines = json_lines(&after.stdout);
    assert_eq!(genuine(&lines), 4, "both runs' backups: {lines:?}");
    let number: u64 = (stderr(&after).split("'s catalog ").nth(1))
        .and_then(|rest| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("a catalog is used: {}", stderr(&after)));
    assert!(
        (100..1000).contains(&number),
        "numbered on past 99, not past 999999999999: {number}"
    );
    let visser = (lines.iter())
        .find(|l| l["klant"] == "Visser")
        .unwrap()
        .clone();
    let to = pc.join("visser-again");
    let mut args = vec!["recover", "restore", "--target", "NAS", "--klant", "visser"];
    args.extend_from_slice(&["--to", to.to_str().unwrap()]);
    args.extend_from_slice(&key_arg);
    let restored = on_new_pc(&e, &pc, &args, &[]).await;
    assert_succeeded(&restored);
    assert!(
        std::fs::read(to.join("owner-data.bin")).unwrap() == entry_of_sim_backup(payload),
        "the newest genuine backup, not the planted one"
    );

    // A copy changed on the target (same length: its SHA-256 differs; longer: its size).
    let newest = nas.join(visser["location"].as_str().unwrap());
    let mut bytes = std::fs::read(&newest).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&newest, &bytes).unwrap();
    let bakker = (lines.iter())
        .find(|l| l["klant"] == "Bakker")
        .unwrap()
        .clone();
    let longer = nas.join(bakker["location"].as_str().unwrap());
    let mut bytes = std::fs::read(&longer).unwrap();
    bytes.extend_from_slice(b"more");
    std::fs::write(&longer, &bytes).unwrap();
    let key_text = std::fs::read_to_string(&key_file).unwrap();
    for (klant, why) in [("visser", "SHA-256"), ("Bakker", "bytes, not the")] {
        let to = pc.join(format!("from-a-changed-copy-{klant}"));
        let mut args = vec!["recover", "restore", "--target", "NAS", "--klant", klant];
        args.extend_from_slice(&["--to", to.to_str().unwrap()]);
        let refused = on_new_pc(&e, &pc, &args, &[("KLUIS_RECOVERY_KEY", key_text.trim())]).await;
        assert_eq!(
            refused.status.code(),
            Some(7),
            "a changed copy is refused: {}",
            stderr(&refused)
        );
        assert!(stderr(&refused).contains(why), "{}", stderr(&refused));
        assert!(!to.exists(), "nothing written where the restore was to go");
    }
    let leftovers: Vec<_> = (std::fs::read_dir(&pc).unwrap().flatten())
        .map(|f| f.file_name())
        .collect();
    assert!(
        (leftovers.iter()).all(|f| !f.to_string_lossy().starts_with('.')),
        "no fetched copy is left beside it: {leftovers:?}"
    );

    std::fs::remove_dir_all(&catalogs).unwrap();
    let from_records = list(pc.clone()).await;
    assert_succeeded(&from_records);
    let lines = json_lines(&from_records.stdout);
    let by_record = (lines.iter()).filter(|l| l["proof"] == "record").count();
    assert_eq!(
        by_record, 4,
        "the records alone list every backup: {lines:?}"
    );
    assert!(
        stderr(&from_records).contains("records"),
        "the listing says what it was made from: {}",
        stderr(&from_records)
    );
}

/// The computer is gone and a new one carries on: `recover adopt` makes the lost computer's
/// klanten profiles here (plan and encryption kept, its passphrase from the kit, no password
/// or api key) and its backups' copies this computer's, so that — once the passwords are
/// imported — the next backup is made as before (encrypted with the same passphrase), the
/// target's rule counts the lost computer's copies (the oldest removed, not copied again),
/// and the catalogs list every copy once, under the computer that carries on. Adopting
/// again adds nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_computer_carries_on_for_the_lost_one() {
    let e = crate::profiles::office().await;
    let api_key = kluis_sim::config::DEMO_API_KEY.to_string();
    let password = crate::profiles::KLANT_PASSWORD;
    let phrase = PHRASE;
    let keep_two = ["copy-target", "keep", "NAS", "--keep-last", "2"];
    let (nas, key_file, add_nas, page) = lost_office(&e, &keep_two).await;
    for step in [
        "kluis copy-target keep NAS --keep-last 2",
        "kluis recover adopt --target \"NAS\" --recovery-key key.txt",
        "Delete key.txt",
    ] {
        assert!(page.contains(step), "the kit's page says {step}: {page}");
    }
    assert_succeeded(&e.saved(&["plan", "Visser", "--daily", "02:00"], &[]).await);
    let root = e.dir.path().join("backups");
    for _ in 0..2 {
        assert_succeeded(&e.backup_all(&root, &[]).await);
    }
    let copies_on_nas = |klant: &str| {
        let mut names: Vec<String> = std::fs::read_dir(nas.join(klant))
            .unwrap()
            .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".kluis-record"))
            .collect();
        names.sort();
        names
    };
    // Bakker's copies on the target, oldest backup first, as the old computer recorded them.
    let made_by_old: Vec<String> = (e.history().made_copies(None).unwrap().into_iter())
        .filter_map(|(_, copy)| copy.location)
        .filter(|at| at.contains("/Bakker/"))
        .map(|at| at.rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(made_by_old.len(), 2, "{made_by_old:?}");
    assert_eq!(copies_on_nas("Bakker").len(), 2);
    let catalogs = std::fs::read_dir(nas.join("kluis-recovery").join("catalogs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(
        std::fs::read_dir(&catalogs).unwrap().count(),
        3,
        "one catalog when the kit was made, then one per run of `backup --all`, not one per klant"
    );

    // The new computer: the target again, then adopt.
    let pc = e.dir.path().join("new-pc");
    std::fs::create_dir(&pc).unwrap();
    for args in [as_args(&add_nas), keep_two.to_vec()] {
        assert_succeeded(&on_new_pc(&e, &pc, &args, &[]).await);
    }
    let adopt = [
        "recover",
        "adopt",
        "--target",
        "NAS",
        "--recovery-key",
        key_file.to_str().unwrap(),
        "--pc-name",
        "NIEUW",
    ];
    let adopted = on_new_pc(&e, &pc, &adopt, &[]).await;
    assert_succeeded(&adopted);
    assert!(
        stderr(&adopted).contains("2 klanten of OUD taken over, 4 copies added"),
        "{}",
        stderr(&adopted)
    );
    assert!(
        !stderr(&adopted).contains(phrase),
        "the passphrase is never said"
    );
    let again = on_new_pc(&e, &pc, &adopt, &[]).await;
    assert_succeeded(&again);
    assert!(
        stderr(&again).contains("2 klanten of OUD taken over, 0 copies added"),
        "adopting again adds nothing: {}",
        stderr(&again)
    );
    let other_kit = pc.join("other.key");
    let other = kluis_recovery::RecoveryKey::generate();
    std::fs::write(&other_kit, other.to_text().expose()).unwrap();
    let mut with_other = adopt.to_vec();
    with_other[5] = other_kit.to_str().unwrap();
    let refused = on_new_pc(&e, &pc, &with_other, &[]).await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("--replace-kit"),
        "this computer's kit is not replaced unasked: {}",
        stderr(&refused)
    );
    let listed = on_new_pc(&e, &pc, &["profiles", "list", "--json"], &[]).await;
    assert_succeeded(&listed);
    let profiles: Vec<serde_json::Value> =
        serde_json::from_slice(&listed.stdout).unwrap_or_else(|_| json_lines(&listed.stdout));
    let visser = (profiles.iter())
        .find(|p| p["name"] == "Visser")
        .expect("Visser is here");
    assert_eq!(
        visser["plan"]["schedule"]["kind"], "daily",
        "its plan kept: {visser}"
    );

    // Without a password the next backup says what to do; with them imported it is made.
    let out = pc.join("backups");
    let backup_all = ["backup", "--all", "--out", out.to_str().unwrap()];
    let refused = on_new_pc(&e, &pc, &backup_all, &[]).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("kluis profiles import"),
        "says how to give the passwords: {}",
        stderr(&refused)
    );
    let csv = pc.join("klanten.csv");
    std::fs::write(&csv, "name,username\nBakker,bakker\nVisser,visser\n").unwrap();
    let import = ["profiles", "import", csv.to_str().unwrap(), "--json"];
    let without = on_new_pc(&e, &pc, &import, &[("KLUIS_API_KEY", &api_key)]).await;
    let outcomes: Vec<String> = (json_lines(&without.stdout).iter())
        .map(|l| l["outcome"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        outcomes,
        ["failed", "failed"],
        "a row without a password does not pass for giving one: {}",
        stderr(&without)
    );
    std::fs::write(
        &csv,
        format!("name,username,password\nBakker,bakker,{password}\nVisser,visser,{password}\n"),
    )
    .unwrap();
    let import = ["profiles", "import", csv.to_str().unwrap()];
    let imported = on_new_pc(&e, &pc, &import, &[("KLUIS_API_KEY", &api_key)]).await;
    assert_succeeded(&imported);
    assert_succeeded(&on_new_pc(&e, &pc, &backup_all, &[]).await);

    let now_on_nas = copies_on_nas("Bakker");
    assert_eq!(now_on_nas.len(), 2, "the rule keeps two: {now_on_nas:?}");
    assert!(
        !now_on_nas.contains(&made_by_old[0]) && now_on_nas.contains(&made_by_old[1]),
        "the lost computer's oldest copy is the one removed: {made_by_old:?} → {now_on_nas:?}"
    );
    assert!(
        now_on_nas.iter().all(|n| n.ends_with(".age")),
        "the new backup is encrypted as before: {now_on_nas:?}"
    );
    let list = [
        "recover",
        "list",
        "--target",
        "NAS",
        "--json",
        "--recovery-key",
        key_file.to_str().unwrap(),
    ];
    let after = on_new_pc(&e, &pc, &list, &[]).await;
    assert_succeeded(&after);
    let lines = json_lines(&after.stdout);
    let bakker: Vec<&serde_json::Value> =
        (lines.iter()).filter(|l| l["klant"] == "Bakker").collect();
    assert_eq!(bakker.len(), 2, "each copy once: {bakker:?}");
    assert!(
        bakker
            .iter()
            .all(|l| l["pc"] == "NIEUW" && l["on_target"] == true),
        "under the computer that carries on: {bakker:?}"
    );
    assert!(
        stderr(&after).contains("NIEUW carries on for OUD"),
        "{}",
        stderr(&after)
    );
    let to = pc.join("restored");
    let restore = [
        "recover",
        "restore",
        "--target",
        "NAS",
        "--klant",
        "Bakker",
        "--to",
        to.to_str().unwrap(),
        "--recovery-key",
        key_file.to_str().unwrap(),
    ];
    assert_succeeded(&on_new_pc(&e, &pc, &restore, &[]).await);
    assert!(
        std::fs::read(to.join("owner-data.bin")).unwrap() == entry_of_sim_backup(256 * 1024),
        "the new computer's own backup opens with the kit"
    );
}

/// A saved klant's backup on its own (`kluis backup --profile`): the catalog written after it
/// names its copy's restore test — the catalogs come last of what follows a save.
#[tokio::test(flavor = "multi_thread")]
async fn the_catalog_after_a_backup_names_its_restore_test() {
    let e = crate::profiles::office().await;
    let (nas, key_file, _, _) = lost_office(&e, &[]).await;
    let root = e.dir.path().join("backups");
    let backup = [
        "backup",
        "--profile",
        "Visser",
        "--out",
        root.to_str().unwrap(),
    ];
    assert_succeeded(&e.saved(&backup, &[]).await);
    let key =
        kluis_recovery::RecoveryKey::parse(&std::fs::read_to_string(&key_file).unwrap()).unwrap();
    let folder = std::fs::read_dir(nas.join("kluis-recovery").join("catalogs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut written: Vec<_> = (std::fs::read_dir(&folder).unwrap())
        .map(|f| f.unwrap().path())
        .collect();
    written.sort();
    let newest: kluis_recovery::Catalog =
        kluis_recovery::sealed::open(&std::fs::read(written.last().unwrap()).unwrap(), &key)
            .unwrap();
    let visser = (newest.klanten.iter())
        .find(|k| k.klant.name == "Visser")
        .expect("Visser is in the catalog");
    let tested = &visser.copies[0].restore_test;
    assert!(
        tested.as_ref().is_some_and(|t| t.passed),
        "its restore test, passed: {tested:?}"
    );
}

/// `kluis ARGS` as the computer whose files are under `who` (its own profiles, history and
/// secrets), with `vars`.
async fn as_computer<S: AsRef<str>>(
    e: &Env,
    who: &Path,
    args: &[S],
    vars: &[(&str, &str)],
) -> Output {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    std::fs::create_dir_all(who).unwrap();
    let files = [
        ("KLUIS_PROFILES_FILE", who.join("profiles.json")),
        ("KLUIS_HISTORY_DB", who.join("history.sqlite3")),
        ("KLUIS_SECRETS_DIR", who.join("secrets")),
    ];
    let mut all: Vec<(&str, &str)> = (files.iter())
        .map(|(name, path)| (*name, path.to_str().unwrap()))
        .collect();
    all.extend_from_slice(vars);
    e.demo_with(&args, &all).await
}

/// An office of two computers on one folder target: B joins the kit A made (`recovery-kit
/// --join`, no new kit), so that kit opens B's copies too; when A then makes a new kit, B's
/// next catalog leaves the target's office key as A wrote it (the two would otherwise take
/// turns writing theirs) and says so, until B joins the new kit — which then opens B's copies.
#[tokio::test(flavor = "multi_thread")]
async fn a_second_computer_joins_the_offices_kit_and_follows_a_new_one() {
    let e = env(|c| c.payload_size = 40_000).await;
    let nas = e.dir.path().join("nas");
    std::fs::create_dir(&nas).unwrap();
    let (a, b, c) = (
        e.dir.path().join("a"),
        e.dir.path().join("b"),
        e.dir.path().join("c"),
    );
    let add = [
        "copy-target",
        "add",
        "NAS",
        "--folder",
        nas.to_str().unwrap(),
    ];
    for who in [&a, &b, &c] {
        assert_succeeded(&as_computer(&e, who, &add, &[]).await);
    }
    let (k1, k2) = (e.dir.path().join("k1.key"), e.dir.path().join("k2.key"));
    let make = |file: &Path| {
        [
            "recovery-kit",
            "--key-file",
            file.to_str().unwrap(),
            "--pc-name",
            "A",
        ]
        .map(String::from)
    };
    let made = make(&k1);
    assert_succeeded(&as_computer(&e, &a, &made, &[]).await);
    let join = |file: &Path| {
        [
            "recovery-kit",
            "--join",
            "--recovery-key",
            file.to_str().unwrap(),
            "--pc-name",
            "B",
        ]
        .map(String::from)
    };
    let joined = join(&k1);
    let said = as_computer(&e, &b, &joined, &[]).await;
    assert_succeeded(&said);
    assert!(
        stderr(&said).contains("now writes its catalogs for the office's kit"),
        "{}",
        stderr(&said)
    );
    let backup = |klant: &'static str, out: &Path| {
        ["backup", "--out", out.to_str().unwrap(), "--profile", klant].map(String::from)
    };
    for (who, klant) in [(&a, "Bakker"), (&b, "Visser")] {
        let args = backup(klant, &who.join(klant));
        assert_succeeded(&as_computer(&e, who, &args, &[]).await);
    }
    let list = |file: &Path| {
        [
            "recover",
            "list",
            "--json",
            "--target",
            "NAS",
            "--recovery-key",
            file.to_str().unwrap(),
        ]
        .map(String::from)
    };
    let listing = |out: &Output| -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = json_lines(&out.stdout)
            .iter()
            .map(|l| {
                let klant = l["klant"].as_str().unwrap_or("");
                // (An ad-hoc klant is named with its service's short id: `Visser [2fed…]`.)
                let klant = klant.split(" [").next().unwrap_or(klant);
                (klant.into(), l["pc"].as_str().unwrap_or("").into())
            })
            .collect();
        pairs.sort();
        pairs
    };
    let args = list(&k1);
    let first = as_computer(&e, &c, &args, &[]).await;
    assert_succeeded(&first);
    assert_eq!(
        listing(&first),
        [("Bakker".into(), "A".into()), ("Visser".into(), "B".into())],
        "the office's kit opens both computers' copies: {} {:?}",
        stderr(&first),
        files_under(&nas)
    );

    // A makes a new kit; B, still on the old one, does not write its key over the new.
    let made = make(&k2);
    assert_succeeded(&as_computer(&e, &a, &made, &[]).await);
    let k2_fingerprint = kluis_recovery::RecoveryKey::parse(&std::fs::read_to_string(&k2).unwrap())
        .unwrap()
        .office_key()
        .fingerprint();
    let office_key = || std::fs::read_to_string(nas.join("kluis-recovery/office-key.txt")).unwrap();
    assert!(office_key().contains(&k2_fingerprint));
    let args = backup("Visser", &b.join("Visser"));
    let again = as_computer(&e, &b, &args, &[]).await;
    assert_succeeded(&again);
    assert!(
        stderr(&again).contains(&format!("names another recovery kit ({k2_fingerprint})")),
        "B says the office has a new kit: {}",
        stderr(&again)
    );
    assert!(office_key().contains(&k2_fingerprint), "not written over");

    let joined = join(&k2);
    assert_succeeded(&as_computer(&e, &b, &joined, &[]).await);
    let args = list(&k2);
    let second = as_computer(&e, &c, &args, &[]).await;
    assert_succeeded(&second);
    let pairs = listing(&second);
    assert!(
        pairs.contains(&("Visser".into(), "B".into()))
            && pairs.contains(&("Bakker".into(), "A".into())),
        "the new kit opens both computers' copies once B joined it: {pairs:?}"
    );

    // Something that is no office key at all (damaged, or planted) is written over, not said.
    std::fs::write(nas.join("kluis-recovery/office-key.txt"), "not a key").unwrap();
    let args = backup("Visser", &b.join("Visser"));
    let after = as_computer(&e, &b, &args, &[]).await;
    assert_succeeded(&after);
    assert!(
        !stderr(&after).contains("names another recovery kit"),
        "{}",
        stderr(&after)
    );
    assert!(
        office_key().contains(&k2_fingerprint),
        "the office's key written again"
    );
}

/// `recover list --before DATE` goes back past catalogs that are not trusted: before every
/// catalog, none is used and every copy is still found by its own record; after them, the
/// newest is used as without it. A date that is none is refused (exit 2).
#[tokio::test(flavor = "multi_thread")]
async fn recovery_goes_back_to_before_a_date() {
    let e = env(|c| c.payload_size = 40_000).await;
    let (nas, me) = (e.dir.path().join("nas"), e.dir.path().join("pc"));
    std::fs::create_dir(&nas).unwrap();
    let key = e.dir.path().join("kit.key");
    let out = me.join("Bakker");
    let steps: [&[&str]; 3] = [
        &[
            "copy-target",
            "add",
            "NAS",
            "--folder",
            nas.to_str().unwrap(),
        ],
        &["recovery-kit", "--key-file", key.to_str().unwrap()],
        &[
            "backup",
            "--out",
            out.to_str().unwrap(),
            "--profile",
            "Bakker",
        ],
    ];
    for args in steps {
        assert_succeeded(&as_computer(&e, &me, args, &[]).await);
    }
    let list = [
        "recover",
        "list",
        "--json",
        "--target",
        "NAS",
        "--recovery-key",
    ];
    let list_before = |before: &'static str| {
        let mut args = list.map(String::from).to_vec();
        args.extend([
            key.to_str().unwrap().to_string(),
            "--before".into(),
            before.into(),
        ]);
        args
    };
    let proofs = |out: &Output| -> Vec<String> {
        (json_lines(&out.stdout).iter())
            .map(|l| l["proof"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let long_ago = as_computer(&e, &me, &list_before("2000-01-01"), &[]).await;
    assert_succeeded(&long_ago);
    assert_eq!(proofs(&long_ago), ["record"], "found by its own record");
    assert!(
        stderr(&long_ago).contains("passed over")
            && stderr(&long_ago).contains("rebuilt from the copies' own records"),
        "{}",
        stderr(&long_ago)
    );
    let later = as_computer(&e, &me, &list_before("2999-01-01T00:00:00Z"), &[]).await;
    assert_succeeded(&later);
    assert_eq!(
        proofs(&later),
        ["catalog"],
        "the newest catalog, as without it"
    );
    let wrong = as_computer(&e, &me, &list_before("last tuesday"), &[]).await;
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
}
