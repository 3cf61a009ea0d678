//! The attack suite, end to end through the `kluis` binary: each test reproduces a fault of
//! the audit (issue 8) and fails on 197df1f.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::common::*;
use kluis_core::callback::Reattach;
use kluis_core::{Destination, Journal, Owner};
use kluis_sim::config::DEMO_API_KEY;

const PASSWORD: &str = "Kw@kkel Zomerzon!/ü+&=x";

/// Any form the password may take in an echo (raw, percent-encoded, JSON, base64).
fn password_leaks(text: &str) -> bool {
    text.contains("kkel") || text.contains("Zomerzon") || text.contains("S3dAa2tlbC")
}

/// A proxy or service that echoes the sign-in request (an error page with status 500, or a 200
/// that is not JSON) must not carry the password to stderr, `--json` or the history file.
#[tokio::test(flavor = "multi_thread")]
async fn an_echoed_password_reaches_no_output_and_no_file() {
    for status in [500u16, 200] {
        let e = env(|c| {
            c.faults.echo_authenticate = Some(status);
            c.accounts[0].password = PASSWORD.into();
        })
        .await;
        let out = e.out();
        let api_key = DEMO_API_KEY.to_string();
        for json in [false, true] {
            let mut args = vec!["backup", "--out", out.to_str().unwrap()];
            if json {
                args.push("--json");
            }
            let output = e.kluis(&args, &api_key, PASSWORD).await;
            assert_ne!(output.status.code(), Some(0));
            let shown = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(!password_leaks(&shown), "{status}: {shown}");
            assert!(
                shown.contains("«hidden»"),
                "the echo was shown, scrubbed: {shown}"
            );
            assert_no_secrets(&output, &[PASSWORD]);
        }
        let db = std::fs::read(e.dir.path().join("history.sqlite3")).unwrap();
        assert!(
            !password_leaks(&String::from_utf8_lossy(&db)),
            "history holds it"
        );
        let history = e.history().list(None, 10).unwrap();
        assert!(history.iter().all(|h| h
            .error_message
            .as_deref()
            .is_some_and(|m| !password_leaks(m))));
    }
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Under umask 022 (the usual default, which makes files 0644) everything Kluis creates is
/// owner-only: the backup, the history database and its folder, the claims folder.
#[tokio::test(flavor = "multi_thread")]
async fn everything_created_is_owner_only_under_umask_022() {
    let e = env(|_| {}).await;
    let out = e.out();
    let data = e.dir.path().join("data/kluis");
    let db = data.join("history.sqlite3");
    let base = e.command(&["backup", "--out", out.to_str().unwrap()]);
    let mut command = Command::new("sh");
    command.env_clear();
    for (key, value) in base.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    command
        .env("KLUIS_HISTORY_DB", &db)
        .arg("-c")
        .arg("umask 022; exec \"$0\" \"$@\"")
        .arg(base.get_program())
        .args(base.get_args());
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_succeeded(&output);
    let saved = std::path::PathBuf::from(String::from_utf8(output.stdout).unwrap().trim());
    assert_eq!(mode(&saved), 0o600, "the backup");
    assert_eq!(mode(&db), 0o600, "the history database");
    assert_eq!(mode(&data), 0o700, "the data folder");
    assert_eq!(
        mode(&e.dir.path().join("data")),
        0o700,
        "its parent, also created"
    );
    assert_eq!(
        mode(&data.join("history.sqlite3.running")),
        0o700,
        "the claims"
    );
    for side in ["history.sqlite3-wal", "history.sqlite3-shm"] {
        if data.join(side).exists() {
            assert_eq!(mode(&data.join(side)), 0o600, "{side}");
        }
    }
}

/// `kluis resume` leaves a backup the app started to the app (on 197df1f it swept it and the
/// app then lost its staged file); `--include-app` takes it on purpose.
#[tokio::test(flavor = "multi_thread")]
async fn resume_leaves_the_apps_backups_to_the_app() {
    let e = env(|_| {}).await;
    let history = e.history();
    let id = uuid::Uuid::new_v4();
    history
        .start(
            id,
            &kluis_core::KlantKey::profile("klant-in-the-app"),
            "loopback",
        )
        .unwrap();
    let journal = Journal {
        owner: Some(Owner::App),
        base_url: e.sim.base_url().to_string(),
        destination: Destination::Folder(e.out()),
        callback_deadline_ms: kluis_core::clock::now_ms() + 60_000,
        reattach: None::<Reattach>,
        download: None,
        encryption: None,
    };
    history.write_journal(id, &journal).unwrap();
    drop(history);

    let left = e.demo(&["resume"]).await;
    assert_succeeded(&left);
    assert!(
        String::from_utf8_lossy(&left.stderr).contains("started by the Kluis app"),
        "{}",
        String::from_utf8_lossy(&left.stderr)
    );
    let entry = e.history().get(id).unwrap().unwrap();
    assert_eq!(entry.stage, "requested", "the app's backup is untouched");

    let taken = e.demo(&["resume", "--include-app"]).await;
    assert_ne!(taken.status.code(), Some(0));
    let entry = e.history().get(id).unwrap().unwrap();
    assert_eq!(
        (
            entry.stage.as_str(),
            entry.error_code.map(kluis_core::Code::as_str)
        ),
        ("failed", Some("not_resumable")),
        "taken on purpose"
    );
}

/// A `--timeout` near u64::MAX is no panic after the POST: the backup is saved.
#[tokio::test(flavor = "multi_thread")]
async fn an_enormous_timeout_does_not_panic() {
    let e = env(|_| {}).await;
    let output = e.backup(&["--timeout", &u64::MAX.to_string()]).await;
    assert_succeeded(&output);
}
