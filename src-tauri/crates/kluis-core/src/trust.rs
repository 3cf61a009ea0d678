//! Extra certificate authorities a profile trusts — a service's private CA, or the CA of an
//! office proxy that inspects TLS: read from PEM, checked, and described by subject and
//! SHA-256 fingerprint, so a person can compare them with what the service operator or the
//! office's IT gives them before trusting one.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

pub use crate::certificate::TrustedCa;
use crate::error::{Error, Result};

/// The most PEM text read from a file the user picked (a CA bundle is a few KiB).
pub const MAX_PEM_BYTES: usize = 256 * 1024;

/// The certificates in `pem`, described; refused (with what to do) when there is none, one
/// does not parse, or there are more than a bundle would hold.
pub fn describe(pem: &str) -> Result<Vec<TrustedCa>> {
    let refuse = |why: &str| {
        Error::Config(format!(
            "{why} Choose the certificate (a .pem or .crt file in PEM form, starting with -----BEGIN CERTIFICATE-----) your service operator or IT department gave you."
        ))
    };
    if pem.len() > MAX_PEM_BYTES {
        return Err(refuse("That file is too large for a certificate."));
    }
    let mut described = Vec::new();
    for der in CertificateDer::pem_slice_iter(pem.as_bytes()) {
        let der = der.map_err(|_| refuse("That file is not a readable PEM certificate."))?;
        let ca = TrustedCa::of(&der)
            .ok_or_else(|| refuse("That file holds something that is not a certificate."))?;
        described.push(ca);
        if described.len() > 32 {
            return Err(refuse("That file holds too many certificates."));
        }
    }
    if described.is_empty() {
        return Err(refuse("That file holds no certificate."));
    }
    Ok(described)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CA's certificate is described by its subject and the fingerprint viewers show.
    #[test]
    fn describes_a_certificate() {
        let ca = kluis_https::LocalCa::generate("Office Proxy CA").unwrap();
        let described = describe(&ca.ca_pem()).unwrap();
        assert_eq!(described.len(), 1);
        assert!(
            described[0].subject.contains("Office Proxy CA"),
            "{described:?}"
        );
        let fingerprint = &described[0].sha256;
        assert_eq!(fingerprint.len(), 32 * 3 - 1);
        assert!(fingerprint
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':'));
    }

    /// Two certificates (a bundle) are both described, in order.
    #[test]
    fn describes_a_bundle() {
        let a = kluis_https::LocalCa::generate("First CA").unwrap();
        let b = kluis_https::LocalCa::generate("Second CA").unwrap();
        let both = describe(&format!("{}{}", a.ca_pem(), b.ca_pem())).unwrap();
        assert_eq!(both.len(), 2);
        assert!(both[0].subject.contains("First") && both[1].subject.contains("Second"));
    }

    /// What is not a certificate is refused with a config error that says what to choose.
    #[test]
    fn refuses_what_is_not_a_certificate() {
        let garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        for text in ["", "hello", garbage, &"A".repeat(MAX_PEM_BYTES + 1)] {
            let error = describe(text).unwrap_err();
            assert_eq!(error.code(), crate::Code::Config);
            assert!(error.to_string().contains("BEGIN CERTIFICATE"), "{error}");
        }
    }
}
