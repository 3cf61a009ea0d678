//! The real OS keyring (Secret Service on Linux). Needs an unlocked keyring in a D-Bus
//! session, so it is ignored by default; `.ci/run` runs it inside `dbus-run-session` with a
//! fresh, unlocked gnome-keyring: `cargo test-all --test it -- --ignored keyring::`.

use kluis_core::Secret;
use kluis_desktop::secrets::{KeyringStore, SecretKind, SecretStore};

/// A secret written through one store object is read back through another, and deleted.
#[test]
#[ignore = "needs a Secret Service session (run by .ci/run)"]
fn secret_service_round_trip() {
    let profile = format!("test-{}", uuid::Uuid::new_v4());
    KeyringStore
        .set(&profile, SecretKind::Password, &Secret::new("pw-123"))
        .unwrap();
    let read = KeyringStore.get(&profile, SecretKind::Password).unwrap();
    assert_eq!(read.map(|s| s.expose().to_string()), Some("pw-123".into()));
    assert!(
        KeyringStore
            .get(&profile, SecretKind::ApiKey)
            .unwrap()
            .is_none(),
        "kinds are separate"
    );
    KeyringStore.delete(&profile, SecretKind::Password).unwrap();
    assert!(KeyringStore
        .get(&profile, SecretKind::Password)
        .unwrap()
        .is_none());
    KeyringStore.delete(&profile, SecretKind::Password).unwrap();
}
