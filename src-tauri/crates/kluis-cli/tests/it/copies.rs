//! A second copy of each backup off this computer, from the command line: `kluis copy-target`
//! and `kluis copy --pending`, with backups made from the simulator over TLS.

use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::Value;

fn json_lines(stdout: &[u8]) -> Vec<Value> {
    (String::from_utf8_lossy(stdout).lines())
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

/// A backup with `--profile bakker`; its saved path.
async fn backup(e: &Env) -> (PathBuf, String) {
    let output = e.backup(&["--profile", "bakker", "--json"]).await;
    assert_succeeded(&output);
    let path = PathBuf::from(json_lines(&output.stdout)[0]["path"].as_str().unwrap());
    (path, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// A folder `nas` in the test's folder, added as copy target "NAS".
async fn with_nas(e: &Env) -> PathBuf {
    let nas = e.dir.path().join("nas");
    std::fs::create_dir(&nas).unwrap();
    let folder = nas.to_str().unwrap();
    let add = e
        .demo(&["copy-target", "add", "NAS", "--folder", folder])
        .await;
    assert_succeeded(&add);
    nas
}

/// Where the copy of `local` is on the target at `root`: in the klant's folder of that name.
fn copy_of(root: &Path, local: &Path) -> PathBuf {
    let folder = local.parent().unwrap().file_name().unwrap();
    root.join(folder).join(local.file_name().unwrap())
}

/// Each backup is copied to the copy target as soon as it is saved, byte for byte. With the
/// target away (a share not mounted), the backup is still saved (exit 0) and says the copy
/// waits; `kluis copy --pending` fails while the target is away, makes the copy once it is
/// back, and then has nothing left to do.
#[tokio::test(flavor = "multi_thread")]
async fn each_backup_is_copied_and_a_missed_copy_is_made_later() {
    let e = env(|c| c.payload_size = 50_000).await;
    let nas = e.dir.path().join("nas");
    std::fs::create_dir(&nas).unwrap();
    let add = e
        .demo(&[
            "copy-target",
            "add",
            "NAS",
            "--folder",
            nas.to_str().unwrap(),
        ])
        .await;
    assert_succeeded(&add);
    let listed = json_lines(&e.demo(&["copy-target", "list", "--json"]).await.stdout);
    assert_eq!(listed[0]["name"], "NAS");
    assert_eq!(listed[0]["place"]["path"], nas.to_str().unwrap());

    let (first, said) = backup(&e).await;
    assert!(said.contains("copied to \"NAS\""), "{said}");
    assert_eq!(
        std::fs::read(copy_of(&nas, &first)).unwrap(),
        std::fs::read(&first).unwrap()
    );

    let away = e.dir.path().join("nas-unmounted");
    std::fs::rename(&nas, &away).unwrap();
    let (second, said) = backup(&e).await;
    assert!(second.exists(), "the backup is saved here");
    assert!(said.contains("not yet copied to \"NAS\""), "{said}");
    let still_away = e.demo(&["copy", "--pending"]).await;
    assert!(
        !still_away.status.success(),
        "a copy that cannot be made is an error"
    );
    assert!(!nas.exists(), "nothing is made where the share should be");

    std::fs::rename(&away, &nas).unwrap();
    let made = e.demo(&["copy", "--pending", "--json"]).await;
    assert_succeeded(&made);
    let lines = json_lines(&made.stdout);
    assert_eq!(lines.len(), 1, "only the missing copy: {lines:?}");
    assert_eq!(
        lines[0]["location"],
        copy_of(&nas, &second).to_str().unwrap()
    );
    assert_eq!(
        std::fs::read(copy_of(&nas, &second)).unwrap(),
        std::fs::read(&second).unwrap()
    );
    let again = e.demo(&["copy", "--pending", "--json"]).await;
    assert_succeeded(&again);
    assert!(again.stdout.is_empty(), "nothing left to copy");

    // The auditor's report lists each backup's copy.
    let report = e.demo(&["report", "--csv"]).await;
    assert_succeeded(&report);
    let csv = String::from_utf8_lossy(&report.stdout);
    let listed = format!("NAS: {}", copy_of(&nas, &second).display());
    assert!(csv.contains(&listed), "{csv}");

    let history = e.history();
    let entry = &history.list(None, 10).unwrap()[0];
    let records = history.copies_of(&entry.id).unwrap();
    assert!(records[0].made, "the history has the proof: {records:?}");
    assert_eq!(records[0].sha256, entry.sha256);
}

/// A target is checked when it is added (a folder that is not there is refused, and not
/// saved), tested on request, and removed by name; an unknown name is said with the ones
/// there are.
#[tokio::test(flavor = "multi_thread")]
async fn targets_are_checked_tested_and_removed() {
    let e = env(|_| {}).await;
    let missing = e.dir.path().join("not-mounted");
    let refused = e
        .demo(&[
            "copy-target",
            "add",
            "NAS",
            "--folder",
            missing.to_str().unwrap(),
        ])
        .await;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not there"));
    assert!(
        e.demo(&["copy-target", "list"]).await.stdout.is_empty(),
        "not saved"
    );

    let usb = e.dir.path().join("usb");
    std::fs::create_dir(&usb).unwrap();
    let folder = usb.to_str().unwrap();
    assert_succeeded(
        &e.demo(&["copy-target", "add", "USB", "--folder", folder])
            .await,
    );
    let twice = e
        .demo(&["copy-target", "add", "usb", "--folder", folder])
        .await;
    assert!(!twice.status.success(), "two targets never share a name");
    assert_succeeded(&e.demo(&["copy-target", "test", "USB"]).await);
    let unknown = e.demo(&["copy-target", "test", "NAS"]).await;
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("there are: USB"));
    assert_succeeded(&e.demo(&["copy-target", "remove", "USB"]).await);
    assert!(e.demo(&["copy-target", "list"]).await.stdout.is_empty());
}

/// `kluis verify` looks at each copy too: as made, it passes; a copy deleted from the target is
/// reported missing (exit 7, the backup here intact) and is pending again, so `kluis copy
/// --pending` puts it back; a copy changed in place is caught by `--read-back-copies`.
#[tokio::test(flavor = "multi_thread")]
async fn verify_finds_a_lost_copy_and_it_is_made_again() {
    let e = env(|c| c.payload_size = 50_000).await;
    let nas = with_nas(&e).await;
    let (local, _) = backup(&e).await;
    let copy = copy_of(&nas, &local);

    let clean = e.demo(&["verify", "--json"]).await;
    assert_succeeded(&clean);
    let lines = json_lines(&clean.stdout);
    let copy_line = lines
        .iter()
        .find(|l| l["copy_target"] == "NAS")
        .expect("a line per copy");
    assert_eq!(copy_line["finding"], "intact");
    assert_eq!(copy_line["location"], copy.to_str().unwrap());

    std::fs::remove_file(&copy).unwrap();
    let lost = e.demo(&["verify"]).await;
    assert_eq!(lost.status.code(), Some(7), "a lost copy exits 7");
    let said = String::from_utf8_lossy(&lost.stdout);
    assert!(
        said.contains("missing") && said.contains("copy on \"NAS\""),
        "{said}"
    );
    assert_succeeded(&e.demo(&["copy", "--pending"]).await);
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&local).unwrap()
    );

    let mut bytes = std::fs::read(&copy).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&copy, bytes).unwrap();
    assert_succeeded(&e.demo(&["verify"]).await);
    let read_back = e.demo(&["verify", "--read-back-copies"]).await;
    assert_eq!(
        read_back.status.code(),
        Some(7),
        "read back, the change is seen"
    );
    assert!(String::from_utf8_lossy(&read_back.stdout).contains("changed"));
}

/// A target's own rule (`copy-target keep NAS --keep-last 1`) thins the copies on it after
/// each copy while this computer keeps every backup: only copies Kluis made and recorded go —
/// never the user's own file beside them, never a copy no longer as made — and each removal is
/// recorded; a removed copy is not copied again.
#[tokio::test(flavor = "multi_thread")]
async fn a_targets_rule_thins_its_copies_only() {
    let e = env(|c| c.payload_size = 20_000).await;
    let nas = with_nas(&e).await;
    let keep = e
        .demo(&["copy-target", "keep", "NAS", "--keep-last", "1"])
        .await;
    assert_succeeded(&keep);
    assert!(String::from_utf8_lossy(&keep.stderr).contains("keep the last 1"));

    let (first, _) = backup(&e).await;
    let klant_folder = copy_of(&nas, &first).parent().unwrap().to_path_buf();
    std::fs::write(klant_folder.join("notes.txt"), "mine").unwrap();
    let (second, said) = backup(&e).await;
    assert!(said.contains("on \"NAS\", 1 removed"), "{said}");
    assert!(!copy_of(&nas, &first).exists(), "the older copy went");
    assert!(first.exists(), "this computer keeps every backup");
    assert!(
        klant_folder.join("notes.txt").exists(),
        "the user's own file stays"
    );

    // A copy changed in place is not as made: the rule leaves it, and says so.
    let mut bytes = std::fs::read(copy_of(&nas, &second)).unwrap();
    bytes[10] ^= 0xff;
    std::fs::write(copy_of(&nas, &second), bytes).unwrap();
    let (third, said) = backup(&e).await;
    assert!(
        said.contains("kluis:   left") && said.contains("changed"),
        "{said}"
    );
    assert!(
        copy_of(&nas, &second).exists(),
        "a changed copy is never deleted"
    );
    assert!(copy_of(&nas, &third).exists());

    // The changed copy is no copy: it is made anew (beside it); the removed one is not.
    let pending = e.demo(&["copy", "--pending", "--json"]).await;
    assert_succeeded(&pending);
    let made = json_lines(&pending.stdout);
    let second_name = second.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(
        made[0]["location"]
            .as_str()
            .unwrap()
            .contains(second_name.trim_end_matches(".zip")),
        "{made:?}"
    );
    let history = e.history();
    let first_id = &history.list(None, 10).unwrap()[2].id;
    let record = &history.copies_of(first_id).unwrap()[0];
    assert_eq!(
        record.removed.as_ref().map(|r| r.rule.as_str()),
        Some("keep the last 1")
    );
}

/// A lost disk, from the command line: `restore-test --profile` tests the newest backup and
/// its copy on the target (fetched back), one JSON line each. `contents --profile bakker
/// --latest` lists the saved file; with the file gone, `--copy NAS` still lists the copy
/// (fetched back and checked), and `restore-test --profile` fails the lost file (exit 7) but
/// passes the copy — every test recorded.
#[tokio::test(flavor = "multi_thread")]
async fn a_copy_is_listed_and_restore_tested_when_the_file_is_lost() {
    let e = env(|c| c.payload_size = 50_000).await;
    with_nas(&e).await;
    let (saved, _) = backup(&e).await;
    let tested = e
        .demo(&["restore-test", "--profile", "bakker", "--json"])
        .await;
    assert_succeeded(&tested);
    let lines = json_lines(&tested.stdout);
    let copy_on: Vec<&Value> = lines.iter().map(|l| &l["copy_on"]).collect();
    assert_eq!(copy_on, [&Value::Null, &Value::from("NAS")], "{lines:?}");
    let listed = e
        .demo(&["contents", "--profile", "bakker", "--latest", "--json"])
        .await;
    assert_succeeded(&listed);
    assert_eq!(json_lines(&listed.stdout)[0]["path"], "owner-data.bin");

    std::fs::remove_file(&saved).unwrap(); // the disk is lost
    let args = [
        "contents",
        "--profile",
        "bakker",
        "--latest",
        "--copy",
        "NAS",
        "--json",
    ];
    let from_copy = e.demo(&args).await;
    assert_succeeded(&from_copy);
    assert_eq!(json_lines(&from_copy.stdout)[0]["path"], "owner-data.bin");
    let unknown = e
        .demo(&[
            "contents",
            "--profile",
            "bakker",
            "--latest",
            "--copy",
            "USB",
        ])
        .await;
    assert_eq!(
        unknown.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );

    let tested = e
        .demo(&["restore-test", "--profile", "bakker", "--json"])
        .await;
    assert_eq!(
        tested.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&tested.stderr)
    );
    let lines = json_lines(&tested.stdout);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        (&lines[0]["passed"], &lines[0]["copy_on"]),
        (&Value::Bool(false), &Value::Null)
    );
    assert_eq!(
        (&lines[1]["passed"], &lines[1]["copy_on"]),
        (&Value::Bool(true), &Value::from("NAS"))
    );
    assert!(lines.iter().all(|l| l["recorded"] == true), "{lines:?}");
}
