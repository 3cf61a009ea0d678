//! [`Membership`]: the office this PC joined, as the settings file keeps it. Nothing secret:
//! this PC's key at the hub and the office key are in the keyring.

use serde::{Deserialize, Serialize};

use crate::error::{OfficeError, OfficeResult};

/// The office this PC is part of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Membership {
    /// The hub's address (`https://…`, the office's kluis-relay).
    pub hub: String,
    /// This PC's name at the hub (what the other PCs read: "backed up by RECEPTIE").
    pub pc: String,
    /// A CA the hub's certificate is signed by, besides the system's (a hub on the office's
    /// own network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub_ca_pem: Option<String>,
    /// When this PC joined (Unix milliseconds).
    pub joined_ms: i64,
}

impl Membership {
    /// The hub's address checked: https (this PC's key goes there), with a host, no user or
    /// password, no query or fragment.
    pub fn check_hub(hub: &str) -> OfficeResult<url::Url> {
        let url = url::Url::parse(hub.trim()).map_err(|_| {
            OfficeError::Input(
                "The hub's address is not a URL: give it as https://hub.example.nl.".into(),
            )
        })?;
        kluis_core::config::check_url(&url, false).map_err(|why| {
            OfficeError::Input(format!(
                "The hub's address {why}: give it as https://hub.example.nl."
            ))
        })?;
        if !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
        {
            return Err(OfficeError::Input(
                "The hub's address carries no name, password, query or #: give it as https://hub.example.nl.".into(),
            ));
        }
        Ok(url)
    }

    /// A PC's name checked as the hub checks it: 1 to 63 letters, digits, spaces, `.`, `_` or
    /// `-`, starting with a letter or digit. The hub's rule (kluis-relay's
    /// `storage::office::check_pc_name`), written again here rather than making every PC link
    /// the relay; a test holds the two to the same answers.
    pub fn check_pc_name(name: &str) -> OfficeResult<()> {
        let ok = (1..=63).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b" ._-".contains(&b))
            && name.as_bytes()[0].is_ascii_alphanumeric()
            && !name.ends_with(' ');
        match ok {
            true => Ok(()),
            false => Err(OfficeError::Input(
                "A PC's name is 1 to 63 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit (RECEPTIE, pc-2).".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only an https hub address is taken, without credentials or a query; PC names are
    /// checked as the hub checks them.
    #[test]
    fn a_hub_address_and_a_pc_name_are_checked() {
        assert!(Membership::check_hub("https://hub.example.nl").is_ok());
        assert!(Membership::check_hub("https://hub.example.nl:8443/relay").is_ok());
        for bad in [
            "hub.example.nl",
            "http://hub.example.nl",
            "https://user:pw@hub.example.nl",
            "https://hub.example.nl/?x=1",
            "ftp://hub.example.nl",
        ] {
            assert!(Membership::check_hub(bad).is_err(), "{bad} refused");
        }
        for good in ["RECEPTIE", "pc-2", "Balie 1", "a"] {
            assert!(Membership::check_pc_name(good).is_ok(), "{good}");
        }
        for bad in ["", " x", "x ", "-x", "a/b", "é", &"x".repeat(64)] {
            assert!(Membership::check_pc_name(bad).is_err(), "{bad:?}");
        }
    }
}
