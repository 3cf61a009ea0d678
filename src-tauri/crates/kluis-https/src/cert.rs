//! A local certificate authority for loopback HTTPS servers.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Why a certificate or TLS configuration could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("could not generate a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("could not build the TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
    #[error("could not read {0}: {1}")]
    Pem(String, String),
}

/// A server configuration from a PEM certificate chain and private key (for servers that
/// terminate TLS themselves with a real certificate).
pub fn server_config_from_pem(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<Arc<rustls::ServerConfig>, CertError> {
    use rustls::pki_types::pem::PemObject;
    crate::install_crypto_provider();
    let pem_error = |path: &std::path::Path, e: &dyn std::fmt::Display| {
        CertError::Pem(path.display().to_string(), e.to_string())
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| pem_error(cert, &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(cert, &e))?;
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| pem_error(key, &e))?;
    let mut config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key_der)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A certificate authority that lives as long as the process that made it.
pub struct LocalCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl LocalCa {
    /// Generates a fresh CA whose subject carries `name` (shown by TLS tools).
    pub fn generate(name: &str) -> Result<Self, CertError> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
        Ok(Self { issuer })
    }

    /// The CA certificate in PEM form, for clients that must trust servers it issued for.
    pub fn ca_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A rustls server configuration with a fresh certificate for `hosts` (DNS names or IP
    /// addresses) issued by this CA. ALPN offers HTTP/1.1 only: the servers here are small.
    pub fn server_config(&self, hosts: &[&str]) -> Result<Arc<rustls::ServerConfig>, CertError> {
        crate::install_crypto_provider();
        let (cert, key) = self.issue(hosts)?;
        let chain = vec![
            CertificateDer::from(cert.der().to_vec()),
            self.issuer.der().clone(),
        ];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let mut config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// A fresh certificate for `hosts` issued by this CA, for a server that is not Kluis's
    /// own (a test's S3 or SFTP server): the certificate chain and the private key in PEM.
    pub fn server_pem(&self, hosts: &[&str]) -> Result<(String, String), CertError> {
        let (cert, key) = self.issue(hosts)?;
        Ok((
            format!("{}{}", cert.pem(), self.issuer.pem()),
            key.serialize_pem(),
        ))
    }

    fn issue(&self, hosts: &[&str]) -> Result<(rcgen::Certificate, KeyPair), CertError> {
        let names: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
        let mut params = CertificateParams::new(names)?;
        params.distinguished_name.push(
            DnType::CommonName,
            hosts.first().copied().unwrap_or("localhost"),
        );
        params.is_ca = IsCa::NoCa;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok((cert, key))
    }
}
