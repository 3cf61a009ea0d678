//! What Kluis keeps, from the command line: `kluis verify` over backups made from the
//! simulator over TLS, their files then changed, cut short and deleted.

use std::path::PathBuf;

use crate::common::*;
use serde_json::Value;

fn json_lines(stdout: &[u8]) -> Vec<Value> {
    (String::from_utf8_lossy(stdout).lines())
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

/// Makes a backup with `--profile LABEL` and returns its saved path.
async fn backup(e: &Env, label: &str) -> PathBuf {
    let output = e.backup(&["--profile", label, "--json"]).await;
    assert_succeeded(&output);
    let line = &json_lines(&output.stdout)[0];
    PathBuf::from(line["path"].as_str().unwrap())
}

/// `kluis verify` passes (exit 0) while every file is as saved; once one is changed, one cut
/// short and one deleted, it names each with its finding (JSON and text) and exits 7; and
/// `--profile` limits it to one klant's backups.
#[tokio::test(flavor = "multi_thread")]
async fn verify_names_every_problem_and_exits_7() {
    let e = env(|c| c.payload_size = 300_000).await;
    let intact = backup(&e, "bakker").await;
    let changed = backup(&e, "bakker").await;
    let truncated = backup(&e, "visser").await;
    let missing = backup(&e, "visser").await;

    let clean = e.demo(&["verify"]).await;
    assert_succeeded(&clean);
    assert!(String::from_utf8_lossy(&clean.stderr).contains("4 intact"));

    let mut bytes = std::fs::read(&changed).unwrap();
    bytes[1000] ^= 0xff;
    std::fs::write(&changed, bytes).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&truncated)
        .unwrap();
    file.set_len(100_000).unwrap();
    std::fs::remove_file(&missing).unwrap();

    let output = e.demo(&["verify", "--json"]).await;
    assert_eq!(output.status.code(), Some(7), "a problem exits 7");
    let lines = json_lines(&output.stdout);
    let finding = |path: &PathBuf| {
        let line = lines.iter().find(|l| l["path"] == path.to_str().unwrap());
        line.expect("every backup has a line")["finding"].clone()
    };
    assert_eq!(finding(&intact), "intact");
    assert_eq!(finding(&changed), "changed");
    assert_eq!(finding(&truncated), "changed");
    assert_eq!(finding(&missing), "missing");
    assert!(String::from_utf8_lossy(&output.stderr).contains("3 of 4 backups"));

    let text = e.demo(&["verify"]).await;
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("missing") && stdout.contains(missing.to_str().unwrap()));
    assert!(
        stdout.contains("100000 bytes"),
        "says what is wrong: {stdout}"
    );

    let bakker = e.demo(&["verify", "--json", "--profile", "bakker"]).await;
    assert_eq!(json_lines(&bakker.stdout).len(), 2, "only bakker's backups");
    assert_eq!(bakker.status.code(), Some(7));
}

/// `backup --keep-last 2`: after each save the older backups beyond two are deleted — only
/// those Kluis recorded, never the user's own file beside them — and the history says which
/// rule removed each.
#[tokio::test(flavor = "multi_thread")]
async fn backup_keep_last_removes_the_oldest() {
    let e = env(|c| c.payload_size = 50_000).await;
    let out = e.out();
    std::fs::write(out.join("notities.txt"), "mine").unwrap();
    let mut saved = Vec::new();
    for _ in 0..3 {
        let output = e
            .backup(&["--profile", "bakker", "--json", "--keep-last", "2"])
            .await;
        assert_succeeded(&output);
        let lines = json_lines(&output.stdout);
        assert_eq!(lines.len(), 1, "stdout stays the backup's one line");
        saved.push(PathBuf::from(lines[0]["path"].as_str().unwrap()));
        if saved.len() == 3 {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains("removed 1 of its backups (keep the last 2)"),
                "{stderr}"
            );
        }
    }
    assert!(!saved[0].exists(), "the oldest is deleted");
    assert!(saved[1].exists() && saved[2].exists());
    assert!(out.join("notities.txt").exists(), "a foreign file survives");

    let history = e.demo(&["history", "--json"]).await;
    let rows = json_lines(&history.stdout);
    let oldest = rows
        .iter()
        .find(|r| r["path"] == saved[0].to_str().unwrap());
    assert_eq!(oldest.unwrap()["removed"]["rule"], "keep the last 2");
    let text = e.demo(&["history"]).await;
    assert!(String::from_utf8_lossy(&text.stdout).contains("(removed: keep the last 2)"));
    assert!(
        e.demo(&["verify"]).await.status.success(),
        "a removed backup is not missing"
    );
}

/// `prune --dry-run` names what would go and deletes nothing; `prune` then deletes exactly
/// that. A rule given without a profile, and no rule at all, are clear errors (exit 2).
#[tokio::test(flavor = "multi_thread")]
async fn prune_previews_then_deletes() {
    let e = env(|c| c.payload_size = 50_000).await;
    let mut saved = Vec::new();
    for _ in 0..3 {
        saved.push(backup(&e, "visser").await);
    }
    let args = ["prune", "--profile", "visser", "--keep-last", "1", "--json"];
    let dry = e.demo(&[&args[..], &["--dry-run"]].concat()).await;
    assert_succeeded(&dry);
    let would: Vec<String> = (json_lines(&dry.stdout).iter())
        .map(|l| {
            assert_eq!(l["action"], "would_remove");
            l["path"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(would.len(), 2);
    assert!(
        saved.iter().all(|p| p.exists()),
        "a dry run deletes nothing"
    );

    let done = e.demo(&args).await;
    assert_succeeded(&done);
    let removed: Vec<String> = (json_lines(&done.stdout).iter())
        .map(|l| l["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(removed, would, "deletes what the dry run named");
    assert!(!saved[0].exists() && !saved[1].exists() && saved[2].exists());

    let no_profile = e.demo(&["prune", "--keep-last", "1"]).await;
    assert_eq!(no_profile.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_profile.stderr).contains("--profile NAME"));
    let no_rule = e.demo(&["prune"]).await;
    assert_eq!(no_rule.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_rule.stderr).contains("every backup is kept"));
}

/// `kluis prune` takes the klant's turn, as the app's pruning after a save does: while
/// another Kluis holds it (a backup of that klant running), nothing is deleted and it says
/// so (exit 2); once the turn is free, it prunes.
#[tokio::test(flavor = "multi_thread")]
async fn prune_waits_for_the_klants_turn() {
    let e = env(|c| c.payload_size = 20_000).await;
    let saved = [backup(&e, "visser").await, backup(&e, "visser").await];
    let history = kluis_core::History::open(&e.dir.path().join("history.sqlite3")).unwrap();
    let key = history.ad_hoc_klanten().unwrap().remove(0).0;
    let turn = kluis_profiles::take_turn(&history, &key).unwrap().unwrap();

    let args = ["prune", "--profile", "visser", "--keep-last", "1"];
    let busy = e.demo(&args).await;
    assert_eq!(busy.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&busy.stderr).contains("a backup of it is running"));
    assert!(
        saved.iter().all(|p| p.exists()),
        "nothing deleted beside it"
    );

    drop(turn);
    assert_succeeded(&e.demo(&args).await);
    assert!(!saved[0].exists() && saved[1].exists());
}

/// `kluis report --csv` lists the period's backups, which parse back to what `backup --json`
/// said of each; `--html --out` writes one printable page, owner-only; a day that is not one
/// is a usage error.
#[tokio::test(flavor = "multi_thread")]
async fn report_lists_the_periods_backups() {
    let e = env(|c| c.payload_size = 20_000).await;
    let mut made = Vec::new();
    for label in ["bakker", "visser"] {
        let output = e.backup(&["--profile", label, "--json"]).await;
        assert_succeeded(&output);
        made.push(json_lines(&output.stdout).remove(0));
    }
    let today = jiff::Zoned::now().date().to_string();
    let output = e
        .demo(&["report", "--csv", "--from", &today, "--to", &today])
        .await;
    assert_succeeded(&output);
    let mut reader = csv::Reader::from_reader(output.stdout.as_slice());
    let headers = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    let column = |row: &csv::StringRecord, name: &str| {
        row[headers.iter().position(|h| h == name).unwrap()].to_string()
    };
    for (row, line) in rows.iter().zip(&made) {
        assert_eq!(column(row, "job"), line["job"].as_str().unwrap());
        assert_eq!(column(row, "sha256"), line["sha256"].as_str().unwrap());
        assert_eq!(column(row, "path"), line["path"].as_str().unwrap());
        assert_eq!(column(row, "bytes"), "20000");
        assert_eq!(column(row, "status"), "saved");
    }
    assert_eq!(column(&rows[0], "klant"), "bakker");

    let page = e.dir.path().join("report.html");
    let html = e
        .demo(&["report", "--html", "--out", page.to_str().unwrap()])
        .await;
    assert_succeeded(&html);
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(text.contains(made[1]["sha256"].as_str().unwrap()));
    assert_eq!(text.matches("<section class=\"klant\">").count(), 2);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&page).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "owner-only");
    }
    let bad = e.demo(&["report", "--from", "24-11-2026"]).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("YYYY-MM-DD"));
}

/// `backup --encrypt-passphrase` saves `….age` (no plain file anywhere in the folder), which
/// `kluis verify` checks as it is on disk and `kluis decrypt` restores byte for byte (the
/// digest `backup --json` reported); a wrong passphrase is refused, and nothing is decrypted
/// over a file that is there.
#[tokio::test(flavor = "multi_thread")]
async fn an_encrypted_backup_is_decrypted_to_what_was_sent() {
    let e = env(|c| c.payload_size = 1_000_003).await;
    let passphrase = (
        "KLUIS_ENCRYPTION_PASSPHRASE",
        "een lange geheime zin voor kluis",
    );
    let out = e.out();
    let args = [
        "backup",
        "--out",
        out.to_str().unwrap(),
        "--json",
        "--encrypt-passphrase",
    ];
    let output = e.demo_with(&args, &[passphrase]).await;
    assert_succeeded(&output);
    let line = &json_lines(&output.stdout)[0];
    let file = PathBuf::from(line["path"].as_str().unwrap());
    assert!(file.to_str().unwrap().ends_with(".age"), "{file:?}");
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        1,
        "only the encrypted file"
    );
    assert_ne!(line["encrypted"]["sha256"], line["sha256"]);
    assert_succeeded(&e.demo(&["verify"]).await);

    let restored = e.dir.path().join("restored");
    let decrypt = [
        "decrypt",
        file.to_str().unwrap(),
        "--out",
        restored.to_str().unwrap(),
    ];
    let wrong = e
        .demo_with(
            &decrypt,
            &[("KLUIS_ENCRYPTION_PASSPHRASE", "niet de goede zin hoor")],
        )
        .await;
    assert_eq!(
        wrong.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&wrong.stderr)
    );
    // Named relative to the folder it is in: still found in the history and checked.
    let mut relative = e.command(&[
        "decrypt",
        file.file_name().unwrap().to_str().unwrap(),
        "--out",
        restored.to_str().unwrap(),
    ]);
    relative.current_dir(&out).env(passphrase.0, passphrase.1);
    let done = tokio::task::spawn_blocking(move || relative.output().unwrap())
        .await
        .unwrap();
    assert_succeeded(&done);
    let said = String::from_utf8_lossy(&done.stderr);
    assert!(said.contains("its SHA-256 is the one recorded"), "{said}");
    let plain = PathBuf::from(String::from_utf8_lossy(&done.stdout).trim());
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(std::fs::read(&plain).unwrap()));
    assert_eq!(digest, line["sha256"].as_str().unwrap(), "byte for byte");
    assert_eq!(
        plain.file_name().unwrap().to_str().unwrap(),
        file.file_stem().unwrap().to_str().unwrap()
    );
    let again = e.demo_with(&decrypt, &[passphrase]).await;
    assert_ne!(
        again.status.code(),
        Some(0),
        "nothing decrypted over an existing file"
    );
    assert_eq!(
        std::fs::read_dir(&restored).unwrap().count(),
        1,
        "no part file left"
    );
}
