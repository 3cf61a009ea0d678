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

/// `kluis profiles import` of 40 klanten, eight signing in at a time, keeps each one's two
/// secrets in the real keyring — one keyring call at a time: GNOME Keyring was seen to crash
/// under eight at once — and a backup of the last one reads them back.
#[tokio::test]
#[ignore = "needs a Secret Service: run by tests/run-all.sh in a private D-Bus session"]
async fn an_import_fills_the_keyring() {
    let env = env(|config| {
        (config.accounts).extend((1..=40).map(kluis_sim::config::Account::klant));
    })
    .await;
    let mut list = String::from("name,username,password\n");
    for n in 1..=40 {
        list += &format!(
            "Klant {n:03},{},{}\n",
            kluis_sim::config::klant_username(n),
            kluis_sim::config::klant_password(n)
        );
    }
    let file = env.dir.path().join("klanten.csv");
    std::fs::write(&file, list).unwrap();
    let profiles_file = env.dir.path().join("profiles.json");
    let import = ["profiles", "import", file.to_str().unwrap(), "--json"];
    let imported = env.on_session_bus(&import, true, &profiles_file).await;
    assert_succeeded(&imported);
    let added = String::from_utf8_lossy(&imported.stdout)
        .matches("\"outcome\":\"added\"")
        .count();
    assert_eq!(added, 40);
    let out = env.out();
    let backup = [
        "backup",
        "--profile",
        "Klant 040",
        "--out",
        out.to_str().unwrap(),
    ];
    assert_succeeded(&env.on_session_bus(&backup, false, &profiles_file).await);
}
