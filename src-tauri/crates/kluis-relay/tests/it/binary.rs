//! The `kluis-relay` binary as an operator runs it: `tenant add|list|rotate|revoke`, then
//! serving with a tenant key, JSON logs that never hold a callback's query, `/metrics` on its
//! own listener only, and a stop (SIGTERM) that answers a parked long-poll "poll again".

#![cfg(unix)]

use std::path::Path;
use std::process::Stdio;

use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

const BIN: &str = env!("CARGO_BIN_EXE_kluis-relay");

/// Runs `kluis-relay ARGS --data DIR`: exit code, stdout, stderr.
fn run(data: &Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(BIN)
        .args(args)
        .arg("--data")
        .arg(data)
        .env_remove("KLUIS_RELAY_SECRET")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn listed(data: &Path) -> Value {
    let (code, out, _) = run(data, &["tenant", "list", "--json"]);
    assert_eq!(code, 0);
    serde_json::from_str(&out).unwrap()
}

/// `tenant add` prints a key once (stdout, nothing else there) and keeps only its hash; names
/// are checked and taken once; `rotate` adds a key with an overlap; `revoke` ends it all.
#[test]
fn tenants_are_administered_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, key, advice) = run(dir.path(), &["tenant", "add", "acme", "--max-inboxes", "7"]);
    assert_eq!(code, 0, "{advice}");
    let key = key.trim().to_string();
    assert!(
        key.starts_with("klr_") && key.len() > 60,
        "one key on stdout: {key}"
    );
    assert!(advice.contains("shown only now"), "{advice}");
    let db = std::fs::read(dir.path().join("relay.sqlite3")).unwrap();
    let secret = key.rsplit('_').next().unwrap();
    assert!(
        !db.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "the key's secret is not in the database"
    );

    assert_eq!(run(dir.path(), &["tenant", "add", "acme"]).0, 1, "taken");
    assert_eq!(
        run(dir.path(), &["tenant", "add", "Not A Name"]).0,
        2,
        "bad name"
    );

    let acme = listed(dir.path())
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "acme")
        .cloned()
        .unwrap();
    assert_eq!(
        (
            acme["live_keys"].as_u64(),
            acme["quota"]["max_inboxes"].as_u64()
        ),
        (Some(1), Some(7))
    );

    let (code, rotated, _) = run(dir.path(), &["tenant", "rotate", "acme", "--overlap", "1h"]);
    assert_eq!(code, 0);
    assert_ne!(rotated.trim(), key);
    let acme = &listed(dir.path())[1];
    assert_eq!(acme["live_keys"], 2, "both keys during the overlap");
    assert_eq!(
        run(
            dir.path(),
            &["tenant", "rotate", "acme", "--overlap", "soon"]
        )
        .0,
        2
    );

    assert_eq!(run(dir.path(), &["tenant", "revoke", "acme"]).0, 0);
    let acme = &listed(dir.path())[1];
    assert!(
        acme["revoked_ms"].is_i64() && acme["live_keys"] == 0,
        "{acme}"
    );
    assert_eq!(
        run(dir.path(), &["tenant", "revoke", "acme"]).0,
        1,
        "already revoked"
    );
    let (_, table, _) = run(dir.path(), &["tenant", "list"]);
    assert!(
        table.contains("acme") && table.contains("revoked"),
        "{table}"
    );
}

/// Waits for the JSON log line whose message is `message` and returns its `addr` field.
async fn logged_addr(
    lines: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    message: &str,
) -> String {
    while let Some(line) = lines.recv().await {
        let json: Value =
            serde_json::from_str(&line).unwrap_or_else(|_| panic!("a JSON line: {line}"));
        if json["fields"]["message"] == message {
            return json["fields"]["addr"].as_str().unwrap().to_string();
        }
    }
    panic!("the relay ended before logging {message:?}");
}

/// Serving with tenant keys only: a callback is stored and counted on `/metrics` (which the
/// public listener does not serve), the logs are JSON without the callback's id, and SIGTERM
/// answers the parked long-poll 503 + Retry-After with code "stopping", then exits 0.
#[tokio::test]
async fn serves_tenants_and_stops_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let (_, key, _) = run(dir.path(), &["tenant", "add", "acme"]);
    let key = key.trim().to_string();
    let mut child = tokio::process::Command::new(BIN)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
            "--data",
        ])
        .arg(dir.path())
        .env_remove("KLUIS_RELAY_SECRET")
        .env("KLUIS_LOG", "info")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (tx, mut lines) = tokio::sync::mpsc::unbounded_channel();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let all_lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = all_lines.clone();
    let reader = tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            keep.lock().unwrap().push(line.clone());
            let _ = tx.send(line);
        }
    });
    let metrics_addr = logged_addr(&mut lines, "serving /metrics").await;
    let base = format!("http://{}", logged_addr(&mut lines, "serving").await);
    let client = reqwest::Client::new();

    let created: Value = client
        .post(format!("{base}/api/inboxes"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (inbox, path) = (
        created["inbox"].as_str().unwrap(),
        created["callback_path"].as_str().unwrap(),
    );
    let secret_id = uuid::Uuid::new_v4().to_string();
    let stored = client
        .get(format!("{base}{path}?id={secret_id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(stored.status(), StatusCode::OK);

    let poll = tokio::spawn({
        let (client, key) = (client.clone(), key.clone());
        let url = format!("{base}/api/inboxes/{inbox}/events?after=999999&wait=30");
        async move { client.get(url).bearer_auth(key).send().await.unwrap() }
    });
    loop {
        let stats: Value = client
            .get(format!("{base}/api/stats"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if stats["polls_waiting"] == 1 {
            break;
        }
        tokio::task::yield_now().await;
    }
    let metrics = client
        .get(format!("http://{metrics_addr}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("kluis_relay_callbacks_stored_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("kluis_relay_long_polls_parked 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("kluis_relay_delivery_latency_seconds_bucket"),
        "{metrics}"
    );
    let public = client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(
        public.status(),
        StatusCode::NOT_FOUND,
        "no metrics on the public listener"
    );
    let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);

    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGTERM) };
    let answered = poll.await.unwrap();
    assert_eq!(answered.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(answered.headers().contains_key("retry-after"));
    assert_eq!(answered.json::<Value>().await.unwrap()["code"], "stopping");
    let status = child.wait().await.unwrap();
    assert!(status.success(), "stopped cleanly: {status}");
    reader.await.unwrap();

    let lines = all_lines.lock().unwrap();
    assert!(
        lines.iter().any(|l| l.contains("callback stored")),
        "{lines:?}"
    );
    for line in lines.iter() {
        assert!(serde_json::from_str::<Value>(line).is_ok(), "JSON: {line}");
        assert!(
            !line.contains(&secret_id),
            "the callback's id is never logged: {line}"
        );
        assert!(!line.contains(&key), "nor the key: {line}");
    }
}
