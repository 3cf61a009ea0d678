//! The `kluis` binary end to end: exit codes, `--json`, history, and no secret in any output.

use std::path::Path;

use crate::common::*;
use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, DEMO_USERNAME, RESTRICTED_API_KEY};
use serde_json::Value;

/// `backup --json` prints exactly one JSON line describing a verified file, exit 0.
#[tokio::test(flavor = "multi_thread")]
async fn backup_json_prints_one_line() {
    let e = env(|c| c.payload_size = 1024 * 1024 + 3).await;
    let out = e.out();
    let output = e
        .demo(&["backup", "--out", out.to_str().unwrap(), "--json"])
        .await;
    assert_succeeded(&output);
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert_eq!(stdout.lines().count(), 1, "exactly one line: {stdout}");
    let line: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let path = Path::new(line["path"].as_str().unwrap());
    assert_eq!(line["bytes"], 1024 * 1024 + 3);
    use sha2::Digest;
    assert_eq!(
        line["sha256"].as_str().unwrap(),
        hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
    );
    assert_eq!(path.parent(), Some(out.as_path()));
    let job = line["job"].as_str().expect("the line names the job");
    assert_no_secrets_except(&output, &[DEMO_PASSWORD], &[job]);

    let history = e.demo(&["history", "--json"]).await;
    assert_eq!(history.status.code(), Some(0));
    let row: serde_json::Value = serde_json::from_str(
        String::from_utf8(history.stdout.clone())
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(row["stage"], "saved");
    assert_eq!(row["sha256"], line["sha256"]);
    assert_no_secrets_except(&history, &[DEMO_PASSWORD], &[row["id"].as_str().unwrap()]);
}

/// Without --json, stdout is the saved path alone.
#[tokio::test(flavor = "multi_thread")]
async fn backup_prints_the_path() {
    let e = env(|_| {}).await;
    let out = e.out();
    let output = e.demo(&["backup", "--out", out.to_str().unwrap()]).await;
    assert_eq!(output.status.code(), Some(0));
    let path = String::from_utf8(output.stdout).unwrap();
    assert!(Path::new(path.trim()).is_file(), "{path}");
}

/// `--out ~/Backups` where Backups does not exist saves into a new folder Backups, under the
/// service's file name, again on the next run (it saved a file named `Backups`, then
/// `Backups (1)`); `--out` with an extension saves that file.
#[tokio::test(flavor = "multi_thread")]
async fn out_to_a_missing_folder_makes_it() {
    let e = env(|_| {}).await;
    let backups = e.dir.path().join("Backups");
    for run in 1..=2 {
        let output = e
            .demo(&["backup", "--out", backups.to_str().unwrap()])
            .await;
        assert_succeeded(&output);
        let saved = std::path::PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        assert_eq!(saved.parent(), Some(backups.as_path()), "run {run}");
        assert!(
            saved.to_string_lossy().ends_with(".zip"),
            "the service's name: {saved:?}"
        );
        assert_eq!(files_in(&backups), run);
    }
    let named = e.dir.path().join("kopie.zip");
    let output = e.demo(&["backup", "--out", named.to_str().unwrap()]).await;
    assert_succeeded(&output);
    assert!(named.is_file(), "a path with an extension is the file");
    let help = e.demo(&["backup", "--help"]).await;
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("has no extension"),
        "--help says the rule: {help}"
    );
}

/// `environment` prints the service's JSON.
#[tokio::test(flavor = "multi_thread")]
async fn environment_prints_json() {
    let e = env(|_| {}).await;
    let output = e.demo(&["environment"]).await;
    assert_eq!(output.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["username"], DEMO_USERNAME);
}

/// Wrong password: exit 3, one clear line, no secret.
#[tokio::test(flavor = "multi_thread")]
async fn wrong_password_exits_3() {
    let e = env(|_| {}).await;
    let out = e.out();
    let output = e
        .kluis(
            &["backup", "--out", out.to_str().unwrap()],
            &DEMO_API_KEY.to_string(),
            "Wr0ngPassw0rd",
        )
        .await;
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refused the api key, username or password"),
        "{stderr}"
    );
    assert_no_secrets(&output, &["Wr0ngPassw0rd"]);
    assert_eq!(files_in(&out), 0);
}

/// An api_key without the backup endpoint: exit 4.
#[tokio::test(flavor = "multi_thread")]
async fn denied_api_key_exits_4() {
    let e = env(|_| {}).await;
    let out = e.out();
    let output = e
        .kluis(
            &["backup", "--out", out.to_str().unwrap()],
            &RESTRICTED_API_KEY.to_string(),
            DEMO_PASSWORD,
        )
        .await;
    assert_eq!(
        output.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_no_secrets(&output, &[DEMO_PASSWORD]);
}

/// No callback before --timeout: exit 5 and an empty --out.
#[tokio::test(flavor = "multi_thread")]
async fn missing_callback_exits_5() {
    let e = env(|c| c.faults.no_callback = true).await;
    let out = e.out();
    let output = e
        .demo(&["backup", "--out", out.to_str().unwrap(), "--timeout", "1"])
        .await;
    assert_eq!(output.status.code(), Some(5));
    assert_eq!(files_in(&out), 0);
}

/// A download that fails: exit 6 and an empty --out.
#[tokio::test(flavor = "multi_thread")]
async fn failed_download_exits_6() {
    let e = env(|c| c.faults.download_status = Some(410)).await;
    let out = e.out();
    let output = e.demo(&["backup", "--out", out.to_str().unwrap()]).await;
    assert_eq!(output.status.code(), Some(6));
    assert_eq!(files_in(&out), 0);
    let history = e.demo(&["history"]).await;
    let table = String::from_utf8_lossy(&history.stdout);
    assert!(table.contains("failed") && table.contains("410"), "{table}");
}

/// Missing settings and bad usage: exit 2.
#[tokio::test(flavor = "multi_thread")]
async fn config_and_usage_errors_exit_2() {
    let e = env(|_| {}).await;
    let out = e.out();
    let bad_url = e
        .kluis(
            &[
                "--base-url",
                "http://example.com/x",
                "backup",
                "--out",
                out.to_str().unwrap(),
            ],
            &DEMO_API_KEY.to_string(),
            DEMO_PASSWORD,
        )
        .await;
    assert_eq!(bad_url.status.code(), Some(2));
    let usage = e.demo(&["backup"]).await;
    assert_eq!(usage.status.code(), Some(2), "--out is required");
    let missing_folder = e
        .demo(&["backup", "--out", "/nonexistent-kluis/x.zip"])
        .await;
    assert_eq!(missing_folder.status.code(), Some(2));
    // --listen is for a direct callback only: without --callback, or with a route that
    // chooses its own address, it would be ignored and the service's callback waited for
    // where nobody listens. (Both were ignored before, --all's run waiting out its timeout.)
    let out = out.to_str().unwrap();
    for callback in [&[][..], &["--callback", "loopback"][..]] {
        for all in [&[][..], &["--all"][..]] {
            let mut args = vec!["backup", "--out", out, "--listen", "127.0.0.1:9"];
            args.extend(callback.iter().chain(all));
            let listen = e.demo(&args).await;
            let said = String::from_utf8_lossy(&listen.stderr);
            assert_eq!(listen.status.code(), Some(2), "{args:?}: {said}");
            assert!(said.contains("--callback"), "{args:?} says why: {said}");
        }
    }
}

/// `--help` warns about --password and never prints environment values.
#[tokio::test(flavor = "multi_thread")]
async fn help_hides_secret_values() {
    let e = env(|_| {}).await;
    let output = e.demo(&["--help"]).await;
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("Discouraged as a flag"), "{help}");
    assert_no_secrets(&output, &[DEMO_PASSWORD]);
}

/// SIGTERM mid-download (a scheduler stopping the job): exit 130, nothing left in --out, and
/// the history row says cancelled.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn terminated_backup_leaves_nothing() {
    let e = env(|c| {
        c.payload_size = 64 * 1024 * 1024;
        c.faults.download_rate = Some(2 * 1024 * 1024);
    })
    .await;
    let out = e.out();
    let child = e
        .command(&["backup", "--out", out.to_str().unwrap()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The download has begun when its hidden part file appears in --out.
    let out_dir = out.clone();
    wait_for("the download starts", move || files_in(&out_dir) > 0).await;
    let status = stop(child, "TERM").await;
    assert_eq!(status.code(), Some(130));
    assert_eq!(files_in(&out), 0, "no part file and no partial backup");
    let history = e.demo(&["history", "--json"]).await;
    let row: Value = serde_json::from_str(
        String::from_utf8_lossy(&history.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (row["stage"].as_str(), row["error_code"].as_str()),
        (Some("failed"), Some("cancelled"))
    );
}

/// `--callback relay=URL` collects the callback from a kluis-relay (secret from the
/// environment); a malformed `--callback` is a usage error.
#[tokio::test(flavor = "multi_thread")]
async fn backup_through_a_relay() {
    let e = env(|_| {}).await;
    let (callback, bundle) = e.relay().await;
    let out = e.out();
    let vars = [
        ("KLUIS_RELAY_SECRET", RELAY_SECRET),
        ("KLUIS_CA_CERT", bundle.as_str()),
    ];
    let output = e
        .demo_with(
            &[
                "backup",
                "--out",
                out.to_str().unwrap(),
                "--callback",
                &callback,
                "--json",
            ],
            &vars,
        )
        .await;
    assert_succeeded(&output);
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_no_secrets_except(
        &output,
        &[RELAY_SECRET, DEMO_PASSWORD],
        &[line["job"].as_str().unwrap()],
    );
    let bad = e
        .demo(&[
            "backup",
            "--out",
            out.to_str().unwrap(),
            "--callback",
            "carrier-pigeon",
        ])
        .await;
    assert_eq!(bad.status.code(), Some(2));
}

/// `callback-test` with the loopback transport reports the round trip.
#[tokio::test(flavor = "multi_thread")]
async fn callback_test_reports_round_trip() {
    let e = env(|_| {}).await;
    let output = e.demo(&["callback-test"]).await;
    assert_succeeded(&output);
    assert!(String::from_utf8_lossy(&output.stdout)
        .contains("came back through the loopback transport"));
    let missing_listen = e
        .demo(&[
            "callback-test",
            "--callback",
            "direct=https://office.example/kluis",
        ])
        .await;
    assert_eq!(missing_listen.status.code(), Some(2));
}

/// `--callback webhook-site` warns that a third party sees the id, and works (against the
/// simulator's fake webhook.site, named by KLUIS_WEBHOOK_SITE_URL).
#[tokio::test(flavor = "multi_thread")]
async fn backup_through_webhook_site_warns() {
    let e = env(|_| {}).await;
    let out = e.out();
    let site = e.sim.webhook_site_url().to_string();
    let output = e
        .demo_with(
            &[
                "backup",
                "--out",
                out.to_str().unwrap(),
                "--callback",
                "webhook-site",
            ],
            &[("KLUIS_WEBHOOK_SITE_URL", site.as_str())],
        )
        .await;
    assert_succeeded(&output);
    assert!(String::from_utf8_lossy(&output.stderr).contains("third party"));
    assert_no_secrets(&output, &[DEMO_PASSWORD]);
}

/// A tunnel without cloudflared installed: exit 2 with what to do, before any backup starts.
#[tokio::test(flavor = "multi_thread")]
async fn tunnel_without_cloudflared_exits_2() {
    let e = env(|_| {}).await;
    let output = e
        .backup(&["--callback", "tunnel=/nonexistent/cloudflared"])
        .await;
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("Install cloudflared"));
    assert_eq!(e.sim.stats().backups_started, 0);
}

/// `--limit-rate` holds the download to its MB/s (6 MB at 2 MB/s cannot take less than
/// 2.75 s after the quarter-second burst; unlimited it takes a fraction of that), and office
/// hours that cannot be read are a usage error.
#[tokio::test(flavor = "multi_thread")]
async fn limit_rate_slows_the_download() {
    let e = env(|c| c.payload_size = 6_000_000).await;
    let started = std::time::Instant::now();
    let output = e.backup(&["--limit-rate", "2"]).await;
    assert_succeeded(&output);
    let seconds = started.elapsed().as_secs_f64();
    assert!(seconds >= 2.75, "6 MB at 2 MB/s took {seconds:.2} s");
    let bad = e
        .backup(&["--limit-rate", "2", "--office-hours", "8 to 6"])
        .await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("HH:MM-HH:MM"));
}

/// `kluis demo` saves a verified backup from its own simulator into `--out` and records it in
/// the demo's own history (`demo` beside Kluis's data, as the app's demo): Kluis's own history
/// is neither made nor touched.
#[tokio::test]
async fn the_demo_keeps_to_its_own_history() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_kluis"))
        .args(["demo", "--size-mib", "1", "--out"])
        .arg(&out)
        .env_remove("KLUIS_HISTORY_DB")
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", &data)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let saved: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert_eq!(saved.len(), 1, "one backup saved");
    assert!(
        data.join("kluis/demo/history.sqlite3").exists(),
        "recorded in the demo's history"
    );
    assert!(
        !data.join("kluis/history.sqlite3").exists(),
        "Kluis's own history untouched"
    );
}
