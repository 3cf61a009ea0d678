//! What Kluis keeps, from the command line: `kluis verify` over backups made from the
//! simulator over TLS, their files then changed, cut short and deleted.

use std::path::PathBuf;

mod common;

use common::*;
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
