//! [`Publisher`]: where the publisher's update manifest is, and the public half of the key it
//! signs its builds with (`tauri signer generate`: minisign). Built in when Kluis is built
//! (`KLUIS_UPDATE_URL`, `KLUIS_UPDATE_PUBKEY` in the build's environment), or named by IT's
//! machine policy — an office's own update server; in a build made for tests, also given at
//! run time in those variables.

use base64::Engine;
use url::Url;

use crate::error::UpdateError;
use crate::signature::key_id;

/// See the module's text.
#[derive(Clone)]
pub struct Publisher {
    pub manifest: Url,
    /// The public key as Tauri's updater takes it: the .pub file's text in base64.
    pub tauri_pubkey: String,
    pub(crate) key: minisign_verify::PublicKey,
    pub(crate) key_id: [u8; 8],
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("manifest", &self.manifest.as_str())
            .finish()
    }
}

impl Publisher {
    /// The publisher at `manifest` (an https URL) whose key is `public_key` as `tauri signer
    /// generate` prints it (the .pub file's text in base64), or that text itself.
    pub fn new(manifest: &str, public_key: &str) -> Result<Publisher, UpdateError> {
        let manifest = Url::parse(manifest.trim())
            .ok()
            .filter(|u| u.scheme() == "https")
            .ok_or_else(|| {
                UpdateError::Config(format!(
                    "The update manifest's address \"{}\" is not an https:// URL.",
                    manifest.chars().take(80).collect::<String>()
                ))
            })?;
        let text = crate::signature::unwrapped(public_key.trim());
        let bad = || {
            UpdateError::Config(
                "The publisher's update key is not a minisign public key (what `tauri signer generate` writes to its .pub file).".into(),
            )
        };
        // One form from here on: the .pub file's text (a bare key line gets its comment line).
        let pub_text = match text.lines().count() {
            1 => format!("untrusted comment: minisign public key\n{}\n", text.trim()),
            _ => text,
        };
        let key = minisign_verify::PublicKey::decode(&pub_text).map_err(|_| bad())?;
        let key_id = key_id(&pub_text).ok_or_else(bad)?;
        Ok(Publisher {
            manifest,
            tauri_pubkey: base64::engine::general_purpose::STANDARD.encode(&pub_text),
            key,
            key_id,
        })
    }

    /// The publisher this Kluis follows: the update server IT's machine policy names
    /// ([`crate::policy::machine_publisher`]: an office's own), else the one it was built
    /// with; none when neither names one. `KLUIS_UPDATE_URL` and `KLUIS_UPDATE_PUBKEY` in the
    /// environment count only in a build made for tests (the `publisher-from-env` feature): any
    /// program of the user's can set them (HKCU\Environment) and would have the app install its
    /// own "verified" setup by itself.
    pub fn configured() -> Result<Option<Publisher>, UpdateError> {
        if let Some((url, key)) = crate::policy::machine_publisher()? {
            return Publisher::new(&url, &key).map(Some).map_err(|e| {
                UpdateError::Config(format!("IT's policy names an update server, but: {e}"))
            });
        }
        let from_env = |name| {
            std::env::var(name)
                .ok()
                .filter(|v| cfg!(feature = "publisher-from-env") && !v.is_empty())
        };
        let url =
            from_env("KLUIS_UPDATE_URL").or(option_env!("KLUIS_UPDATE_URL").map(String::from));
        let key = from_env("KLUIS_UPDATE_PUBKEY")
            .or(option_env!("KLUIS_UPDATE_PUBKEY").map(String::from));
        match (url, key) {
            (Some(url), Some(key)) => Publisher::new(&url, &key).map(Some),
            (None, None) => Ok(None),
            _ => Err(UpdateError::Config(
                "KLUIS_UPDATE_URL and KLUIS_UPDATE_PUBKEY go together: give both or neither."
                    .into(),
            )),
        }
    }
}

#[cfg(all(test, not(feature = "publisher-from-env")))]
mod tests {
    use super::*;

    /// A build not made for tests (without `publisher-from-env`: what is released, and what
    /// the Windows tests run under Wine) takes no update server from the environment, which
    /// any program of the user's can set: with both variables set it still has none.
    #[test]
    fn a_release_build_takes_no_update_server_from_the_environment() {
        let key = "untrusted comment: minisign public key\nRWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3\n";
        // (No other test of this binary reads or writes these variables.)
        std::env::set_var(
            "KLUIS_UPDATE_URL",
            "https://updates.attacker.example/m.json",
        );
        std::env::set_var("KLUIS_UPDATE_PUBKEY", key);
        let configured = Publisher::configured().unwrap();
        assert!(configured.is_none(), "{configured:?}");
    }
}
