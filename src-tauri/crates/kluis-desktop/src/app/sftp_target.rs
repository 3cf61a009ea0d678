//! Settings → *Copies off this computer* → *Add an SFTP server*: first *Connect* reads the key
//! the server shows (without logging in: no password goes to a server the office has not
//! confirmed) and the page shows its fingerprint; *Trust and add* then pins that key, picks the
//! private key file in a native dialog when the login is by key (the page names no file),
//! tests the target with the password or passphrase typed, and keeps that secret in the
//! keyring — never back to the page.

use kluis_copies::sftp::{HostKey, SftpLogin, SftpPlace};
use kluis_copies::{CopyTarget, Place};
use kluis_core::Secret;
use serde::Deserialize;

use super::settings::AppSettings;
use crate::error::AppResult;
use crate::profiles::Settings;

/// What "Connect" sends: the server to meet.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct SftpServer {
    pub host: String,
    pub port: u16,
}

/// What "Trust and add" sends: the target's name, the place with the host key the page showed
/// (and the office trusted), and the password or the key's passphrase (which goes to the
/// keyring and never comes back).
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct SftpInput {
    pub name: String,
    /// A key login's `key_file` is ignored: the file is picked in the native dialog.
    pub place: SftpPlace,
    pub secret: String,
}

/// Shows the place, never the secret.
impl std::fmt::Debug for SftpInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SftpInput")
            .field("name", &self.name)
            .field("place", &self.place)
            .field("secret", &"…")
            .finish()
    }
}

impl AppSettings {
    /// "Connect": the key the server at `server` shows, read without logging in.
    pub async fn sftp_host_key(&self, server: SftpServer) -> AppResult<HostKey> {
        // Checked as a place checks it, before anything is asked of the server.
        let host = kluis_copies::sftp::checked_host(&server.host)?;
        Ok(kluis_copies::sftp::host_key("new target", &host, server.port).await?)
    }

    /// "Trust and add": the server's folder becomes copy target `name` once a test file could
    /// be written there with the login given — on a server showing the trusted key only. A key
    /// login's file is picked in the native dialog first (cancelled: nothing is added). The
    /// secret is kept in the keyring under the target's id (removed again when the settings
    /// cannot take the target).
    pub async fn add_copy_sftp(&self, input: SftpInput) -> AppResult<Settings> {
        CopyTarget::checked_name(&input.name)?;
        let login = match input.place.login {
            SftpLogin::Password => SftpLogin::Password,
            SftpLogin::Key { .. } => match self.shared.dialogs().pick_key_file().await {
                Some(file) => SftpLogin::Key {
                    key_file: file.to_string_lossy().into_owned(),
                },
                None => return Ok(self.current()),
            },
        };
        let place = SftpPlace {
            login,
            ..input.place
        };
        let needs_secret = place.needs_secret();
        let mut target = CopyTarget::new(&input.name, Place::Sftp(place))?;
        let secret = Secret::new(input.secret);
        if needs_secret && secret.is_empty() {
            let said = "Give the password of the SFTP server's user.";
            return Err(kluis_core::Error::Config(said.into()).into());
        }
        target.secret = (!secret.is_empty()).then_some(secret);
        super::copy_targets::tested(target.clone()).await?;
        self.keep_with_secret(target).await
    }
}
