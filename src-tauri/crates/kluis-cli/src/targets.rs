//! The copy targets a command names: the one named on the command line ([`named_in`]), and
//! targets given the secrets they need from this run's keyring ([`with_secrets`]). A leaf the
//! copy, restore and recovery commands share.

use kluis_copies::CopyTarget;
use kluis_core::{Error, Result};

use crate::secrets::{on_store, secret_store};

/// `targets`, each with the secret it needs from this run's keyring (or KLUIS_SECRETS_DIR).
pub async fn with_secrets(targets: Vec<CopyTarget>) -> Result<Vec<CopyTarget>> {
    if !targets.iter().any(|t| t.place.keeps_secret()) {
        return Ok(targets);
    }
    on_store(&secret_store(), move |store| {
        kluis_profiles::secrets::with_target_secrets(store, targets)
    })
    .await
}

/// Of `targets`, the one named `name` (case aside), or what the names are.
pub fn named_in(targets: &[CopyTarget], name: &str) -> Result<CopyTarget> {
    (targets.iter())
        .find(|t| t.name.eq_ignore_ascii_case(name.trim()))
        .cloned()
        .ok_or_else(|| {
            let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
            Error::Config(format!(
                "No copy target is named \"{}\"; there are: {}.",
                name.chars().take(60).collect::<String>(),
                match names.is_empty() {
                    true => "none (see `kluis copy-target add --help`)".into(),
                    false => names.join(", "),
                }
            ))
        })
}
