//! The place `kluis copy-target add` was given — a folder (made a full path), a bucket, or a
//! folder on an SFTP server (its host key read and shown, and pinned) — and the secret it
//! needs, read from the environment or standard input, never from an argument (other users
//! of the computer can read those).

use kluis_copies::s3::{LockMode, ObjectLock, S3Place};
use kluis_copies::sftp::{SftpLogin, SftpPlace};
use kluis_copies::Place;
use kluis_core::{Error, Result, Secret};

use crate::args::{LockModeArg, S3Args, SftpArgs};

/// The place, and the secret it keeps in the keyring (if any).
pub async fn place(
    folder: Option<&std::path::Path>,
    s3: &S3Args,
    sftp: &SftpArgs,
    stdin: bool,
) -> Result<(Place, Option<Secret>)> {
    if let Some(folder) = folder {
        return Ok((
            Place::Folder {
                path: full(folder)?,
            },
            None,
        ));
    }
    if sftp.sftp_host.is_some() {
        return sftp_place(sftp, stdin).await;
    }
    if s3.s3_endpoint.is_none() {
        return Err(Error::Config(
            "Say where the copies go: --folder PATH, --s3-endpoint URL or --sftp-host HOST.".into(),
        ));
    }
    let secret = secret(stdin, "KLUIS_S3_SECRET_KEY", "the bucket's secret key")?;
    Ok((Place::S3(s3_place(s3)?), secret))
}

fn s3_place(s3: &S3Args) -> Result<S3Place> {
    let lock = s3.s3_lock_days.map(|days| ObjectLock {
        days,
        mode: match s3.s3_lock_mode {
            LockModeArg::Governance => LockMode::Governance,
            LockModeArg::Compliance => LockMode::Compliance,
        },
    });
    let ca_cert = s3.s3_ca_cert.as_deref().map(full).transpose()?;
    Ok(S3Place {
        endpoint: s3.s3_endpoint.clone().unwrap_or_default(),
        region: s3.s3_region.clone(),
        bucket: s3.s3_bucket.clone().unwrap_or_default(),
        prefix: s3.s3_prefix.clone(),
        path_style: s3.s3_path_style,
        access_key_id: s3.s3_access_key_id.clone().unwrap_or_default(),
        lock,
        ca_cert,
    })
}

/// The SFTP place: the server's host key is read now and shown; the one given with
/// `--sftp-host-key` must match it, else the one shown is pinned (first use) — the office
/// compares it with the server's own.
async fn sftp_place(sftp: &SftpArgs, stdin: bool) -> Result<(Place, Option<Secret>)> {
    // Checked as a place checks it, before anything is asked of the server.
    let host = kluis_copies::sftp::checked_host(sftp.sftp_host.as_deref().unwrap_or_default())?;
    let (login, secret) = match &sftp.sftp_key {
        Some(key) => {
            let login = SftpLogin::Key {
                key_file: full(key)?,
            };
            let passphrase = optional_secret(stdin, "KLUIS_SFTP_PASSPHRASE")?;
            (login, passphrase)
        }
        None => {
            let password = secret(stdin, "KLUIS_SFTP_PASSWORD", "the SFTP password")?;
            (SftpLogin::Password, password)
        }
    };
    let port = sftp.sftp_port;
    let shown = kluis_copies::sftp::host_key("new target", &host, port).await?;
    match &sftp.sftp_host_key {
        Some(expected) if expected.trim() != shown.fingerprint => {
            return Err(Error::Certificate {
                message: format!(
                    "The SFTP server {host} showed the host key {}, not the {} you gave. It may be another machine posing as yours; nothing was sent to it.",
                    shown.fingerprint,
                    expected.trim()
                ),
                presented: None,
            });
        }
        Some(_) => {}
        None => eprintln!(
            "kluis: the SFTP server {host} shows the host key {} ({}); it is pinned: a server showing another is refused. Compare it with the server's own (on the server: ssh-keygen -l -f /etc/ssh/ssh_host_ed25519_key.pub).",
            shown.fingerprint, shown.algorithm
        ),
    }
    let place = SftpPlace {
        host,
        port,
        user: sftp.sftp_user.clone().unwrap_or_default(),
        path: sftp.sftp_path.clone().unwrap_or_default(),
        login,
        host_key: shown.fingerprint,
    };
    Ok((Place::Sftp(place), secret))
}

/// `path` made a full path.
fn full(path: &std::path::Path) -> Result<String> {
    std::path::absolute(path)
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| Error::io(format!("find {}", path.display()), e))
}

/// A secret that must be given: the first line of standard input with `--stdin`, else the
/// environment variable `variable`.
fn secret(stdin: bool, variable: &str, what: &str) -> Result<Option<Secret>> {
    match optional_secret(stdin, variable)? {
        Some(secret) => Ok(Some(secret)),
        None => Err(Error::Config(format!(
            "Give {what} in {variable}, or on standard input with --stdin."
        ))),
    }
}

/// The same, where none may be given (a key file without a passphrase).
fn optional_secret(stdin: bool, variable: &str) -> Result<Option<Secret>> {
    let secret = match stdin {
        true => crate::encryption::first_line_of_stdin("the secret")?,
        false => Secret::new(std::env::var(variable).unwrap_or_default()),
    };
    Ok((!secret.is_empty()).then_some(secret))
}
