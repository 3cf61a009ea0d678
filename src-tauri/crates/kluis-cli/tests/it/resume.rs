//! Backups that survive a stopped CLI: `kluis backup` is killed after the service's 202 (or in
//! the middle of the download), and `kluis resume` saves the verified file where the first
//! command was told to — for each transport whose callback outlives the process.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use crate::common::*;
use kluis_sim::config::DEMO_PASSWORD;
use kluis_sim::SimConfig;
use serde_json::Value;

/// A simulator that holds its callbacks until the test lets them go
/// (`e.sim.release_callbacks()`), so the CLI is surely stopped before one arrives, however
/// slow or fast the machine (a delay of 1.5 s made that only likely).
async fn held_env(configure: impl FnOnce(&mut SimConfig)) -> Env {
    env(|c| {
        c.faults.hold_callbacks = true;
        configure(c);
    })
    .await
}

impl Env {
    /// Starts `kluis backup --out OUT --json ARGS` in the background.
    fn start_backup(&self, args: &[&str], vars: &[(&str, &str)]) -> Child {
        let out = self.out();
        let mut all = vec!["backup", "--out", out.to_str().unwrap(), "--json"];
        all.extend_from_slice(args);
        self.command(&all)
            .envs(vars.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Waits until the newest job in the history has reached `stage`; returns its id.
    async fn wait_for_stage(&self, stage: &'static str) -> String {
        let db = self.dir.path().join("history.sqlite3");
        let reached = move || {
            db.exists()
                && kluis_core::History::open(&db)
                    .and_then(|h| h.list(None, 1))
                    .is_ok_and(|rows| rows.first().is_some_and(|r| r.stage == stage))
        };
        wait_for(stage, reached).await;
        self.history().list(None, 1).unwrap()[0].id.clone()
    }
}

/// A relay backup started and waiting for its callback: the process, the job's id and the CA
/// bundle that trusts the relay.
async fn relay_job_waiting(e: &Env) -> (Child, String, String) {
    let (callback, bundle) = e.relay().await;
    let vars = [
        ("KLUIS_RELAY_SECRET", RELAY_SECRET),
        ("KLUIS_CA_CERT", bundle.as_str()),
    ];
    let child = e.start_backup(&["--callback", &callback], &vars);
    let job = e.wait_for_stage("accepted").await;
    (child, job, bundle)
}

/// Starts `kluis backup ARGS` with `vars` and `kill -9`s it once a megabyte is in its part
/// file; returns the job's id.
async fn kill_mid_download(e: &Env, args: &[&str], vars: &[(&str, &str)]) -> String {
    let child = e.start_backup(args, vars);
    let watched = e.out();
    wait_for("a megabyte is downloaded", move || {
        parts_in(&watched).iter().any(|(_, len)| *len > 1024 * 1024)
    })
    .await;
    let job = e.history().list(None, 1).unwrap()[0].id.clone();
    stop(child, "KILL").await;
    job
}

/// The JSON lines of `kluis resume --json`.
fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// The one saved job of `output`: checks it is `job`, lies in `out` and matches its SHA-256.
fn assert_saved(output: &Output, job: &str, out: &Path) -> PathBuf {
    assert_succeeded(output);
    let lines = lines(output);
    assert_eq!(lines.len(), 1, "one line per finished job: {lines:?}");
    assert_eq!(lines[0]["job"], job);
    let path = PathBuf::from(lines[0]["path"].as_str().unwrap());
    assert_eq!(path.parent(), Some(out), "saved where `backup` was told");
    use sha2::Digest;
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(lines[0]["bytes"], bytes.len() as u64);
    assert_eq!(
        lines[0]["sha256"].as_str().unwrap(),
        hex::encode(sha2::Sha256::digest(&bytes))
    );
    assert_eq!(
        hex::encode(kluis_sim::payload::sha256(bytes.len() as u64)),
        hex::encode(sha2::Sha256::digest(&bytes)),
        "the file is the service's backup"
    );
    path
}

/// Hidden part files in `dir`.
fn parts_in(dir: &Path) -> Vec<(PathBuf, u64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .map(|e| (e.path(), e.metadata().map(|m| m.len()).unwrap_or(0)))
        .collect()
}

/// Relay: `kill -9` after the 202; the callback arrives at the relay meanwhile; `resume`
/// collects it, saves the file, and a second `resume` finds nothing to do. The POST is not
/// sent again.
#[tokio::test(flavor = "multi_thread")]
async fn relay_backup_survives_a_kill_after_the_202() {
    let e = held_env(|_| {}).await;
    let (child, job, bundle) = relay_job_waiting(&e).await;
    let vars = [
        ("KLUIS_RELAY_SECRET", RELAY_SECRET),
        ("KLUIS_CA_CERT", bundle.as_str()),
    ];
    stop(child, "KILL").await;
    e.sim.release_callbacks();

    let resumed = e.demo_with(&["resume", "--json"], &vars).await;
    assert_saved(&resumed, &job, &e.out());
    assert_no_secrets_except(&resumed, &[RELAY_SECRET, DEMO_PASSWORD], &[&job]);
    assert_eq!(
        e.sim.stats().backups_started,
        1,
        "the backup was asked for once"
    );
    let row = &e.history().list(None, 1).unwrap()[0];
    assert_eq!(
        (row.stage.as_str(), row.transport.as_str()),
        ("saved", "relay")
    );

    let again = e.demo_with(&["resume", "--json"], &vars).await;
    assert_eq!(again.status.code(), Some(0));
    assert!(lines(&again).is_empty(), "nothing left to resume");
}

/// Relay: `kill -9` in the middle of the download leaves the hidden part file; `resume`
/// continues it with a range request instead of starting over, and leaves only the backup.
#[tokio::test(flavor = "multi_thread")]
async fn download_continues_after_a_kill() {
    let e = env(|c| {
        c.payload_size = 24 * 1024 * 1024;
        c.faults.download_rate = Some(4 * 1024 * 1024);
    })
    .await;
    let (callback, bundle) = e.relay().await;
    let vars = [
        ("KLUIS_RELAY_SECRET", RELAY_SECRET),
        ("KLUIS_CA_CERT", bundle.as_str()),
    ];
    let job = kill_mid_download(&e, &["--callback", &callback], &vars).await;
    let out = e.out();
    assert_eq!(
        parts_in(&out).len(),
        1,
        "the killed process left its part file"
    );
    e.sim.set_faults(|f| f.download_rate = None);

    let resumed = e.demo_with(&["resume", "--json"], &vars).await;
    let path = assert_saved(&resumed, &job, &out);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 24 * 1024 * 1024);
    assert_eq!(
        e.sim.stats().partial_downloads,
        1,
        "the download was continued"
    );
    assert!(parts_in(&out).is_empty(), "no part file left");
    assert_eq!(files_in(&out), 1);
}

/// webhook.site: SIGTERM (a scheduler's stop) while waiting exits 75 and keeps the job;
/// `resume` polls the same token and finishes it.
#[tokio::test(flavor = "multi_thread")]
async fn webhook_site_backup_survives_sigterm() {
    let e = held_env(|_| {}).await;
    let site = e.sim.webhook_site_url().to_string();
    let vars = [("KLUIS_WEBHOOK_SITE_URL", site.as_str())];
    let child = e.start_backup(&["--callback", "webhook-site"], &vars);
    let job = e.wait_for_stage("accepted").await;
    let status = stop(child, "TERM").await;
    assert_eq!(status.code(), Some(75), "stopped, kept for `kluis resume`");
    assert_eq!(e.history().list(None, 1).unwrap()[0].stage, "accepted");
    e.sim.release_callbacks();

    let resumed = e.demo_with(&["resume", "--json"], &vars).await;
    assert_saved(&resumed, &job, &e.out());
}

const PASSPHRASE: (&str, &str) = (
    "KLUIS_ENCRYPTION_PASSPHRASE",
    "een lange geheime zin voor kluis",
);

/// The one saved job of `resumed`, encrypted: it is `job`, lies in `out`, is an age file, and
/// `kluis decrypt` restores the service's backup from it (the plain length and digest the
/// line reports).
async fn assert_saved_encrypted(e: &Env, resumed: &Output, job: &str, out: &Path) {
    assert_succeeded(resumed);
    let lines = lines(resumed);
    assert_eq!(lines.len(), 1, "one line per finished job: {lines:?}");
    assert_eq!(lines[0]["job"], job);
    let saved = PathBuf::from(lines[0]["path"].as_str().unwrap());
    assert_eq!(saved.parent(), Some(out), "saved where `backup` was told");
    assert!(saved.to_string_lossy().ends_with(".age"), "{saved:?}");
    let bytes = std::fs::read(&saved).unwrap();
    assert!(bytes.starts_with(b"age-encryption.org/v1\n"), "an age file");
    let restored = e.dir.path().join("restored");
    let args = [
        "decrypt",
        saved.to_str().unwrap(),
        "--out",
        restored.to_str().unwrap(),
    ];
    let done = e.demo_with(&args, &[PASSPHRASE]).await;
    assert_succeeded(&done);
    let plain = std::fs::read(PathBuf::from(String::from_utf8_lossy(&done.stdout).trim())).unwrap();
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(&plain));
    assert_eq!(lines[0]["bytes"], plain.len() as u64);
    assert_eq!(digest, lines[0]["sha256"].as_str().unwrap());
    assert_eq!(
        digest,
        hex::encode(kluis_sim::payload::sha256(plain.len() as u64)),
        "decrypts to the service's backup"
    );
}

/// An encrypted backup stopped (SIGTERM) while it waits is finished *encrypted* by `resume`:
/// its journal says it began with a passphrase, so a resume without that passphrase is
/// refused with what to give (the job kept, nothing saved) — never saved in plain, as it was
/// before — and a resume with it saves the age file.
#[tokio::test(flavor = "multi_thread")]
async fn an_encrypted_backup_is_finished_encrypted() {
    let e = held_env(|_| {}).await;
    let site = e.sim.webhook_site_url().to_string();
    let site = ("KLUIS_WEBHOOK_SITE_URL", site.as_str());
    let child = e.start_backup(
        &["--callback", "webhook-site", "--encrypt-passphrase"],
        &[site, PASSPHRASE],
    );
    let job = e.wait_for_stage("accepted").await;
    let status = stop(child, "TERM").await;
    assert_eq!(status.code(), Some(75), "stopped, kept for `kluis resume`");
    e.sim.release_callbacks();

    let refused = e.demo_with(&["resume", "--json"], &[site]).await;
    assert_ne!(refused.status.code(), Some(0), "not finished in plain");
    let said = lines(&refused)[0]["error"].to_string();
    assert!(said.contains("KLUIS_ENCRYPTION_PASSPHRASE"), "{said}");
    assert_eq!(files_in(&e.out()), 0, "nothing saved");
    assert_eq!(
        e.history().list(None, 1).unwrap()[0].stage,
        "accepted",
        "the job is kept for a resume with its passphrase"
    );

    let resumed = e
        .demo_with(&["resume", "--json"], &[site, PASSPHRASE])
        .await;
    assert_saved_encrypted(&e, &resumed, &job, &e.out()).await;
}

/// `kill -9` in the middle of an encrypted download leaves an encrypted part file; `resume`
/// does not append plain bytes to it (as it did) but starts the file over, encrypted, and
/// saves one whole age file that decrypts to what the service sent.
#[tokio::test(flavor = "multi_thread")]
async fn an_encrypted_download_killed_is_saved_whole_and_encrypted() {
    let e = env(|c| {
        c.payload_size = 8 * 1024 * 1024;
        c.faults.download_rate = Some(2 * 1024 * 1024);
    })
    .await;
    let (callback, bundle) = e.relay().await;
    let vars = [
        ("KLUIS_RELAY_SECRET", RELAY_SECRET),
        ("KLUIS_CA_CERT", bundle.as_str()),
        PASSPHRASE,
    ];
    let args = ["--callback", &callback, "--encrypt-passphrase"];
    let job = kill_mid_download(&e, &args, &vars).await;
    let out = e.out();
    let (part, _) = parts_in(&out).remove(0);
    assert!(
        std::fs::read(&part)
            .unwrap()
            .starts_with(b"age-encryption.org/v1\n"),
        "the killed process left an encrypted part"
    );
    e.sim.set_faults(|f| f.download_rate = None);

    let resumed = e.demo_with(&["resume", "--json"], &vars).await;
    assert_saved_encrypted(&e, &resumed, &job, &out).await;
    assert!(parts_in(&out).is_empty(), "no part file left");
    assert_eq!(files_in(&out), 1);
}

/// Direct: `kill -9` after the 202, while the service keeps retrying its callback; `resume`
/// listens on the journalled address again and the retried callback finds the job (by the
/// hash of its path, the path itself being written nowhere).
#[tokio::test(flavor = "multi_thread")]
async fn direct_backup_survives_a_kill_after_the_202() {
    let e = held_env(|c| {
        c.faults.callback_retries = 200;
        c.faults.callback_retry_interval = Duration::from_millis(50);
    })
    .await;
    let (public_url, listen) = office_proxy().await;
    let callback = format!("direct={public_url}");
    let child = e.start_backup(&["--callback", &callback, "--listen", &listen], &[]);
    let job = e.wait_for_stage("accepted").await;
    stop(child, "KILL").await;

    // The callback is let go once `resume` listens again (the service then finds it at its
    // next try).
    let resuming = e
        .command(&["resume", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let address = listen.clone();
    wait_for("resume listens", move || {
        std::net::TcpStream::connect(address.as_str()).is_ok()
    })
    .await;
    e.sim.release_callbacks();
    let resumed = tokio::task::spawn_blocking(move || resuming.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_saved(&resumed, &job, &e.out());
}

/// Loopback: the callback address died with the process, so `resume` marks the job failed
/// (`not_resumable`, exit 1) with the reason, instead of leaving it "waiting" forever.
#[tokio::test(flavor = "multi_thread")]
async fn loopback_backup_is_ended_with_a_reason() {
    let e = held_env(|_| {}).await;
    let child = e.start_backup(&[], &[]);
    let job = e.wait_for_stage("accepted").await;
    stop(child, "KILL").await;

    let resumed = e.demo(&["resume", "--json"]).await;
    assert_eq!(resumed.status.code(), Some(1));
    let lines = lines(&resumed);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["job"], job.as_str());
    assert_eq!(lines[0]["error"]["code"], "not_resumable");
    let message = lines[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("loopback"), "names the reason: {message}");
    let row = &e.history().list(None, 1).unwrap()[0];
    assert_eq!(
        (
            row.stage.as_str(),
            row.error_code.map(kluis_core::Code::as_str)
        ),
        ("failed", Some("not_resumable"))
    );
    assert_no_secrets_except(&resumed, &[DEMO_PASSWORD], &[&job]);
}

/// `kluis cancel JOB` ends a kept job, so `resume` leaves it; a running job cannot be
/// cancelled from another process.
#[tokio::test(flavor = "multi_thread")]
async fn cancel_ends_a_kept_job() {
    let e = held_env(|_| {}).await;
    let site = e.sim.webhook_site_url().to_string();
    let vars = [("KLUIS_WEBHOOK_SITE_URL", site.as_str())];
    let child = e.start_backup(&["--callback", "webhook-site"], &vars);
    let job = e.wait_for_stage("accepted").await;
    let busy = e.demo(&["cancel", &job]).await;
    assert_eq!(busy.status.code(), Some(2), "the running process owns it");
    stop(child, "KILL").await;
    let listed = e.demo(&["history"]).await;
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains(&format!("kluis cancel {job}")),
        "the history names the kept job and how to end it"
    );

    let cancelled = e.demo(&["cancel", &job]).await;
    assert_eq!(cancelled.status.code(), Some(0));
    let row = &e.history().list(None, 1).unwrap()[0];
    assert_eq!(
        row.error_code.map(kluis_core::Code::as_str),
        Some("cancelled")
    );
    let resumed = e.demo_with(&["resume", "--json"], &vars).await;
    assert_eq!(resumed.status.code(), Some(0));
    assert!(lines(&resumed).is_empty());
}

/// Ctrl-C is the user's "no", even for a job that could be kept: exit 130, the history says
/// cancelled, the relay inbox (which holds the service's callback id) is deleted, and there
/// is nothing to resume.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_and_clears_the_relay_inbox() {
    let e = held_env(|_| {}).await;
    let (child, job, bundle) = relay_job_waiting(&e).await;
    let vars = [
        ("KLUIS_RELAY_SECRET", RELAY_SECRET),
        ("KLUIS_CA_CERT", bundle.as_str()),
    ];
    let journal = e
        .history()
        .journal(uuid::Uuid::parse_str(&job).unwrap())
        .unwrap()
        .expect("journalled");
    let Some(kluis_core::callback::Reattach::Relay { url, inbox }) = journal.reattach else {
        panic!("a relay job")
    };
    let status = stop(child, "INT").await;
    assert_eq!(status.code(), Some(130));
    let row = &e.history().list(None, 1).unwrap()[0];
    assert_eq!(
        (
            row.stage.as_str(),
            row.error_code.map(kluis_core::Code::as_str)
        ),
        ("failed", Some("cancelled"))
    );
    let ca = std::fs::read(&bundle).unwrap();
    let http = reqwest::Certificate::from_pem_bundle(&ca)
        .unwrap()
        .into_iter()
        .fold(reqwest::Client::builder(), |b, c| b.add_root_certificate(c))
        .build()
        .unwrap();
    let events = http
        .get(format!("{}api/inboxes/{inbox}/events?after=0&wait=0", url))
        .bearer_auth(RELAY_SECRET)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 404, "the inbox is gone");
    let resumed = e.demo_with(&["resume", "--json"], &vars).await;
    assert!(lines(&resumed).is_empty());
}
