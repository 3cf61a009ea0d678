//! The SSH connection to an [`SftpPlace`]: the server's host key checked against the one the
//! office pinned before anything is sent, the login (password or key), and the SFTP session
//! on it — and SSH's and SFTP's failures said in words that name the target and tell the user
//! what to do.
//!
//! [`host_key`] meets a server for the first time: it reads the key the server shows and
//! hangs up before logging in (no password goes to a server the office has not confirmed).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kluis_core::{Error, Result, Secret};
use russh::client::{self, Handle};
use russh::keys::{HashAlg, PrivateKeyWithHashAlg, PublicKey};
use russh_sftp::client::SftpSession;
use serde::{Deserialize, Serialize};

use super::{SftpLogin, SftpPlace};

/// A server's host key as shown to the office.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostKey {
    /// `SHA256:…`, as `ssh-keygen -l` writes it.
    pub fingerprint: String,
    /// Such as `ssh-ed25519`.
    pub algorithm: String,
}

/// A server that does not answer within this long is taken as away.
const CONNECT: Duration = Duration::from_secs(30);
/// Keepalives every so often, and a server that misses three is taken as gone (a dead line
/// would otherwise leave a copy waiting for ever).
const KEEPALIVE: Duration = Duration::from_secs(15);
/// One SFTP request's answer: a NAS writing to a sleeping disk may take a while.
const REQUEST_SECS: u64 = 60;

/// Checks the server's key: against the pinned one, or (none pinned) only reads it.
struct HostKeyCheck {
    pinned: Option<String>,
    seen: Arc<Mutex<Option<HostKey>>>,
}

impl client::Handler for HostKeyCheck {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        public: &PublicKey,
    ) -> std::result::Result<bool, Self::Error> {
        let seen = HostKey {
            fingerprint: public.fingerprint(HashAlg::Sha256).to_string(),
            algorithm: public.algorithm().to_string(),
        };
        let trusted = self.pinned.as_ref().is_none_or(|p| *p == seen.fingerprint);
        *self.seen.lock().unwrap() = Some(seen);
        Ok(trusted)
    }
}

/// An SFTP session on a server whose key is the pinned one, logged in.
pub struct Connected {
    pub sftp: SftpSession,
    /// Kept: the connection ends when it is dropped.
    _ssh: Handle<HostKeyCheck>,
}

/// The key the server at `host:port` shows (target `name`), read without logging in.
pub async fn host_key(name: &str, host: &str, port: u16) -> Result<HostKey> {
    let seen = Arc::new(Mutex::new(None));
    let check = HostKeyCheck {
        pinned: None,
        seen: seen.clone(),
    };
    let ssh = reach(name, host, port, check, &seen, None).await?;
    let _ = ssh
        .disconnect(russh::Disconnect::ByApplication, "", "en")
        .await;
    let key = seen.lock().unwrap().clone();
    key.ok_or_else(|| {
        Error::BadResponse(format!(
            "Copy target \"{name}\": the server showed no host key."
        ))
    })
}

/// Connects to `place` (target `name`), checks its key, logs in with `secret` (the password,
/// or the key file's passphrase) and opens SFTP.
pub async fn connect(name: &str, place: &SftpPlace, secret: Option<&Secret>) -> Result<Connected> {
    // The key is read before connecting: a wrong passphrase is said without a server.
    let key = match &place.login {
        SftpLogin::Key { key_file } => Some(private_key(name, key_file, secret)?),
        SftpLogin::Password => None,
    };
    let password = match &place.login {
        SftpLogin::Password => Some(secret.filter(|s| !s.is_empty()).ok_or_else(|| {
            Error::Config(format!(
                "Copy target \"{name}\": its password is not saved on this computer; add the target again with it."
            ))
        })?),
        SftpLogin::Key { .. } => None,
    };
    let seen = Arc::new(Mutex::new(None));
    let check = HostKeyCheck {
        pinned: Some(place.host_key.clone()),
        seen: seen.clone(),
    };
    let mut ssh = reach(
        name,
        &place.host,
        place.port,
        check,
        &seen,
        Some(&place.host_key),
    )
    .await?;
    let outcome = match (key, password) {
        (Some(key), _) => {
            let hash = ssh.best_supported_rsa_hash().await.ok().flatten().flatten();
            let key = PrivateKeyWithHashAlg::new(Arc::new(key), hash);
            ssh.authenticate_publickey(&place.user, key).await
        }
        (None, Some(password)) => {
            ssh.authenticate_password(&place.user, password.expose())
                .await
        }
        (None, None) => unreachable!("a login is a key or a password"),
    };
    let refused = || {
        let what = match place.login {
            SftpLogin::Password => "the password",
            SftpLogin::Key { .. } => "the key (is its public half in the user's authorized_keys?)",
        };
        Error::AuthFailed(format!(
            "Copy target \"{name}\": the SFTP server {} refused the login of {}. Check the user name and {what}, then add the target again.",
            place.host, place.user
        ))
    };
    match outcome {
        Ok(result) if result.success() => {}
        Ok(_) => return Err(refused()),
        Err(e) => return Err(lost(name, &place.host, &e.to_string())),
    }
    let channel = ssh
        .channel_open_session()
        .await
        .map_err(|e| lost(name, &place.host, &e.to_string()))?;
    channel
        .request_subsystem(true, "sftp")
        .await
        .map_err(|e| lost(name, &place.host, &e.to_string()))?;
    let config = russh_sftp::client::Config {
        request_timeout_secs: REQUEST_SECS,
        ..Default::default()
    };
    let sftp = SftpSession::new_with_config(channel.into_stream(), config)
        .await
        .map_err(|e| {
            Error::BadResponse(format!(
                "Copy target \"{name}\": the server {} logged Kluis in but offers no SFTP ({e}). Ask its owner to switch SFTP on for {}.",
                place.host, place.user
            ))
        })?;
    Ok(Connected { sftp, _ssh: ssh })
}

/// The TCP connection and key exchange, with the host key checked by `check`.
async fn reach(
    name: &str,
    host: &str,
    port: u16,
    check: HostKeyCheck,
    seen: &Mutex<Option<HostKey>>,
    pinned: Option<&str>,
) -> Result<Handle<HostKeyCheck>> {
    let config = Arc::new(client::Config {
        keepalive_interval: Some(KEEPALIVE),
        keepalive_max: 3,
        ..Default::default()
    });
    let connecting = client::connect(config, (host, port), check);
    let outcome = tokio::time::timeout(CONNECT, connecting).await;
    match outcome {
        Ok(Ok(ssh)) => Ok(ssh),
        Ok(Err(russh::Error::UnknownKey)) => {
            let shown = seen.lock().unwrap().clone();
            let shown = shown.map_or("another key".into(), |k| {
                format!("the key {}", k.fingerprint)
            });
            Err(Error::Certificate {
                message: format!(
                    "Copy target \"{name}\": the SFTP server {host} showed {shown}, not the pinned {}. It may be another machine posing as yours; nothing was sent to it. If the server was reinstalled or its key changed on purpose, remove the target and add it again.",
                    pinned.unwrap_or("key")
                ),
                presented: None,
            })
        }
        Ok(Err(e)) => Err(unreachable_server(name, host, port, &e.to_string())),
        Err(_) => Err(unreachable_server(
            name,
            host,
            port,
            "no answer in 30 seconds",
        )),
    }
}

/// The private key in `key_file`, opened with `passphrase` when it has one.
fn private_key(
    name: &str,
    key_file: &str,
    passphrase: Option<&Secret>,
) -> Result<russh::keys::PrivateKey> {
    let text = std::fs::read_to_string(key_file).map_err(|e| {
        Error::Config(format!(
            "Copy target \"{name}\": the private key file {key_file} cannot be read ({e})."
        ))
    })?;
    let passphrase = passphrase.map(Secret::expose).filter(|p| !p.is_empty());
    let key = russh::keys::decode_secret_key(&text, passphrase).map_err(|e| {
        let advice = match (&e, passphrase) {
            (russh::keys::Error::KeyIsEncrypted, None) => {
                "it is protected by a passphrase: add the target again with it".to_string()
            }
            (_, Some(_)) => format!("is the passphrase right? ({e})"),
            _ => format!(
                "it is not a private key Kluis can read ({e}); give an OpenSSH or PuTTY key file"
            ),
        };
        Error::Config(format!(
            "Copy target \"{name}\": the private key file {key_file} cannot be used: {advice}."
        ))
    })?;
    // Kluis signs with Ed25519 and ECDSA keys: the pure-Rust RSA of the SSH library is a
    // pre-release that conflicts with the one the backups' encryption uses.
    if matches!(key.algorithm(), russh::keys::Algorithm::Rsa { .. }) {
        return Err(Error::Config(format!(
            "Copy target \"{name}\": the private key file {key_file} holds an RSA key, which Kluis does not use. Make an Ed25519 key (ssh-keygen -t ed25519), put its public half in the server's authorized_keys, and add the target again with it."
        )));
    }
    Ok(key)
}

/// A server that cannot be reached.
fn unreachable_server(name: &str, host: &str, port: u16, why: &str) -> Error {
    Error::Network(format!(
        "Copy target \"{name}\": the SFTP server {host} (port {port}) cannot be reached ({why}). Is it on, and are the address and port right? The backup is kept on this computer; the copy is made later."
    ))
}

/// A connection that broke while in use.
pub(crate) fn lost(name: &str, host: &str, why: &str) -> Error {
    Error::Network(format!(
        "Copy target \"{name}\": the connection to the SFTP server {host} broke ({why}). The backup is kept on this computer; the copy goes on from where it stopped next time."
    ))
}
