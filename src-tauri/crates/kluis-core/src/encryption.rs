//! Encryption at rest, optional per profile: the backup is encrypted while it downloads, in
//! the age format (so the `age` tool opens it too), and no plain copy ever touches the disk.
//!
//! - [`EncryptionSetting`]: what a profile keeps — a passphrase (the passphrase itself in the
//!   keyring, never in the profile) or an X25519 recipient (a public key; its identity stays
//!   with whoever holds it, e.g. made with `age-keygen`).
//! - [`Encryption`]: what one download encrypts to, built from the setting and the secret. The
//!   download's writer thread feeds the plain bytes through [`Encryption::seal`] to the part
//!   file, hashing both the plain stream and the encrypted file; the history records both.
//! - [`decrypt`]: the way back (`kluis decrypt`), the plain stream hashed as it is written.
//!
//! A passphrase is stretched with scrypt at the work factor age picks (about a second on this
//! computer), once per backup: the cost of a passphrase that can be guessed at slowly only. A
//! recipient costs nothing per backup.

use std::io::{self, Read, Write};

use age::secrecy::SecretString;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::secret::Secret;

/// A profile's encryption, as kept in the profiles file (no secret in it).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EncryptionSetting {
    /// A passphrase, kept in the keyring.
    Passphrase,
    /// An age X25519 recipient (`age1…`).
    Recipient { recipient: String },
}

impl EncryptionSetting {
    /// Whether encrypting needs the passphrase from the keyring.
    pub fn needs_passphrase(&self) -> bool {
        matches!(self, EncryptionSetting::Passphrase)
    }
}

/// The file name's added extension for an encrypted backup.
pub const EXTENSION: &str = "age";

/// Where a passphrase comes from when it is not in a profile's keyring entry: the environment,
/// never an argument.
pub const PASSPHRASE_VAR: &str = "KLUIS_ENCRYPTION_PASSPHRASE";

/// How every age file begins (its header's version line).
pub const MAGIC: &[u8] = b"age-encryption.org/v1";

/// Whether the file at `path` begins as an age file does (an encrypted part or backup). Only a
/// regular file is read: a link or a FIFO planted at the name is neither followed nor waited on.
pub fn looks_encrypted(path: &std::path::Path) -> bool {
    if !std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file()) {
        return false;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut start = [0u8; MAGIC.len()];
    options
        .open(path)
        .and_then(|mut file| file.read_exact(&mut start))
        .is_ok_and(|()| start == MAGIC)
}

/// Shortest passphrase accepted: below this, scrypt cannot make up for it.
const MIN_PASSPHRASE: usize = 12;

/// What one download encrypts to.
pub struct Encryption {
    recipient: Box<dyn age::Recipient + Send + Sync>,
    /// What it was made from (no secret): a resumed job is encrypted the same way.
    setting: EncryptionSetting,
}

impl std::fmt::Debug for Encryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Encryption")
    }
}

impl Encryption {
    /// Encryption to `passphrase` (at least 12 characters).
    pub fn passphrase(passphrase: &Secret) -> Result<Encryption> {
        check_passphrase(passphrase)?;
        let secret = SecretString::from(passphrase.expose().to_string());
        Ok(Encryption {
            recipient: Box::new(age::scrypt::Recipient::new(secret)),
            setting: EncryptionSetting::Passphrase,
        })
    }

    /// Encryption to the X25519 recipient `text` (`age1…`).
    pub fn recipient(text: &str) -> Result<Encryption> {
        Ok(Encryption {
            recipient: Box::new(parse_recipient(text)?),
            setting: EncryptionSetting::Recipient {
                recipient: text.trim().to_string(),
            },
        })
    }

    /// What this encryption was made from (journalled with a job, so that whoever finishes
    /// the job encrypts as it began: the recipient, or that a passphrase is needed).
    pub fn setting(&self) -> &EncryptionSetting {
        &self.setting
    }

    /// Encryption for `setting`, with the passphrase when it is one.
    pub fn of(setting: &EncryptionSetting, passphrase: Option<&Secret>) -> Result<Encryption> {
        match setting {
            EncryptionSetting::Recipient { recipient } => Encryption::recipient(recipient),
            EncryptionSetting::Passphrase => match passphrase {
                Some(secret) => Encryption::passphrase(secret),
                None => Err(Error::Config("This profile encrypts its backups with a passphrase, but none is saved. Set it again (`kluis encryption NAME --passphrase`).".into())),
            },
        }
    }

    /// A writer that encrypts what is written to it into `out`. Each call starts a new file
    /// (a new file key); [`age::stream::StreamWriter::finish`] ends it.
    pub fn seal<W: Write>(&self, out: W) -> io::Result<age::stream::StreamWriter<W>> {
        let recipient: &dyn age::Recipient = self.recipient.as_ref();
        let encryptor = age::Encryptor::with_recipients(std::iter::once(recipient))
            .map_err(|e| io::Error::other(format!("encryption could not start: {e}")))?;
        encryptor.wrap_output(out)
    }
}

/// Refuses a passphrase too short to protect a backup.
pub fn check_passphrase(passphrase: &Secret) -> Result<()> {
    if passphrase.expose().chars().count() < MIN_PASSPHRASE {
        return Err(Error::Config(format!(
            "An encryption passphrase has at least {MIN_PASSPHRASE} characters; a few words make a good one."
        )));
    }
    Ok(())
}

/// `text` as an age X25519 recipient, or what is wrong with it.
pub fn parse_recipient(text: &str) -> Result<age::x25519::Recipient> {
    text.trim().parse().map_err(|_| {
        Error::Config(
            "That is not an age recipient: it starts with age1 (e.g. from `age-keygen -y`).".into(),
        )
    })
}

/// What opens an encrypted backup.
pub enum DecryptKey {
    Passphrase(Secret),
    /// An age identity (`AGE-SECRET-KEY-1…`), e.g. the contents of `age-keygen`'s file.
    Identity(Secret),
}

/// A reader of the plain bytes of the age file `input`, opened with `key`; it seeks when
/// `input` does (a zip archive's directory is at its end: restore reads it without
/// decrypting the whole file first). Fails, with what to do, when the key does not open it.
pub fn decrypting<R: Read>(input: R, key: &DecryptKey) -> Result<age::stream::StreamReader<R>> {
    let refused = |e: age::DecryptError| match e {
        age::DecryptError::NoMatchingKeys | age::DecryptError::DecryptionFailed => {
            Error::Config("The passphrase or identity does not open this backup.".into())
        }
        e => Error::DownloadFailed(format!("The encrypted backup cannot be read ({e}).")),
    };
    let decryptor = age::Decryptor::new(input).map_err(refused)?;
    let reader = match key {
        DecryptKey::Passphrase(secret) => {
            let identity =
                age::scrypt::Identity::new(SecretString::from(secret.expose().to_string()));
            decryptor.decrypt(std::iter::once(&identity as &dyn age::Identity))
        }
        DecryptKey::Identity(secret) => {
            let identity: age::x25519::Identity = secret.expose().trim().parse().map_err(|_| {
                Error::Config(
                    "That is not an age identity: it starts with AGE-SECRET-KEY-1.".into(),
                )
            })?;
            decryptor.decrypt(std::iter::once(&identity as &dyn age::Identity))
        }
    };
    reader.map_err(refused)
}

/// Decrypts the age file `input` into `out`; returns the plain length and SHA-256. Fails,
/// with what to do, when the key does not open it or the file is damaged.
pub fn decrypt(input: impl Read, key: &DecryptKey, mut out: impl Write) -> Result<(u64, [u8; 32])> {
    let mut reader = decrypting(input, key)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 256 * 1024];
    let mut bytes = 0u64;
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Error::DownloadFailed(format!(
                    "The encrypted backup is damaged: it does not decrypt past byte {bytes} ({e})."
                )))
            }
        };
        hasher.update(&buffer[..n]);
        out.write_all(&buffer[..n])
            .map_err(|e| Error::io("write the decrypted file", e))?;
        bytes += n as u64;
    }
    out.flush()
        .map_err(|e| Error::io("write the decrypted file", e))?;
    Ok((bytes, hasher.finalize().into()))
}
