//! What certificate a server presents, for the message of a certificate failure: "the server
//! sent a certificate for CN=…, issued by CN=… (SHA-256 AB:CD:…)", so a person can compare it
//! with what the service operator or the office's IT says before trusting anything.
//!
//! [`presented_by`] opens a TLS handshake of its own to the server and stops it as soon as
//! the server's certificates arrive: nothing is sent but the ClientHello (no request, no
//! credential), and what is recorded is only described — never trusted.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use url::Url;

use crate::certificate::{fingerprint, TrustedCa};

/// Longest time the look at a server's certificate may take (connect and handshake each).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The certificate a server sent, as a person checks it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Presented {
    pub subject: String,
    pub issuer: String,
    /// SHA-256 of the server's own certificate, `AB:CD:…`.
    pub sha256: String,
    /// The last certificate of the chain the server sent, when it sent more than its own
    /// (usually the issuing CA): the one to compare with a CA file before trusting it.
    pub top: Option<TrustedCa>,
}

impl std::fmt::Display for Presented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "The server sent a certificate for {} issued by {} (SHA-256 {})",
            self.subject, self.issuer, self.sha256
        )?;
        if let Some(TrustedCa { subject, sha256 }) = &self.top {
            write!(
                f,
                "; the chain it sent ends at {subject} (SHA-256 {sha256})"
            )?;
        }
        write!(f, ".")
    }
}

/// The certificates `url`'s server presents, described; `None` when it cannot be reached or
/// sends nothing readable (the failure's own message still stands).
pub async fn presented_by(url: &Url) -> Option<Presented> {
    let host = url.host_str()?;
    let port = url.port_or_known_default()?;
    let name = match url.host()? {
        url::Host::Domain(domain) => ServerName::try_from(domain.to_string()).ok()?,
        url::Host::Ipv4(ip) => ServerName::IpAddress(std::net::IpAddr::V4(ip).into()),
        url::Host::Ipv6(ip) => ServerName::IpAddress(std::net::IpAddr::V6(ip).into()),
    };
    let recorder = Arc::new(Recorder::default());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .ok()?
    .dangerous()
    .with_custom_certificate_verifier(recorder.clone())
    .with_no_client_auth();
    let tcp = tokio::time::timeout(
        PROBE_TIMEOUT,
        tokio::net::TcpStream::connect(format!("{host}:{port}")),
    )
    .await
    .ok()?
    .ok()?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    // Fails by design: the recorder refuses the certificate once it has a copy.
    let _ = tokio::time::timeout(PROBE_TIMEOUT, connector.connect(name, tcp)).await;
    let chain = recorder.chain.lock().ok()?.take()?;
    describe(&chain)
}

fn describe(chain: &[CertificateDer<'static>]) -> Option<Presented> {
    let leaf = chain.first()?;
    let (_, certificate) = x509_parser::parse_x509_certificate(leaf).ok()?;
    let top = match chain {
        [_, .., last] => Some(TrustedCa::of(last)?),
        _ => None,
    };
    Some(Presented {
        subject: certificate.subject().to_string(),
        issuer: certificate.issuer().to_string(),
        sha256: fingerprint(leaf),
        top,
    })
}

/// Keeps a copy of the server's certificates and ends the handshake there.
#[derive(Debug, Default)]
struct Recorder {
    chain: Mutex<Option<Vec<CertificateDer<'static>>>>,
}

impl ServerCertVerifier for Recorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let chain = std::iter::once(end_entity)
            .chain(intermediates)
            .take(16)
            .map(|c| c.clone().into_owned())
            .collect();
        if let Ok(mut slot) = self.chain.lock() {
            *slot = Some(chain);
        }
        Err(rustls::Error::General(
            "certificate recorded; not trusted".into(),
        ))
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General("not trusted".into()))
    }

    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General("not trusted".into()))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        rustls::crypto::ring::default_provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}
