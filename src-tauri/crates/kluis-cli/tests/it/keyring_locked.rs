//! `kluis run-due` on a computer whose keyring is locked (nobody logged in to unlock it).
//! Ignored in the normal run: `tests/run-all.sh` runs it with `--ignored` in a private D-Bus
//! session with gnome-keyring, *after* the other keyring tests — it locks the keyring, and a
//! locked one cannot be unlocked again there without a person at a prompt.

use crate::common;

use crate::common::{assert_no_secrets, assert_succeeded, env};

/// A due plan whose secrets are in a locked keyring ends with a clear error that names the
/// way out (`KLUIS_SECRETS_DIR`), saves nothing, prints no secret, never hangs at the unlock
/// prompt (there is no display to show it on), and is recorded as failed for `status`.
#[tokio::test]
#[ignore = "needs a Secret Service it may lock: run by tests/run-all.sh, last"]
async fn run_due_with_a_locked_keyring_says_what_to_do() {
    let env = env(|_| {}).await;
    let profiles_file = env.dir.path().join("profiles.json");
    let run = |args: &[&str], service_settings: bool| {
        env.on_session_bus(args, service_settings, &profiles_file)
    };
    assert_succeeded(&run(&["profiles", "add", "Locked Klant"], true).await);
    assert_succeeded(&run(&["plan", "Locked Klant", "--every", "1h"], false).await);
    // The plan was set three hours ago: due now.
    let mut stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&profiles_file).unwrap()).unwrap();
    let then = jiff::Timestamp::now().as_millisecond() - 3 * 3_600_000;
    stored["profiles"][0]["plan"]["set_at_ms"] = then.into();
    std::fs::write(&profiles_file, serde_json::to_vec(&stored).unwrap()).unwrap();

    lock_the_keyring().await;

    let out = env.out();
    let due = run(&["run-due", "--out", out.to_str().unwrap()], false).await;
    let stderr = String::from_utf8_lossy(&due.stderr);
    assert_eq!(due.status.code(), Some(2), "a setup error: {stderr}");
    assert!(stderr.contains("Locked Klant"), "names the klant: {stderr}");
    assert!(
        stderr.contains("keyring") && stderr.contains("unlocked"),
        "says the keyring is the trouble: {stderr}"
    );
    assert!(
        stderr.contains("KLUIS_SECRETS_DIR"),
        "names the alternative: {stderr}"
    );
    assert_no_secrets(&due, &[kluis_sim::config::DEMO_PASSWORD]);
    assert_eq!(common::files_in(&out), 0, "nothing saved");

    let status = run(&["status", "--json"], false).await;
    assert_succeeded(&status);
    let line: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        line["last_error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("KLUIS_SECRETS_DIR")),
        "status shows the reason: {line}"
    );
}

/// Locks gnome-keyring's default collection, as after a restart with nobody logged in.
async fn lock_the_keyring() {
    let bus = zbus::Connection::session().await.unwrap();
    let collection =
        zbus::ObjectPath::try_from("/org/freedesktop/secrets/aliases/default").unwrap();
    let reply = bus
        .call_method(
            Some("org.freedesktop.secrets"),
            "/org/freedesktop/secrets",
            Some("org.freedesktop.Secret.Service"),
            "Lock",
            &(vec![collection],),
        )
        .await
        .unwrap();
    let (locked, _prompt): (Vec<zbus::OwnedObjectPath>, zbus::OwnedObjectPath) =
        reply.body().deserialize().unwrap();
    assert_eq!(locked.len(), 1, "the keyring was locked");
}
