//! Encryption at rest from the command line: `kluis encryption NAME` sets a profile's
//! (a passphrase kept in the keyring, or an age recipient), `backup --encrypt-to` encrypts one
//! backup of the service given by flags, and `kluis decrypt` restores a file — checked against
//! the digest the history recorded when it was saved.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kluis_core::encryption::{decrypt, DecryptKey, Encryption, EncryptionSetting, EXTENSION};
use kluis_core::{Error, Result, Secret};
use kluis_profiles::{Profile, ProfileError, SecretKind, SecretStore};

use crate::args::Cli;
use crate::from_args::{open_history, open_profiles};
use crate::secrets::{secret, secret_store};

pub use kluis_core::encryption::PASSPHRASE_VAR;

/// What encrypts `profile`'s backups, if it asks for it (its passphrase from `secrets`).
pub async fn of_profile(
    secrets: &Arc<dyn SecretStore>,
    profile: &Profile,
) -> Result<Option<Arc<Encryption>>> {
    let Some(setting) = &profile.encryption else {
        return Ok(None);
    };
    let kind = SecretKind::EncryptionPassphrase;
    let passphrase = match setting.needs_passphrase() {
        true => secret(secrets, &profile.id, kind).await?,
        false => None,
    };
    Ok(Some(Arc::new(Encryption::of(
        setting,
        passphrase.as_ref(),
    )?)))
}

/// `backup --encrypt-to R` / `--encrypt-passphrase` for a backup of the service given by flags.
pub fn of_flags(recipient: Option<&str>, passphrase: bool) -> Result<Option<Arc<Encryption>>> {
    let encryption = match (recipient, passphrase) {
        (Some(recipient), _) => Encryption::recipient(recipient)?,
        (None, true) => Encryption::passphrase(&passphrase_from_env()?)?,
        (None, false) => return Ok(None),
    };
    Ok(Some(Arc::new(encryption)))
}

/// The encryption to finish a journalled job with, as it began (`setting`, from its journal):
/// the recipient as it was, or the passphrase from [`PASSPHRASE_VAR`], else from the keyring
/// entry of the job's saved profile (`profile`). Without one the job is refused, never
/// finished in plain.
pub async fn to_resume(
    setting: &EncryptionSetting,
    profile: &str,
    profiles_file: Option<&PathBuf>,
) -> Result<Arc<Encryption>> {
    let passphrase = match setting {
        EncryptionSetting::Recipient { .. } => None,
        EncryptionSetting::Passphrase => match passphrase_from_env() {
            Ok(passphrase) => Some(passphrase),
            Err(_) => {
                let saved = match open_profiles(profiles_file).map(|p| p.get(profile)) {
                    Ok(Ok(saved)) => {
                        secret(&secret_store(), &saved.id, SecretKind::EncryptionPassphrase).await?
                    }
                    _ => None,
                };
                Some(saved.ok_or_else(|| Error::Config(format!(
                    "This backup was started encrypted with a passphrase; it is never finished in plain. Give the passphrase in {PASSPHRASE_VAR} to resume it."
                )))?)
            }
        },
    };
    Ok(Arc::new(Encryption::of(setting, passphrase.as_ref())?))
}

fn passphrase_from_env() -> Result<Secret> {
    match std::env::var(PASSPHRASE_VAR) {
        Ok(value) if !value.is_empty() => Ok(Secret::new(value)),
        _ => Err(Error::Config(format!(
            "Give the encryption passphrase in {PASSPHRASE_VAR} (never as an argument)."
        ))),
    }
}

/// How `kluis encryption NAME` changes a profile.
pub enum Change {
    Passphrase { stdin: bool },
    Recipient(String),
    Off,
}

/// `kluis encryption NAME …`: sets or removes the profile's encryption.
pub async fn set(cli: &Cli, name: &str, change: Change) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let profile = profiles.find(name).map_err(ProfileError::into_core)?;
    let secrets = secret_store();
    let setting = match change {
        Change::Passphrase { stdin } => {
            let passphrase = match stdin {
                true => first_line_of_stdin("the passphrase")?,
                false => passphrase_from_env()?,
            };
            kluis_core::encryption::check_passphrase(&passphrase)?;
            let (store, id) = (secrets.clone(), profile.id.clone());
            kluis_profiles::secrets::off_thread(store, move |store| {
                store.set(&id, SecretKind::EncryptionPassphrase, &passphrase)
            })
            .await
            .map_err(ProfileError::into_core)?;
            Some(EncryptionSetting::Passphrase)
        }
        Change::Recipient(text) => {
            let recipient = kluis_core::encryption::parse_recipient(&text)?.to_string();
            Some(EncryptionSetting::Recipient { recipient })
        }
        Change::Off => None,
    };
    let said = match &setting {
        Some(EncryptionSetting::Passphrase) => "with the saved passphrase. Keep a copy of it somewhere safe: without it the backups cannot be opened".to_string(),
        Some(EncryptionSetting::Recipient { recipient }) => format!("to {recipient}; only its identity opens them"),
        None => String::new(),
    };
    profiles
        .update(&profile.id, |p| {
            p.encryption = setting.clone();
            Ok(())
        })
        .map_err(ProfileError::into_core)?;
    if setting.is_none() {
        let (store, id) = (secrets.clone(), profile.id.clone());
        kluis_profiles::secrets::off_thread(store, move |store| {
            store.delete(&id, SecretKind::EncryptionPassphrase)
        })
        .await
        .map_err(ProfileError::into_core)?;
        eprintln!(
            "kluis: {}: backups are saved unencrypted from now on.",
            profile.name
        );
    } else {
        eprintln!(
            "kluis: {}: backups are encrypted from now on, {said}.",
            profile.name
        );
    }
    Ok(())
}

/// The first line of standard input (without its line end): `what` (a passphrase, a secret)
/// given where other users cannot read it.
pub(crate) fn first_line_of_stdin(what: &str) -> Result<Secret> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| Error::io(format!("read {what} from standard input"), e))?;
    Ok(Secret::new(line.trim_end_matches(['\r', '\n'])))
}

/// `kluis decrypt FILE --out DIR`: decrypts `file` into `out` (owner-only, under a name that
/// overwrites nothing, written whole or not at all) and checks it against the plain digest the
/// history recorded for it. The key: `--identity FILE`, else `KLUIS_ENCRYPTION_PASSPHRASE`,
/// else the passphrase saved for the profile whose backup it is.
pub async fn decrypt_file(
    cli: &Cli,
    file: &Path,
    out: &Path,
    identity: Option<&Path>,
) -> Result<()> {
    let (key, recorded) = key_for(cli, file, identity).await?;
    let name = plain_name(file)?;
    let checked = match recorded.is_some() {
        true => "its SHA-256 is the one recorded when it was saved",
        false => "it is not in this history, so there was no SHA-256 to check it against",
    };
    let (file, out, expected) = (
        file.to_path_buf(),
        out.to_path_buf(),
        recorded.and_then(|e| e.sha256),
    );
    let saved =
        tokio::task::spawn_blocking(move || write_plain(&file, &out, &name, &key, expected))
            .await
            .map_err(|e| Error::Io(format!("Decrypting stopped unexpectedly ({e}).")))??;
    eprintln!("kluis: decrypted; {checked}.");
    println!("{}", saved.display());
    Ok(())
}

/// What opens the encrypted backup `file`: `--identity FILE`, else
/// `KLUIS_ENCRYPTION_PASSPHRASE`, else the passphrase saved for the profile whose backup the
/// history says it is; and that history row, when there is one.
pub async fn key_for(
    cli: &Cli,
    file: &Path,
    identity: Option<&Path>,
) -> Result<(DecryptKey, Option<kluis_core::HistoryEntry>)> {
    let history = open_history(cli.history_db.as_ref())?;
    // The history records absolute paths (as `std::path::absolute` makes them): a file named
    // relative to here is looked up as one, or its check would be skipped.
    let absolute =
        std::path::absolute(file).map_err(|e| Error::io(format!("find {}", file.display()), e))?;
    let recorded = history.by_path(&absolute.to_string_lossy())?;
    let key = match identity {
        Some(path) => DecryptKey::Identity(identity_in(path)?),
        None => match passphrase_from_env() {
            Ok(passphrase) => DecryptKey::Passphrase(passphrase),
            Err(_) => {
                let saved = match &recorded {
                    Some(entry) => {
                        secret(
                            &secret_store(),
                            entry.profile.as_str(),
                            SecretKind::EncryptionPassphrase,
                        )
                        .await?
                    }
                    None => None,
                };
                DecryptKey::Passphrase(saved.ok_or_else(|| Error::Config(format!(
                    "Say what opens this backup: --identity FILE, or its passphrase in {PASSPHRASE_VAR}."
                )))?)
            }
        },
    };
    Ok((key, recorded))
}

/// The name without `.age`.
fn plain_name(file: &Path) -> Result<String> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let suffix = format!(".{EXTENSION}");
    match name.strip_suffix(&suffix) {
        Some(plain) if !plain.is_empty() => Ok(plain.to_string()),
        _ => Err(Error::Config(format!(
            "{} is not an encrypted backup (its name ends in .{EXTENSION}).",
            file.display()
        ))),
    }
}

/// The `AGE-SECRET-KEY-1…` line of an identity file.
fn identity_in(path: &Path) -> Result<Secret> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("read {}", path.display()), e))?;
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("AGE-SECRET-KEY-1"));
    line.map(Secret::new).ok_or_else(|| {
        Error::Config(format!(
            "{} holds no age identity (AGE-SECRET-KEY-1…).",
            path.display()
        ))
    })
}

fn write_plain(
    file: &Path,
    out: &Path,
    name: &str,
    key: &DecryptKey,
    expected: Option<String>,
) -> Result<PathBuf> {
    let input =
        std::fs::File::open(file).map_err(|e| Error::io(format!("open {}", file.display()), e))?;
    kluis_private::files::create_dir_all(out)
        .map_err(|e| Error::io(format!("create {}", out.display()), e))?;
    let mut part = tempfile::Builder::new()
        .prefix(".kluis-")
        .suffix(".part")
        .tempfile_in(out)
        .map_err(|e| Error::io(format!("create a file in {}", out.display()), e))?;
    kluis_private::files::restrict(part.as_file())
        .map_err(|e| Error::io("protect the decrypted file", e))?;
    let (_, sha256) = decrypt(
        std::io::BufReader::new(input),
        key,
        std::io::BufWriter::new(part.as_file_mut()),
    )?;
    if let Some(expected) = expected {
        if hex::encode(sha256) != expected {
            return Err(Error::DownloadFailed(
                "The decrypted file does not match the backup's recorded SHA-256; it was not kept."
                    .into(),
            ));
        }
    }
    part.as_file()
        .sync_all()
        .map_err(|e| Error::io("write the decrypted file", e))?;
    let name = kluis_core::filename::sanitize(name).unwrap_or_else(|| "backup".into());
    let target = out.join(name);
    // Never over a file that is there: the user says where else.
    part.persist_noclobber(&target).map_err(|e| {
        Error::io(
            format!(
                "save {} (is a file of that name there already? Choose another --out)",
                target.display()
            ),
            e.error,
        )
    })?;
    Ok(target)
}
