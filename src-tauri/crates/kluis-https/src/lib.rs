//! kluis-https: the small piece of HTTPS serving that Kluis needs in three places — the loopback
//! callback receiver (kluis-core), the service simulator (kluis-sim) and, later, the relay.
//!
//! - [`cert`]: [`LocalCa`] makes a throw-away certificate authority with rcgen and issues server
//!   certificates for loopback names from it. Clients trust the CA's PEM, never "any certificate".
//! - [`logging`]: `KLUIS_LOG` set-up that keeps the HTTP libraries from logging secrets.
//! - [`rate`]: [`RateLimit`], a token bucket for small public endpoints.
//! - [`serve`]: [`serve_tls`] accepts TCP connections, runs the rustls handshake with a timeout
//!   and hands each connection to hyper with an axum `Router`, until a shutdown signal fires.
//!
//! Data flow: `LocalCa::generate` → `LocalCa::server_config(hosts)` → `serve_tls(listener,
//! config, router, shutdown)`; the CA PEM goes to whoever must trust the server.

pub mod cert;
pub mod logging;
pub mod rate;
pub mod serve;

pub use cert::{server_config_from_pem, CertError, LocalCa};
pub use rate::RateLimit;
pub use serve::{serve_tls, ServeLimits};

/// Installs ring as rustls's process-wide crypto provider, once. Every Kluis crate calls this
/// before building a TLS config so that no crate depends on which provider cargo's feature
/// unification happened to pick.
pub fn install_crypto_provider() {
    // An error only means another part of the process installed a provider first; that's fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
