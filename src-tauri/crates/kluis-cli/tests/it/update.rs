//! `kluis update check` and `download` against an update server on loopback over TLS (the one
//! of kluis-update's tests), its manifest and build signed as `tauri signer` signs them: one
//! line (or only JSON) saying a newer Kluis is out, the build fetched and verified, a changed
//! build refused with nothing kept, a server that is not there said in one line, and a
//! computer where IT turned updates off never asking the server.

use std::process::{Command, Output};
use std::sync::atomic::Ordering;

use crate::common::*;
use crate::update_server::{manifest, setup, Setup};

/// `kluis update ARGS` (the binary `program`) following the test's publisher, trusting its
/// CA, with its own history folder (where the look's stamp goes).
fn update(s: &Setup, dir: &std::path::Path, program: &std::path::Path, args: &[&str]) -> Output {
    let ca = dir.join("update-ca.pem");
    std::fs::write(&ca, &s.ca).unwrap();
    Command::new(program)
        .arg("update")
        .args(args)
        .env_clear()
        .env("KLUIS_UPDATE_URL", s.publisher.manifest.as_str())
        .env("KLUIS_UPDATE_PUBKEY", s.signer.public())
        .env("KLUIS_CA_CERT", &ca)
        .env("KLUIS_HISTORY_DB", dir.join("history.sqlite3"))
        .output()
        .unwrap()
}

fn kluis() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_BIN_EXE_kluis"))
}

/// `kluis update download --to DIR/downloads`: its output, and that folder.
fn download(s: &Setup, dir: &std::path::Path) -> (Output, std::path::PathBuf) {
    let to = dir.join("downloads");
    std::fs::create_dir(&to).unwrap();
    let output = update(s, dir, kluis(), &["download", "--to", to.to_str().unwrap()]);
    (output, to)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A newer version: `check` says so in one line naming both versions and how to fetch it, and
/// remembers it beside the history; `--json` prints the one JSON object and nothing else;
/// `download` saves the build, verified, under its name.
#[tokio::test(flavor = "multi_thread")]
async fn a_newer_kluis_is_said_in_one_line_and_downloaded_verified() {
    let s = setup().await;
    let build = b"MZ the next Kluis".repeat(5000);
    *s.served.build.lock().unwrap() = build.clone();
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(&build, "9.9.9"));
    let dir = tempfile::tempdir().unwrap();
    let this = env!("CARGO_PKG_VERSION");

    // (The server runs on the runtime's other thread while this one waits for kluis.)
    let output = update(&s, dir.path(), kluis(), &["check"]);
    assert_succeeded(&output);
    let said = stdout(&output);
    assert_eq!(said.lines().count(), 1, "one line: {said}");
    assert!(
        said.contains("9.9.9") && said.contains(this) && said.contains("kluis update download"),
        "{said}"
    );
    assert!(output.stderr.is_empty(), "nothing else said");
    let stamp = std::fs::read_to_string(dir.path().join("update-looked")).unwrap();
    assert_eq!(stamp, "9.9.9", "the look remembered for the app");

    let output = update(&s, dir.path(), kluis(), &["check", "--json"]);
    assert_succeeded(&output);
    let said = stdout(&output);
    let object: serde_json::Value = serde_json::from_str(said.trim()).expect("only JSON");
    assert_eq!(said.trim().lines().count(), 1);
    assert_eq!(object["update"], "available");
    assert_eq!(object["version"], "9.9.9");
    assert_eq!(object["current"], this);
    assert_eq!(object["notes"], "Sneller importeren.");

    let (output, to) = download(&s, dir.path());
    assert_succeeded(&output);
    let version = kluis_update::Version::parse("9.9.9").unwrap();
    let saved = to.join(kluis_update::Target::this_program().artifact(&version));
    assert_eq!(std::fs::read(&saved).unwrap(), build);
    assert!(stdout(&output).contains("verified"), "{}", stdout(&output));
    assert_eq!(files_in(&to), 1, "no part file beside it");
}

/// A build changed after signing is refused (exit 6, one line on stderr) and nothing of it is
/// kept; an older version on the server is no update, and is said as ignored.
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_build_or_an_older_version_is_refused() {
    let s = setup().await;
    let mut build = b"MZ the next Kluis".repeat(5000);
    let signature = s.signer.sign(&build, "9.9.9");
    build[77] ^= 1;
    *s.served.build.lock().unwrap() = build;
    *s.served.manifest.lock().unwrap() = manifest("9.9.9", &s.origin, &signature);
    let dir = tempfile::tempdir().unwrap();
    let (output, to) = download(&s, dir.path());
    assert_eq!(output.status.code(), Some(6), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("does not match its signature") && said.lines().count() == 1,
        "{said}"
    );
    assert_eq!(files_in(&to), 0, "nothing kept");

    *s.served.manifest.lock().unwrap() = manifest("0.0.1", &s.origin, &signature);
    let output = update(&s, dir.path(), kluis(), &["check"]);
    assert_succeeded(&output);
    assert!(
        stdout(&output).contains("older 0.0.1: ignored"),
        "{}",
        stdout(&output)
    );
}

/// An update server that is not there: exit 1 and one line naming it, no more.
#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_server_is_one_line() {
    let mut s = setup().await;
    let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = gone.local_addr().unwrap().port();
    drop(gone);
    s.publisher.manifest = format!("https://127.0.0.1:{port}/manifest.json")
        .parse()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let output = update(&s, dir.path(), kluis(), &["check"]);
    assert_eq!(output.status.code(), Some(1));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains(&format!("127.0.0.1:{port} could not be reached"))
            && said.lines().count() == 1,
        "{said}"
    );
    assert!(output.stdout.is_empty());
}

/// With `updates-disabled` beside the program (IT's switch), Kluis says updates are off and
/// never asks the server; a Kluis without an update server says that it has none.
#[tokio::test(flavor = "multi_thread")]
async fn it_can_turn_updates_off_and_a_build_may_have_none() {
    let s = setup().await;
    *s.served.manifest.lock().unwrap() =
        manifest("9.9.9", &s.origin, &s.signer.sign(b"x", "9.9.9"));
    let dir = tempfile::tempdir().unwrap();
    let installed = dir.path().join("program");
    std::fs::create_dir(&installed).unwrap();
    let program = installed.join("kluis");
    std::fs::copy(kluis(), &program).unwrap();
    std::fs::write(installed.join("updates-disabled"), "").unwrap();
    for args in [&["check"][..], &["download"]] {
        let output = update(&s, dir.path(), &program, args);
        assert_succeeded(&output);
        assert!(
            stdout(&output).contains("Updates are turned off on this computer"),
            "{}",
            stdout(&output)
        );
    }
    let output = update(&s, dir.path(), &program, &["check", "--json"]);
    let object: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(object["update"], "disabled");
    assert_eq!(
        s.served.manifest_asked.load(Ordering::SeqCst),
        0,
        "the server never asked"
    );

    let output = Command::new(kluis())
        .args(["update", "check"])
        .env_clear()
        .env("KLUIS_HISTORY_DB", dir.path().join("history.sqlite3"))
        .output()
        .unwrap();
    assert_succeeded(&output);
    assert!(
        stdout(&output).contains("no update server"),
        "{}",
        stdout(&output)
    );
}
