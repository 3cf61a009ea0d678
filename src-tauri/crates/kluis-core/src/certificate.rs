//! A certificate as a person checks it: its subject and SHA-256 fingerprint ([`TrustedCa`],
//! [`fingerprint`]). A leaf: `trust` reads the CAs a profile trusts with it, and `presented`
//! names what a server sent.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// One trusted certificate, as a person checks it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrustedCa {
    /// The subject's distinguished name, e.g. `CN=Office Proxy CA, O=Bakker B.V.`.
    pub subject: String,
    /// SHA-256 of the certificate, as `AB:CD:…` (what certificate viewers show).
    pub sha256: String,
}

impl TrustedCa {
    /// Certificate `der` described (`None`: it is not one).
    pub fn of(der: &[u8]) -> Option<TrustedCa> {
        let (_, certificate) = x509_parser::parse_x509_certificate(der).ok()?;
        Some(TrustedCa {
            subject: certificate.subject().to_string(),
            sha256: fingerprint(der),
        })
    }
}

/// SHA-256 of a certificate as certificate viewers show it: `AB:CD:…`.
pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}
