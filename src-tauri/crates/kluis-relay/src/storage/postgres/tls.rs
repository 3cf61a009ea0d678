//! TLS to PostgreSQL, for a database on another machine: with `sslmode=require` in the
//! database URL the relay speaks TLS (rustls) and checks the server's certificate and name
//! against the system's roots and, when set, the CA certificates in the PEM file
//! `PGSSLROOTCERT` (libpq's variable, as for `PGPASSWORD`). Without it the connection stays
//! plain TCP, as before: a database on loopback or a private network, and Debian's default
//! PostgreSQL (whose self-signed certificate nothing could check) keep working unchanged.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::storage::StoreError;

/// The TLS connector `config` asks for: `None` for plain TCP.
pub fn connector(config: &tokio_postgres::Config) -> Result<Option<MakeRustlsConnect>, StoreError> {
    if config.get_ssl_mode() != SslMode::Require {
        return Ok(None);
    }
    let mut roots = RootCertStore::empty();
    // A native store may hold a certificate rustls cannot use; skip it, as reqwest does.
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(path) = std::env::var_os("PGSSLROOTCERT") {
        let shown = std::path::Path::new(&path).display().to_string();
        let pem = std::fs::read(&path)
            .map_err(|e| StoreError::Config(format!("cannot read PGSSLROOTCERT ({shown}): {e}")))?;
        let certs = CertificateDer::pem_slice_iter(&pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| StoreError::Config(format!("PGSSLROOTCERT ({shown}) is not PEM")))?;
        if certs.is_empty() {
            return Err(StoreError::Config(format!(
                "PGSSLROOTCERT ({shown}) holds no certificate"
            )));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| {
                StoreError::Config(format!(
                    "PGSSLROOTCERT ({shown}): a certificate is unusable: {e}"
                ))
            })?;
        }
    }
    if roots.is_empty() {
        return Err(StoreError::Config(
            "sslmode=require, but there is no CA to check the database's certificate with: set PGSSLROOTCERT to its CA certificate (PEM)".into(),
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Config(format!("TLS to the database: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Some(MakeRustlsConnect::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain TCP unless the URL says `sslmode=require`; a bad `PGSSLROOTCERT` is refused with
    /// words that name it, not met later as a failed handshake. (One test: the variable is the
    /// process's, and no other test here reads it.)
    #[test]
    fn tls_only_when_required_and_a_bad_ca_file_is_named() {
        let plain: tokio_postgres::Config = "postgres://u@db.internal/kluis".parse().unwrap();
        assert!(
            connector(&plain).unwrap().is_none(),
            "no sslmode: plain, as before"
        );
        let required: tokio_postgres::Config = "postgres://u@db.internal/kluis?sslmode=require"
            .parse()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("missing.pem", None, "cannot read PGSSLROOTCERT"),
            ("empty.pem", Some(""), "holds no certificate"),
            (
                "garbage.pem",
                Some("-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n"),
                "is not PEM",
            ),
        ];
        for (name, content, expected) in cases {
            let path = dir.path().join(name);
            if let Some(content) = content {
                std::fs::write(&path, content).unwrap();
            }
            std::env::set_var("PGSSLROOTCERT", &path);
            let refused = connector(&required).err().map(|e| e.to_string());
            std::env::remove_var("PGSSLROOTCERT");
            let refused = refused.unwrap_or_else(|| panic!("{name} is refused"));
            assert!(
                refused.contains(expected) && refused.contains(name),
                "{name}: {refused}"
            );
        }
        let ca = kluis_https::cert::LocalCa::generate("the database's CA").unwrap();
        let good = dir.path().join("ca.pem");
        std::fs::write(&good, ca.ca_pem()).unwrap();
        std::env::set_var("PGSSLROOTCERT", &good);
        let made = connector(&required);
        std::env::remove_var("PGSSLROOTCERT");
        assert!(made.unwrap().is_some(), "TLS with the CA's certificate");
    }
}
