//! The office key and the klant ids made with it.
//!
//! The office key is 32 random bytes the office's PCs share (the first PC to join makes it, a
//! join code carries it to the next) and the hub never receives. A klant is known at the hub
//! only by its [`KlantId`]: HMAC-SHA256 with the office key of the klant's service (the base
//! URL's host, port and path) and username. So the hub, or a provider running one hub for many
//! offices, cannot tell which klant an id is, nor link one office's klant to another's; and two
//! PCs that named the klant differently ("De Vries", "de vries bv") still make the same id.

use hmac::{Hmac, Mac};
use kluis_core::Secret;
use sha2::Sha256;

use crate::error::{OfficeError, OfficeResult};

/// How an office key is written (to paste into a join code, or the keyring).
const PREFIX: &str = "kluis-office-key-";

/// The key the office's PCs share. Formatting it shows a placeholder (it is a [`Secret`]).
#[derive(Clone, PartialEq, Eq)]
pub struct OfficeKey(Secret);

impl OfficeKey {
    /// A new office key, from the operating system's randomness.
    pub fn generate() -> OfficeResult<Self> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| OfficeError::Input(format!("No randomness for an office key: {e}.")))?;
        Ok(OfficeKey(Secret::new(format!(
            "{PREFIX}{}",
            hex::encode(bytes)
        ))))
    }

    /// The office key written as `text` (as [`OfficeKey::text`] gives it).
    pub fn parse(text: &str) -> OfficeResult<Self> {
        let hex_part = text.trim().strip_prefix(PREFIX).unwrap_or_default();
        match hex_part.len() == 64 && hex_part.bytes().all(|b| b.is_ascii_hexdigit()) {
            true => Ok(OfficeKey(Secret::new(format!(
                "{PREFIX}{}",
                hex_part.to_ascii_lowercase()
            )))),
            false => Err(OfficeError::Input(
                "That is not an office key (kluis-office-key- and 64 hex digits): copy it again from the join code.".into(),
            )),
        }
    }

    /// The key as text, for the keyring and a join code.
    pub fn text(&self) -> &Secret {
        &self.0
    }

    fn bytes(&self) -> Vec<u8> {
        hex::decode(&self.0.expose()[PREFIX.len()..]).unwrap_or_default()
    }

    /// What the hub keeps to tell this office key from another (64 hex digits): a keyed hash
    /// of it, from which the key cannot be found.
    pub fn check_value(&self) -> String {
        hex::encode(self.derived("kluis office key check v1"))
    }

    /// A key of its own for `purpose`, made from the office key: the klant ids and the sealed
    /// reports never share one.
    pub(crate) fn derived(&self, purpose: &str) -> [u8; 32] {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.bytes()).expect("HMAC takes a key of any length");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

impl std::fmt::Debug for OfficeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OfficeKey(…)")
    }
}

/// A klant as the hub knows it: 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KlantId(String);

impl KlantId {
    /// The id of the klant at `base_url` (the service's address) with `username`, in the office
    /// of `key`. The host is compared as DNS does (without case), with its port (the scheme's
    /// when none is written), path (without a trailing `/`) and query; the username exactly — two
    /// usernames that differ only in case may be two klanten, and taking them for one would
    /// leave one backed up by nobody.
    pub fn of(key: &OfficeKey, base_url: &str, username: &str) -> OfficeResult<Self> {
        let url = url::Url::parse(base_url.trim())
            .map_err(|_| OfficeError::Input("The klant's service address is not a URL.".into()))?;
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let port = url.port_or_known_default().unwrap_or(0);
        let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
        let service = format!("{host}:{port}{}{query}", url.path().trim_end_matches('/'));
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&key.bytes()).expect("HMAC takes a key of any length");
        // Lengths first: no two (service, username) pairs make the same input.
        for part in [service.as_bytes(), username.as_bytes()] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        Ok(KlantId(hex::encode(mac.finalize().into_bytes())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same klant makes the same id however its address is written, another username or
    /// service another id, and another office's key another id altogether.
    #[test]
    fn a_klant_is_known_by_its_service_and_username_only() {
        let key = OfficeKey::generate().unwrap();
        let id = |url: &str, user: &str| KlantId::of(&key, url, user).unwrap();
        let devries = id("https://api.example.nl/webservice_v2", "devries");
        assert_eq!(devries.as_str().len(), 64);
        for same in [
            "https://API.Example.nl/webservice_v2/",
            "https://api.example.nl:443/webservice_v2",
            " https://api.example.nl/webservice_v2 ",
        ] {
            assert_eq!(id(same, "devries"), devries, "{same} is the same service");
        }
        assert_ne!(
            id("https://api.example.nl/webservice_v2", "DeVries"),
            devries
        );
        assert_ne!(
            id("https://api.example.nl:8443/webservice_v2", "devries"),
            devries
        );
        assert_ne!(id("https://api.example.nl/other", "devries"), devries);
        assert_ne!(
            id("https://api.example.nl/webservice_v2?tenant=2", "devries"),
            devries
        );
        let other_office = OfficeKey::generate().unwrap();
        assert_ne!(
            KlantId::of(
                &other_office,
                "https://api.example.nl/webservice_v2",
                "devries"
            )
            .unwrap(),
            devries
        );
        // The host and username cannot run into each other.
        assert_ne!(id("https://a.nl/x", "y"), id("https://a.nl/", "xy"));
    }

    /// A key is read back as written, its case aside; anything else is refused, and a key
    /// never shows itself in a message or a debug line.
    #[test]
    fn an_office_key_reads_back_and_hides_itself() {
        let key = OfficeKey::generate().unwrap();
        let text = key.text().expose().to_string();
        assert_eq!(OfficeKey::parse(&text).unwrap(), key);
        assert_eq!(
            OfficeKey::parse(
                &text
                    .to_ascii_uppercase()
                    .replace("KLUIS-OFFICE-KEY-", PREFIX)
            )
            .unwrap(),
            key
        );
        for bad in [
            "",
            "kluis-office-key-",
            &text[..text.len() - 1],
            &format!("{text}0"),
            &text.replace(PREFIX, ""),
        ] {
            assert!(OfficeKey::parse(bad).is_err(), "{bad:?} is not a key");
        }
        assert!(!format!("{key:?}").contains(&text[PREFIX.len()..]));
        assert!(KlantId::of(&key, "not a url", "x").is_err());
    }
}
