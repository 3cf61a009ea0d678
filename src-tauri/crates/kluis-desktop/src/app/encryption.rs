//! Encryption at rest in the app: a klant's setting (a passphrase, kept in the keyring, or an
//! age recipient) from the profile form. What encrypts its downloads (kluis-core's encryption)
//! is built with the klant's connection (`connections.rs`).

use kluis_core::encryption::EncryptionSetting;
use kluis_core::{Error, Secret};

use super::accounts::Accounts;
use crate::error::AppResult;
use crate::profiles::ProfileView;
use crate::secrets::SecretKind;

/// What the profile form sends: the kind, and the passphrase (sent once, then kept in the
/// keyring) or the recipient. A passphrase left empty keeps the saved one.
#[derive(Clone, serde::Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EncryptionInput {
    None,
    Passphrase { passphrase: Option<String> },
    Recipient { recipient: String },
}

/// Never the passphrase, only whether one was given (as `ProfileInput` hides its secrets).
impl std::fmt::Debug for EncryptionInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncryptionInput::None => f.write_str("None"),
            EncryptionInput::Passphrase { passphrase } => f
                .debug_struct("Passphrase")
                .field("passphrase", &passphrase.as_ref().map(|_| "«hidden»"))
                .finish(),
            EncryptionInput::Recipient { recipient } => f
                .debug_struct("Recipient")
                .field("recipient", recipient)
                .finish(),
        }
    }
}

impl Accounts {
    /// Sets how profile `id`'s backups are encrypted from its next backup on.
    pub async fn set_encryption(&self, id: &str, input: EncryptionInput) -> AppResult<ProfileView> {
        let profile = self.shared.profiles.get(id)?;
        let setting = match input {
            EncryptionInput::None => None,
            EncryptionInput::Recipient { recipient } => {
                let recipient = kluis_core::encryption::parse_recipient(&recipient)?.to_string();
                Some(EncryptionSetting::Recipient { recipient })
            }
            EncryptionInput::Passphrase { passphrase } => {
                match passphrase.filter(|p| !p.is_empty()) {
                    Some(text) => {
                        let secret = Secret::new(text);
                        kluis_core::encryption::check_passphrase(&secret)?;
                        let kind = SecretKind::EncryptionPassphrase;
                        self.connections
                            .store_secret(id, kind, secret, profile.demo)
                            .await?;
                    }
                    None => {
                        let kind = SecretKind::EncryptionPassphrase;
                        if self
                            .connections
                            .secret(id, kind, profile.demo)
                            .await?
                            .is_none()
                        {
                            return Err(Error::Config(
                                "Enter the passphrase to encrypt this klant's backups with.".into(),
                            )
                            .into());
                        }
                    }
                }
                Some(EncryptionSetting::Passphrase)
            }
        };
        let profile = self.shared.profiles.update(id, |p| {
            p.encryption = setting.clone();
            Ok(())
        })?;
        // Its next backup is made with the new setting.
        self.connections.forget(id);
        Ok(self.shared.view(&profile))
    }
}

#[cfg(test)]
mod tests {
    use super::EncryptionInput;

    /// Printing what the form sent never shows the passphrase.
    #[test]
    fn debug_hides_the_passphrase() {
        let input = EncryptionInput::Passphrase {
            passphrase: Some("geheime-wachtzin-1234".into()),
        };
        let shown = format!("{input:?}");
        assert!(!shown.contains("geheime-wachtzin"), "{shown}");
        assert!(shown.contains("hidden"));
    }
}
