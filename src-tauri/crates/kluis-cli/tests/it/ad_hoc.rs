//! Retention without a saved profile keeps to one klant: backups made with flags are told
//! apart by their label, service, username and folder, so `--keep-*` never deletes another
//! folder's or another klant's backups, and a name that could mean two klanten is refused.

use std::path::{Path, PathBuf};

use crate::common::*;
use kluis_sim::config::{Account, DEMO_API_KEY, DEMO_PASSWORD};
use serde_json::Value;

fn saved_path(output: &std::process::Output) -> PathBuf {
    assert_succeeded(output);
    let line: Value = serde_json::from_slice(output.stdout.split(|b| *b == b'\n').next().unwrap())
        .expect("backup --json prints one JSON line");
    PathBuf::from(line["path"].as_str().unwrap())
}

/// `kluis backup --out DIR --json EXTRA…` as `username`.
async fn backup_as(e: &Env, username: &str, dir: &Path, extra: &[&str]) -> PathBuf {
    let mut args = vec!["backup", "--out", dir.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    saved_path(
        &e.demo_with(
            &args,
            &[
                ("KLUIS_USERNAME", username),
                ("KLUIS_API_KEY", &DEMO_API_KEY.to_string()),
                ("KLUIS_PASSWORD", DEMO_PASSWORD),
            ],
        )
        .await,
    )
}

/// The reproduction: `backup --out A`, then `backup --out B --keep-last 1` deleted the
/// backup in A (both were recorded as "default"). Now each folder is its own klant: A's backup
/// stays, and B's rule removes only B's older backup.
#[tokio::test(flavor = "multi_thread")]
async fn keep_last_spares_another_folders_backup() {
    let e = env(|c| c.payload_size = 20_000).await;
    let (a, b) = (e.dir.path().join("A"), e.dir.path().join("B"));
    let in_a = backup_as(&e, "demo", &a, &[]).await;
    let older_in_b = backup_as(&e, "demo", &b, &[]).await;
    let newest_in_b = backup_as(&e, "demo", &b, &["--keep-last", "1"]).await;
    assert!(in_a.exists(), "the backup in another folder is kept");
    assert!(!older_in_b.exists(), "B's own older backup is removed");
    assert!(newest_in_b.exists());
}

/// A script that loops over klanten, each with its own username and folder and
/// `--keep-last 1`, keeps every klant's backup (each run deleted the klant before it).
#[tokio::test(flavor = "multi_thread")]
async fn a_loop_over_klanten_keeps_each_klants_backup() {
    let e = env(|c| {
        c.payload_size = 20_000;
        for username in ["bakker", "visser", "smit"] {
            c.accounts.push(Account {
                username: username.into(),
                ..Account::demo()
            });
        }
    })
    .await;
    let mut saved = Vec::new();
    for round in 0..2 {
        for username in ["bakker", "visser", "smit"] {
            let folder = e.dir.path().join("klanten").join(username);
            let path = backup_as(&e, username, &folder, &["--keep-last", "1"]).await;
            saved.push((round, username, path));
        }
    }
    for (round, username, path) in &saved {
        assert_eq!(
            path.exists(),
            *round == 1,
            "{username}'s backup of round {round}: only its own older one is removed"
        );
    }
    // One folder for all, told apart by username: the same holds.
    let shared = e.dir.path().join("shared");
    let bakker = backup_as(&e, "bakker", &shared, &[]).await;
    let visser = backup_as(&e, "visser", &shared, &["--keep-last", "1"]).await;
    assert!(
        bakker.exists() && visser.exists(),
        "another username's backup is kept"
    );
}

/// `prune`, `report`, `verify` and `history` with a name that means two klanten (one label in
/// two folders) refuse and list both, each by a key that is then accepted; a name that means
/// nothing is an error too, not an empty answer; and backups an older Kluis recorded under a
/// bare label are never pruned by that label.
#[tokio::test(flavor = "multi_thread")]
async fn an_ambiguous_name_is_an_error_not_a_guess() {
    let e = env(|c| c.payload_size = 20_000).await;
    let (a, b) = (e.dir.path().join("A"), e.dir.path().join("B"));
    let in_a = backup_as(&e, "demo", &a, &["--profile", "bakker"]).await;
    let in_b = backup_as(&e, "demo", &b, &["--profile", "bakker"]).await;
    backup_as(&e, "demo", &b, &["--profile", "bakker"]).await;

    for args in [
        &["prune", "--profile", "bakker", "--keep-last", "1"][..],
        &["report", "--profile", "bakker"],
        &["verify", "--profile", "bakker"],
        &["history", "--profile", "bakker"],
    ] {
        let output = e.demo(args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("names 2 klanten"), "{args:?}: {stderr}");
        assert!(stderr.contains(a.to_str().unwrap()) && stderr.contains(b.to_str().unwrap()));
    }
    assert!(in_a.exists() && in_b.exists(), "nothing deleted on a guess");

    // The key the error names picks one klant.
    let refused = e
        .demo(&["prune", "--profile", "bakker", "--keep-last", "1"])
        .await;
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let line = (stderr.lines())
        .find(|l| l.contains(b.to_str().unwrap()))
        .unwrap();
    let key = line.split('"').nth(1).expect("the key in quotes");
    let pruned = e
        .demo(&["prune", "--profile", key, "--keep-last", "1", "--json"])
        .await;
    assert_succeeded(&pruned);
    assert!(!in_b.exists(), "B's older backup is removed");
    assert!(in_a.exists(), "A's is kept");
    let history = e.demo(&["history", "--profile", key]).await;
    assert_succeeded(&history);
    assert_eq!(
        String::from_utf8_lossy(&history.stdout).lines().count(),
        2,
        "B's two backups"
    );
    assert!(String::from_utf8_lossy(&history.stdout).contains("  bakker "));

    let nobody = e.demo(&["report", "--profile", "niemand"]).await;
    assert_eq!(nobody.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&nobody.stderr).contains("No klant is named \"niemand\""));
}

/// Backups an older Kluis recorded under the bare label "default" (several klanten's, in
/// several folders) are listed by that label but never pruned by it.
#[tokio::test(flavor = "multi_thread")]
async fn an_older_label_is_never_pruned() {
    let e = env(|c| c.payload_size = 20_000).await;
    let (a, b) = (e.dir.path().join("A"), e.dir.path().join("B"));
    let in_a = backup_as(&e, "demo", &a, &[]).await;
    let in_b = backup_as(&e, "demo", &b, &[]).await;
    // As an older Kluis recorded them: under "default", with no ad-hoc klant.
    let db = rusqlite::Connection::open(e.dir.path().join("history.sqlite3")).unwrap();
    db.execute_batch("UPDATE jobs SET profile = 'default'; DELETE FROM ad_hoc;")
        .unwrap();
    drop(db);

    let listed = e.demo(&["history", "--profile", "default", "--json"]).await;
    assert_succeeded(&listed);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 2);
    let refused = e
        .demo(&["prune", "--profile", "default", "--keep-last", "1"])
        .await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("older Kluis"));
    assert!(in_a.exists() && in_b.exists(), "nothing deleted");
}
