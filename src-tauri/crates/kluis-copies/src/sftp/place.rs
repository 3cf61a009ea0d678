//! [`SftpPlace`]: a folder on an SFTP server (a NAS, a server at the office or elsewhere) as
//! the office set it. Nothing in it is secret: the password, or the passphrase of the private
//! key, lives in the keyring (or `KLUIS_SECRETS_DIR`) under the target's id; the key file stays
//! where the office keeps it.

use serde::{Deserialize, Serialize};

use kluis_core::{Error, Result};

/// An SFTP folder (see the module's text).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SftpPlace {
    /// The server's name or address, such as `nas.office.lan`.
    pub host: String,
    pub port: u16,
    pub user: String,
    /// The folder the copies go in, such as `/volume1/kluis` (or relative to the user's home
    /// folder). Each klant's copies go in a folder of their own under it.
    pub path: String,
    pub login: SftpLogin,
    /// The server's host key as first seen and shown to the office, by its SHA-256
    /// fingerprint (`SHA256:…`, as `ssh-keygen -l` writes it). A server showing another key is
    /// refused: it may be another machine posing as the office's.
    pub host_key: String,
}

/// How Kluis logs in.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum SftpLogin {
    /// With the user's password (in the keyring).
    Password,
    /// With a private key file (OpenSSH or PuTTY format; its passphrase, if it has one, in
    /// the keyring).
    Key { key_file: String },
}

/// SSH's own port.
pub const SSH_PORT: u16 = 22;

impl SftpPlace {
    /// The place with its fields trimmed, or why it cannot be one.
    pub fn checked(mut self) -> Result<SftpPlace> {
        self.host = checked_host(&self.host)?;
        self.user = self.user.trim().to_string();
        self.path = self.path.trim().to_string();
        self.host_key = self.host_key.trim().to_string();
        if self.port == 0 {
            return Err(Error::Config(
                "Give the SFTP server's port (22 unless its owner says otherwise).".into(),
            ));
        }
        if self.user.is_empty() || self.user.chars().any(char::is_control) {
            return Err(Error::Config(
                "Give the user name Kluis logs in with on the SFTP server.".into(),
            ));
        }
        if self.path.is_empty() || self.path.chars().any(char::is_control) {
            return Err(Error::Config(
                "Give the folder on the SFTP server the copies go in, such as /volume1/kluis."
                    .into(),
            ));
        }
        if let SftpLogin::Key { key_file } = &mut self.login {
            *key_file = key_file.trim().to_string();
            if !std::path::Path::new(key_file.as_str()).is_absolute() {
                return Err(Error::Config(format!(
                    "Give the private key file as a full path, not \"{}\".",
                    shown(key_file)
                )));
            }
        }
        if !self.host_key.starts_with("SHA256:") || self.host_key.len() < 20 {
            return Err(Error::Config(
                "The server's host key is not known yet: connect to the server first, and compare the key it shows with the server's own."
                    .into(),
            ));
        }
        Ok(self)
    }

    /// What it is, for a list: "SFTP kluis@nas.office.lan:/volume1/kluis".
    pub fn describe(&self) -> String {
        let port = match self.port {
            SSH_PORT => String::new(),
            port => format!(" port {port}"),
        };
        format!("SFTP {}@{}:{}{port}", self.user, self.host, self.path)
    }

    /// Whether the login needs a secret (a password; a key file's passphrase is optional).
    pub fn needs_secret(&self) -> bool {
        matches!(self.login, SftpLogin::Password)
    }
}

/// `host` trimmed, when it names a server (a name or an address, no scheme, user or port);
/// else why not. Checked before anything is asked of the server.
pub fn checked_host(host: &str) -> Result<String> {
    let host = host.trim();
    let ok = !host.is_empty()
        && host.len() <= 253
        && !host.contains(['/', '@', ' ', ':'])
        && !host.chars().any(char::is_control);
    match ok {
        true => Ok(host.to_string()),
        false => Err(Error::Config(format!(
            "Give the SFTP server by its name or address only, such as nas.office.lan, not \"{}\".",
            shown(host)
        ))),
    }
}

/// `text` cut for a message.
fn shown(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place() -> SftpPlace {
        SftpPlace {
            host: " nas.office.lan ".into(),
            port: 22,
            user: "kluis".into(),
            path: "/volume1/kluis".into(),
            login: SftpLogin::Password,
            host_key: "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU".into(),
        }
    }

    /// A place needs a bare host, a port, a user, a folder, a full key path and a pinned key.
    #[test]
    fn a_place_is_checked() {
        let ok = place().checked().unwrap();
        assert_eq!(ok.host, "nas.office.lan");
        assert_eq!(ok.describe(), "SFTP kluis@nas.office.lan:/volume1/kluis");
        let wrong = |change: fn(&mut SftpPlace)| {
            let mut p = place();
            change(&mut p);
            p.checked().unwrap_err().to_string()
        };
        assert!(wrong(|p| p.host = "sftp://nas".into()).contains("name or address"));
        assert!(wrong(|p| p.host = "kluis@nas".into()).contains("name or address"));
        assert!(wrong(|p| p.port = 0).contains("port"));
        assert!(wrong(|p| p.user = " ".into()).contains("user name"));
        assert!(wrong(|p| p.path = String::new()).contains("folder"));
        assert!(wrong(|p| p.host_key = String::new()).contains("host key"));
        assert!(wrong(|p| p.login = SftpLogin::Key {
            key_file: "id_ed25519".into()
        })
        .contains("full path"));
    }
}
