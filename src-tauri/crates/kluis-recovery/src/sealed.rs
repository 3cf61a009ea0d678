//! Documents sealed to the office's key: a catalog or a copy's record as JSON, encrypted with
//! age to the [`OfficeKey`] (only the recovery kit's [`RecoveryKey`] opens it: a reader of the
//! bucket, or of the NAS share, learns nothing from it — not the klanten's names, nor the
//! passphrases of their encrypted backups), and opened again within bounds.
//!
//! Sealing alone proves nothing of who wrote a document: the public half is on every target.
//! So the sealed text is a tag under the [`VouchKey`] (32 bytes) and then the JSON: a
//! document without the tag of this office's vouch key is not read. Whoever holds the vouch
//! key — each computer that writes catalogs, in its keyring — can still write one that is
//! read; recovery therefore also shows each catalog's date and computer, can go back to an
//! earlier one, and checks every copy's bytes against its SHA-256 before it restores
//! (`found.rs`, kluis-cli's `recover`).

use std::io::{Read, Write};

use kluis_core::{Error, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::key::{OfficeKey, RecoveryKey, VouchKey};

/// Largest sealed document read: a catalog of 200 klanten with 50 copies each is some MiB.
pub const MAX_SEALED: u64 = 64 * 1024 * 1024;

/// Length of the tag before the JSON.
const TAG: usize = 32;

/// `document` as JSON, tagged with `vouch` and sealed to `to`.
pub fn seal<T: Serialize>(document: &T, to: &OfficeKey, vouch: &VouchKey) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(document)
        .map_err(|e| Error::Io(format!("A recovery document could not be written ({e}).")))?;
    let mut json = [&vouch.tag(&json)[..], &json].concat();
    let recipients: [&dyn age::Recipient; 1] = [to.recipient()];
    let encryptor = age::Encryptor::with_recipients(recipients.into_iter())
        .map_err(|e| Error::Io(format!("A recovery document could not be sealed ({e}).")))?;
    let mut sealed = Vec::with_capacity(json.len() + 512);
    let mut writer = encryptor
        .wrap_output(&mut sealed)
        .map_err(|e| Error::Io(format!("A recovery document could not be sealed ({e}).")))?;
    writer
        .write_all(&json)
        .and_then(|()| writer.finish().map(|_| ()))
        .inspect(|()| json.clear())
        .map_err(|e| Error::Io(format!("A recovery document could not be sealed ({e}).")))?;
    Ok(sealed)
}

/// Why a sealed document is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// It is not sealed to this key (another office's, or a key since made new).
    OtherKey,
    /// It was changed or cut short after it was sealed (age's authentication fails).
    Damaged,
    /// It opens, but no computer of this office wrote it: someone sealed it to the office's
    /// public key (which is on the target) without the office's vouch key.
    NotVouched,
    /// It opens, but is not the document asked for (a newer Kluis's format, or not Kluis's);
    /// where the JSON went wrong, never what it holds (it may hold a passphrase).
    NotOurs(String),
    /// Larger than any such document.
    TooLarge,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::OtherKey => f.write_str("it was written for another recovery key"),
            Unreadable::Damaged => f.write_str("it was changed or cut short after it was written"),
            Unreadable::NotVouched => f.write_str(
                "no computer of this office wrote it (someone else sealed it to the office's key): it is not trusted",
            ),
            Unreadable::NotOurs(why) => write!(f, "it is not a document this Kluis reads ({why})"),
            Unreadable::TooLarge => f.write_str("it is larger than any Kluis document"),
        }
    }
}

/// The document sealed in `bytes`, opened with `key`.
pub fn open<T: DeserializeOwned>(
    bytes: &[u8],
    key: &RecoveryKey,
) -> std::result::Result<T, Unreadable> {
    if bytes.len() as u64 > MAX_SEALED {
        return Err(Unreadable::TooLarge);
    }
    let decryptor = age::Decryptor::new(bytes).map_err(|_| Unreadable::Damaged)?;
    let identities: [&dyn age::Identity; 1] = [key.identity()];
    let mut reader = decryptor
        .decrypt(identities.into_iter())
        .map_err(|e| match e {
            age::DecryptError::NoMatchingKeys => Unreadable::OtherKey,
            _ => Unreadable::Damaged,
        })?;
    let mut json = Vec::new();
    (&mut reader)
        .take(MAX_SEALED + 1)
        .read_to_end(&mut json)
        .map_err(|_| Unreadable::Damaged)?;
    if json.len() as u64 > MAX_SEALED {
        return Err(Unreadable::TooLarge);
    }
    if json.len() < TAG {
        return Err(Unreadable::NotVouched);
    }
    let (tag, json) = json.split_at(TAG);
    if !key.vouch_key().vouches(json, tag) {
        return Err(Unreadable::NotVouched);
    }
    serde_json::from_slice(json).map_err(|e| {
        // serde's own message may quote a value (a passphrase): its place only.
        Unreadable::NotOurs(format!("at line {}, column {}", e.line(), e.column()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Note {
        text: String,
    }

    /// A sealed document opens with its key only; one byte changed is damaged, not read; one
    /// sealed to the office key (public, on the target) but not vouched for by the office's
    /// vouch key is not trusted; a document of another shape is said as not ours, without
    /// quoting it; the sealed bytes hold no plain text.
    #[test]
    fn sealed_documents_open_with_their_key_only() {
        let key = RecoveryKey::generate();
        let note = Note {
            text: "Bakker B.V. — geheime zin".into(),
        };
        let sealed = seal(&note, &key.office_key(), &key.vouch_key()).unwrap();
        assert!(!String::from_utf8_lossy(&sealed).contains("Bakker"));
        assert_eq!(open::<Note>(&sealed, &key).unwrap(), note);
        let other = RecoveryKey::generate();
        assert_eq!(
            open::<Note>(&sealed, &other).unwrap_err(),
            Unreadable::OtherKey
        );
        let mut changed = sealed.clone();
        let last = changed.len() - 10;
        changed[last] ^= 1;
        assert_eq!(
            open::<Note>(&changed, &key).unwrap_err(),
            Unreadable::Damaged
        );
        assert_eq!(
            open::<Note>(&sealed[..sealed.len() / 2], &key).unwrap_err(),
            Unreadable::Damaged
        );
        let list = seal(&[1, 2, 3], &key.office_key(), &key.vouch_key()).unwrap();
        assert!(matches!(
            open::<Note>(&list, &key),
            Err(Unreadable::NotOurs(_))
        ));
        assert_eq!(
            open::<Note>(b"not age at all", &key).unwrap_err(),
            Unreadable::Damaged
        );
        let forger = RecoveryKey::generate().vouch_key();
        let forged = seal(&note, &key.office_key(), &forger).unwrap();
        assert_eq!(
            open::<Note>(&forged, &key).unwrap_err(),
            Unreadable::NotVouched,
            "sealed to the office key by someone without its vouch key"
        );
        let secret = seal(&"geheime zin", &key.office_key(), &key.vouch_key()).unwrap();
        let said = open::<Note>(&secret, &key).unwrap_err().to_string();
        assert!(!said.contains("geheime"), "{said}");
    }
}
