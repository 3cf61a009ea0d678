//! The CLI's saved profiles with the real OS keyring (Secret Service). Ignored in the normal
//! run: `tests/run-all.sh` runs it with `--ignored` inside a private D-Bus session with an
//! unlocked gnome-keyring.

use crate::common;

use crate::common::{assert_no_secrets_except, assert_succeeded, env};

/// `kluis profiles add` keeps the secrets in the keyring (nothing in any file of Kluis's),
/// `kluis backup --profile` reads them back to back up, and `profiles remove` deletes them.
#[tokio::test]
#[ignore = "needs a Secret Service: run by tests/run-all.sh in a private D-Bus session"]
async fn saved_profiles_keep_their_secrets_in_the_keyring() {
    let env = env(|_| {}).await;
    let password = kluis_sim::config::DEMO_PASSWORD;
    let profiles_file = env.dir.path().join("profiles.json");
    let run = |args: &[&str], service_settings: bool| {
        env.on_session_bus(args, service_settings, &profiles_file)
    };
    let added = run(&["profiles", "add", "Keyring Klant"], true).await;
    assert_succeeded(&added);
    let id = String::from_utf8(added.stdout.clone())
        .unwrap()
        .trim()
        .to_string();
    for entry in std::fs::read_dir(env.dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes
                    .windows(password.len())
                    .any(|w| w == password.as_bytes()),
                "the password is in {}",
                path.display()
            );
        }
    }
    let out = env.out();
    let backup = run(
        &[
            "backup",
            "--profile",
            "Keyring Klant",
            "--out",
            out.to_str().unwrap(),
        ],
        false,
    )
    .await;
    assert_succeeded(&backup);
    assert_no_secrets_except(&backup, &[password], &[&id]);
    assert_eq!(common::files_in(&out), 1);

    assert_succeeded(&run(&["profiles", "remove", "Keyring Klant"], false).await);
    let secrets = kluis_profiles::KeyringStore;
    use kluis_profiles::{SecretKind, SecretStore};
    assert!(
        secrets.get(&id, SecretKind::Password).unwrap().is_none(),
        "removed from the keyring"
    );
    assert!(secrets.get(&id, SecretKind::ApiKey).unwrap().is_none());
}
