//! The TLS settings every HTTPS client of Kluis uses: the system's roots, the webpki roots
//! and a profile's extra CAs, made once per extra CA and shared.
//!
//! Why shared rather than made per client (what reqwest does when asked for roots):
//! - reading and parsing the system's roots costs a few milliseconds, and a batch makes two
//!   clients per klant — measured, it was a tenth of Kluis's own CPU time over 200 klanten;
//! - one config keeps one TLS session cache, so a later connection to a server already met
//!   (the next klant's sign-in on the same service, the same file host) resumes its session
//!   instead of verifying the server's certificate chain again.
//!
//! A `rustls::ClientConfig` holds no connection and belongs to no async runtime, so sharing
//! it across runtimes (the app's, each test's) is safe, unlike sharing an HTTP client's pool.

use std::sync::{Arc, Mutex, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

use crate::error::{Error, Result};

/// Distinct extra-CA sets kept; a few in practice (one per private CA). Past this the oldest
/// is dropped, so test calls that each add a throw-away CA cannot grow memory.
const KEPT: usize = 16;

/// The TLS settings for a client trusting the system's roots, the webpki roots and the
/// certificates in `extra_ca_pem`.
pub fn client_config(extra_ca_pem: Option<&str>) -> Result<Arc<ClientConfig>> {
    static MADE: Mutex<Vec<(Option<String>, Arc<ClientConfig>)>> = Mutex::new(Vec::new());
    let key = extra_ca_pem.map(str::to_owned);
    if let Some((_, config)) = MADE.lock().unwrap().iter().find(|(k, _)| *k == key) {
        return Ok(config.clone());
    }
    let config = Arc::new(make(extra_ca_pem)?);
    let mut made = MADE.lock().unwrap();
    if made.len() >= KEPT {
        made.remove(0);
    }
    made.push((key, config.clone()));
    Ok(config)
}

fn make(extra_ca_pem: Option<&str>) -> Result<ClientConfig> {
    kluis_https::install_crypto_provider();
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    // Native stores often hold an odd certificate rustls cannot use; like reqwest, skip it.
    let (_used, _skipped) = roots.add_parsable_certificates(system_roots().iter().cloned());
    if let Some(pem) = extra_ca_pem {
        for cert in extra_cas(pem)? {
            roots.add(cert).map_err(|_| {
                Error::Config("The extra CA certificate file holds a certificate that cannot be used as a CA. Point --ca-cert / KLUIS_CA_CERT at the CA's own certificate.".into())
            })?;
        }
    }
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("Could not set up HTTPS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // Kluis's clients speak HTTP/1.1 only (reqwest without its http2 feature).
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The certificates in an extra-CA PEM text, or what to do about it.
fn extra_cas(pem: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| {
            Error::Config("The extra CA certificate file is not valid PEM. Point --ca-cert / KLUIS_CA_CERT at a PEM certificate.".into())
        })?;
    if certs.is_empty() {
        return Err(Error::Config(
            "The extra CA certificate file holds no certificate.".into(),
        ));
    }
    Ok(certs)
}

/// The operating system's trusted roots, read once per process (none when it has no store:
/// the webpki roots still stand).
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for error in &found.errors {
            tracing::debug!("a system root certificate was not read: {error}");
        }
        found.certs
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One extra CA gives one config, asked for again and again (the session cache is shared),
    /// and another CA its own.
    #[test]
    fn one_config_per_extra_ca() {
        let a = kluis_https::LocalCa::generate("Kluis test A")
            .unwrap()
            .ca_pem();
        let b = kluis_https::LocalCa::generate("Kluis test B")
            .unwrap()
            .ca_pem();
        let first = client_config(Some(&a)).unwrap();
        assert!(Arc::ptr_eq(&first, &client_config(Some(&a)).unwrap()));
        assert!(!Arc::ptr_eq(&first, &client_config(Some(&b)).unwrap()));
        assert_eq!(first.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }

    /// Text that is not a certificate is refused with what to do, not skipped.
    #[test]
    fn refuses_a_bad_extra_ca() {
        let not_pem = "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n";
        let e = client_config(Some(not_pem)).unwrap_err().to_string();
        assert!(e.contains("not valid PEM"), "{e}");
        let e = client_config(Some("hello")).unwrap_err().to_string();
        assert!(e.contains("holds no certificate"), "{e}");
    }
}
