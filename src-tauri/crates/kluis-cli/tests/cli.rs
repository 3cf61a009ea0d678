//! The `kluis` binary end to end: exit codes, `--json`, history, and no secret in any output.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, DEMO_USERNAME, RESTRICTED_API_KEY};
use kluis_sim::{Sim, SimConfig};
use serde_json::Value;

struct Env {
    sim: Sim,
    ca: tempfile::NamedTempFile,
    dir: tempfile::TempDir,
}

async fn env(configure: impl FnOnce(&mut SimConfig)) -> Env {
    let mut config = SimConfig::default();
    config.faults.callback_delay = Duration::from_millis(30);
    configure(&mut config);
    let sim = Sim::start(config).await.unwrap();
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), sim.ca_pem()).unwrap();
    Env {
        sim,
        ca,
        dir: tempfile::tempdir().unwrap(),
    }
}

impl Env {
    fn out(&self) -> std::path::PathBuf {
        let out = self.dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        out
    }

    /// Runs `kluis ARGS` with credentials in the environment (never in arguments).
    async fn kluis(&self, args: &[&str], api_key: &str, password: &str) -> Output {
        self.demo_with(
            args,
            &[
                ("KLUIS_API_KEY", api_key),
                ("KLUIS_PASSWORD", password),
                ("KLUIS_LOG", "debug"),
            ],
        )
        .await
    }

    /// Runs `kluis ARGS` with the demo settings, `vars` added or replacing them.
    async fn demo_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut command = self.command(args);
        command.envs(vars.iter().copied());
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    /// `kluis ARGS` set up with the demo settings in a clean environment, not yet run.
    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kluis"));
        command
            .args(args)
            .env_clear()
            .env("KLUIS_BASE_URL", self.sim.base_url().as_str())
            .env("KLUIS_API_KEY", DEMO_API_KEY.to_string())
            .env("KLUIS_USERNAME", DEMO_USERNAME)
            .env("KLUIS_PASSWORD", DEMO_PASSWORD)
            .env("KLUIS_CA_CERT", self.ca.path())
            .env("KLUIS_HISTORY_DB", self.dir.path().join("history.sqlite3"));
        command
    }

    async fn demo(&self, args: &[&str]) -> Output {
        self.kluis(args, &DEMO_API_KEY.to_string(), DEMO_PASSWORD)
            .await
    }
}

/// No api_key, password or token in stdout or stderr (debug logging on): the given secrets,
/// and no UUID at all (tokens and webhook ids are UUIDs) except Kluis's own job ids.
fn assert_no_secrets(output: &Output, secrets: &[&str]) {
    assert_no_secrets_except(output, secrets, &[]);
}

fn assert_no_secrets_except(output: &Output, secrets: &[&str], job_ids: &[&str]) {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for secret in secrets {
        assert!(!all.contains(secret), "output reveals a secret: {all}");
    }
    assert!(
        !all.chars().collect::<Vec<_>>().windows(36).any(|w| {
            let s: String = w.iter().collect();
            uuid::Uuid::parse_str(&s).is_ok() && s.contains('-') && !job_ids.contains(&s.as_str())
        }),
        "output shows a UUID (token, key or webhook id): {all}"
    );
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

/// `backup --json` prints exactly one JSON line describing a verified file, exit 0.
#[tokio::test(flavor = "multi_thread")]
async fn backup_json_prints_one_line() {
    let e = env(|c| c.payload_size = 1024 * 1024 + 3).await;
    let out = e.out();
    let output = e
        .demo(&["backup", "--out", out.to_str().unwrap(), "--json"])
        .await;
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    assert_no_secrets(&output, &[DEMO_PASSWORD]);

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
    let mut child = e
        .command(&["backup", "--out", out.to_str().unwrap()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the download has begun: its hidden part file appears in --out.
    let out_dir = out.clone();
    let started = tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if files_in(&out_dir) > 0 {
                return true;
            }
            std::thread::park_timeout(Duration::from_millis(10));
        }
        false
    })
    .await
    .unwrap();
    assert!(started, "the download never started");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
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
    let relay = kluis_relay::Relay::new(
        kluis_relay::Store::in_memory().unwrap(),
        kluis_relay::RelayConfig::new("cli-relay-secret-0123456789".into()),
    );
    let ca = kluis_https::LocalCa::generate("relay CA").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(kluis_https::serve_tls(
        listener,
        ca.server_config(&["127.0.0.1"]).unwrap(),
        kluis_relay::router(relay),
        Default::default(),
        std::future::pending(),
    ));
    // One PEM bundle trusts both the simulator and the relay.
    let bundle = e.dir.path().join("bundle.pem");
    std::fs::write(&bundle, format!("{}{}", e.sim.ca_pem(), ca.ca_pem())).unwrap();
    let out = e.out();
    let callback = format!("relay={url}");
    let vars = [
        ("KLUIS_RELAY_SECRET", "cli-relay-secret-0123456789"),
        ("KLUIS_CA_CERT", bundle.to_str().unwrap()),
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
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_no_secrets(&output, &["cli-relay-secret-0123456789", DEMO_PASSWORD]);
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
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("third party"));
    assert_no_secrets(&output, &[DEMO_PASSWORD]);
}

/// A tunnel without cloudflared installed: exit 2 with what to do, before any backup starts.
#[tokio::test(flavor = "multi_thread")]
async fn tunnel_without_cloudflared_exits_2() {
    let e = env(|_| {}).await;
    let out = e.out();
    let output = e
        .demo(&[
            "backup",
            "--out",
            out.to_str().unwrap(),
            "--callback",
            "tunnel=/nonexistent/cloudflared",
        ])
        .await;
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("Install cloudflared"));
    assert_eq!(e.sim.stats().backups_started, 0);
}
