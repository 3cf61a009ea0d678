//! A PC's report sealed with the office key before it goes to the hub, which keeps bytes it
//! cannot read: XChaCha20-Poly1305 under a key made from the office key for reports alone, a
//! random 24-byte nonce (random nonces this long never repeat in practice), and the PC's name
//! bound as associated data — the hub cannot pass one PC's report off as another's, nor change
//! a byte unnoticed. It can still hand back an older report of the same PC; the report carries
//! when it was sent, and the view says it.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::error::{OfficeError, OfficeResult};
use crate::key::OfficeKey;

/// What a sealed report starts with: its format.
const MAGIC: &[u8; 4] = b"KOR1";
const NONCE: usize = 24;

fn cipher(key: &OfficeKey) -> XChaCha20Poly1305 {
    XChaCha20Poly1305::new(&key.derived("kluis office report v1").into())
}

/// `plain` (PC `pc`'s report) sealed with `key`.
pub fn seal(key: &OfficeKey, pc: &str, plain: &[u8]) -> OfficeResult<Vec<u8>> {
    let mut nonce = [0u8; NONCE];
    getrandom::fill(&mut nonce)
        .map_err(|e| OfficeError::Input(format!("No randomness to seal a report: {e}.")))?;
    let sealed = cipher(key)
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: plain,
                aad: pc.as_bytes(),
            },
        )
        .map_err(|_| OfficeError::Input("The report could not be sealed.".into()))?;
    Ok([&MAGIC[..], &nonce, &sealed].concat())
}

/// PC `pc`'s report opened with `key`; an error when it was sealed with another key, for
/// another PC, or changed.
pub fn open(key: &OfficeKey, pc: &str, sealed: &[u8]) -> OfficeResult<Vec<u8>> {
    let refused = || {
        OfficeError::Unexpected(format!(
            "{pc}'s report cannot be opened with this PC's office key (another office key, or changed on the way)"
        ))
    };
    let body = sealed.strip_prefix(&MAGIC[..]).ok_or_else(refused)?;
    if body.len() < NONCE {
        return Err(refused());
    }
    let (nonce, sealed) = body.split_at(NONCE);
    cipher(key)
        .decrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: sealed,
                aad: pc.as_bytes(),
            },
        )
        .map_err(|_| refused())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report opens with the office key for the PC it was sealed for, and with nothing else:
    /// another office's key, another PC's name, a changed byte, a cut or an empty one.
    #[test]
    fn a_report_opens_only_as_sealed() {
        let key = OfficeKey::generate().unwrap();
        let sealed = seal(&key, "RECEPTIE", b"every klant").unwrap();
        assert_eq!(open(&key, "RECEPTIE", &sealed).unwrap(), b"every klant");
        assert_ne!(
            seal(&key, "RECEPTIE", b"every klant").unwrap(),
            sealed,
            "a nonce each time"
        );
        assert!(
            !sealed.windows(11).any(|w| w == b"every klant"),
            "not readable on the way"
        );
        let other = OfficeKey::generate().unwrap();
        assert!(
            open(&other, "RECEPTIE", &sealed).is_err(),
            "another office's key"
        );
        assert!(
            open(&key, "BALIE", &sealed).is_err(),
            "passed off as another PC's"
        );
        let mut changed = sealed.clone();
        *changed.last_mut().unwrap() ^= 1;
        assert!(open(&key, "RECEPTIE", &changed).is_err(), "changed");
        for cut in [&sealed[..sealed.len() - 1], &sealed[..10], b"", b"KOR1"] {
            assert!(open(&key, "RECEPTIE", cut).is_err(), "{} bytes", cut.len());
        }
    }
}
