//! [`Publisher`]: where the publisher's update manifest is, and the public half of the key it
//! signs its builds with (`tauri signer generate`: minisign). Built in when Kluis is built
//! (`KLUIS_UPDATE_URL`, `KLUIS_UPDATE_PUBKEY` in the build's environment), or given at run
//! time in the same variables — an office's own update server, and the tests'.

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

    /// The publisher this Kluis follows: `KLUIS_UPDATE_URL` and `KLUIS_UPDATE_PUBKEY` at run
    /// time, else as they were when it was built; none when neither is set.
    pub fn configured() -> Result<Option<Publisher>, UpdateError> {
        let at_run = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
        let url = at_run("KLUIS_UPDATE_URL").or(option_env!("KLUIS_UPDATE_URL").map(String::from));
        let key =
            at_run("KLUIS_UPDATE_PUBKEY").or(option_env!("KLUIS_UPDATE_PUBKEY").map(String::from));
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
