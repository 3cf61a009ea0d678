//! The CLI tests' environment: a simulator over TLS, a temp folder, `kluis` with the demo
//! settings in a clean environment, and the checks that no secret is printed.

#![allow(dead_code)]

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, DEMO_USERNAME};
use kluis_sim::{Sim, SimConfig};

pub struct Env {
    pub sim: Sim,
    pub ca: tempfile::NamedTempFile,
    pub dir: tempfile::TempDir,
}

pub async fn env(configure: impl FnOnce(&mut SimConfig)) -> Env {
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
    pub fn out(&self) -> std::path::PathBuf {
        let out = self.dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        out
    }

    /// Runs `kluis ARGS` with credentials in the environment (never in arguments).
    pub async fn kluis(&self, args: &[&str], api_key: &str, password: &str) -> Output {
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
    pub async fn demo_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut command = self.command(args);
        command.envs(vars.iter().copied());
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    /// `kluis ARGS` set up with the demo settings in a clean environment (its own history and
    /// profiles file), not yet run.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kluis"));
        command
            .args(args)
            .env_clear()
            .env("KLUIS_BASE_URL", self.sim.base_url().as_str())
            .env("KLUIS_API_KEY", DEMO_API_KEY.to_string())
            .env("KLUIS_USERNAME", DEMO_USERNAME)
            .env("KLUIS_PASSWORD", DEMO_PASSWORD)
            .env("KLUIS_CA_CERT", self.ca.path())
            .env("KLUIS_HISTORY_DB", self.dir.path().join("history.sqlite3"))
            // This test's own (the user's profiles file is never read, nor written).
            .env("KLUIS_PROFILES_FILE", self.dir.path().join("profiles.json"));
        command
    }

    /// `kluis ARGS` without the demo's service settings (base url, api key, username,
    /// password): what it does must come from saved profiles. Not yet run.
    pub fn without_service(&self, args: &[&str]) -> std::process::Command {
        let mut command = self.command(args);
        for var in SERVICE_VARIABLES {
            command.env_remove(var);
        }
        command
    }

    /// Runs `kluis ARGS` on this test's D-Bus session (the keyring's), with saved profiles in
    /// `profiles_file`; with the demo's service settings or (`service_settings` false)
    /// without them.
    pub fn on_session_bus(
        &self,
        args: &[&str],
        service_settings: bool,
        profiles_file: &Path,
    ) -> impl std::future::Future<Output = Output> + 'static {
        let bus = std::env::var("DBUS_SESSION_BUS_ADDRESS").expect("a D-Bus session");
        let mut command = match service_settings {
            true => self.command(args),
            false => self.without_service(args),
        };
        command
            .env("DBUS_SESSION_BUS_ADDRESS", bus)
            .env("KLUIS_PROFILES_FILE", profiles_file);
        async move {
            tokio::task::spawn_blocking(move || command.output().unwrap())
                .await
                .unwrap()
        }
    }

    /// `kluis backup --out <out> EXTRA…` with the demo settings.
    pub async fn backup(&self, extra: &[&str]) -> Output {
        let out = self.out();
        let mut args = vec!["backup", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.demo(&args).await
    }

    pub async fn demo(&self, args: &[&str]) -> Output {
        self.kluis(args, &DEMO_API_KEY.to_string(), DEMO_PASSWORD)
            .await
    }
}

/// No api_key, password or token in stdout or stderr (debug logging on): the given secrets,
/// and no UUID at all (tokens and webhook ids are UUIDs) except Kluis's own job ids.
pub fn assert_no_secrets(output: &Output, secrets: &[&str]) {
    assert_no_secrets_except(output, secrets, &[]);
}

pub fn assert_no_secrets_except(output: &Output, secrets: &[&str], job_ids: &[&str]) {
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

/// Exit 0; otherwise the failure shows with the command's stderr.
pub fn assert_succeeded(output: &Output) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

pub fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

/// The demo service's settings in the environment (base url, api key, username, password).
pub const SERVICE_VARIABLES: [&str; 4] = [
    "KLUIS_BASE_URL",
    "KLUIS_API_KEY",
    "KLUIS_USERNAME",
    "KLUIS_PASSWORD",
];

/// The secret of the relays that [`start_relay`] starts.
pub const RELAY_SECRET: &str = "cli-relay-secret-0123456789";

/// A kluis-relay over TLS on 127.0.0.1 (in memory); returns its URL and its CA's PEM.
pub async fn start_relay() -> (String, String) {
    let relay = kluis_relay::Relay::new(
        kluis_relay::SqliteStore::in_memory().unwrap(),
        kluis_relay::RelayConfig::new(RELAY_SECRET.into()),
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
    (url, ca.ca_pem())
}

impl Env {
    /// Starts a relay; returns the `--callback` value and a CA bundle that trusts it and the
    /// simulator.
    pub async fn relay(&self) -> (String, String) {
        let (url, ca) = start_relay().await;
        let bundle = self.trust_also(&ca);
        (
            format!("relay={url}"),
            bundle.to_string_lossy().into_owned(),
        )
    }

    /// A CA bundle that trusts the simulator and `pem` (for KLUIS_CA_CERT).
    pub fn trust_also(&self, pem: &str) -> std::path::PathBuf {
        let bundle = self
            .dir
            .path()
            .join(format!("bundle-{}.pem", uuid::Uuid::new_v4().simple()));
        std::fs::write(&bundle, format!("{}{}", self.sim.ca_pem(), pem)).unwrap();
        bundle
    }

    /// The history database the commands write.
    pub fn history(&self) -> kluis_core::History {
        kluis_core::History::open(&self.dir.path().join("history.sqlite3")).unwrap()
    }
}

/// Waits (polling every 10 ms, at most 30 s) until `condition` holds; fails naming `what`.
pub async fn wait_for(what: &str, mut condition: impl FnMut() -> bool + Send + 'static) {
    let met = tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            if condition() {
                return true;
            }
            std::thread::park_timeout(Duration::from_millis(10));
        }
        false
    })
    .await
    .unwrap();
    assert!(met, "timed out waiting until {what}");
}

/// A direct callback through the office's reverse proxy: a free local address for `--listen`
/// and the public https URL of a TLS front (the proxy) that forwards to it.
pub async fn office_proxy() -> (String, String) {
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (proxy, _) = kluis_sim::proxy::tls_front(listen, "office proxy")
        .await
        .unwrap();
    (
        format!("https://127.0.0.1:{proxy}/kluis"),
        listen.to_string(),
    )
}

/// As [`wait_for`], for a condition on this task's own values (the simulator's counters):
/// polled between the runtime's other work.
pub async fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Sends `signal` (e.g. "KILL", "TERM") to `child` and waits for it to end.
pub async fn stop(mut child: std::process::Child, signal: &str) -> std::process::ExitStatus {
    let sent = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap()
}
