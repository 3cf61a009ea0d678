//! kluis-https: HTTPS serving for Kluis's servers — the callback receiver (kluis-core), the
//! service simulator (kluis-sim) and the relay. (Owner-only files, the secret scrubber and
//! logging are kluis-private's.)
//!
//! - [`cert`]: [`LocalCa`] makes a throw-away certificate authority with rcgen and issues server
//!   certificates for loopback names from it. Clients trust the CA's PEM, never "any certificate".
//! - [`rate`]: [`RateLimit`], a token bucket for small public endpoints, on a [`Clock`] a test
//!   can hold still.
//! - [`serve`]: [`serve_tls`] / [`serve()`] accept TCP connections (up to a cap), run the rustls
//!   handshake with a timeout (or none, for plain HTTP behind a proxy) and hand each connection
//!   to hyper with a header-read timeout and an axum `Router`, until a shutdown signal fires.
//!
//! Data flow: `LocalCa::generate` → `LocalCa::server_config(hosts)` → `serve_tls(listener,
//! config, router, shutdown)`; the CA PEM goes to whoever must trust the server.

pub mod cert;
pub mod rate;
pub mod serve;

pub use cert::{server_config_from_pem, CertError, LocalCa};
pub use rate::{Clock, RateLimit};
pub use serve::{serve, serve_tls, ServeLimits};

/// Installs ring as rustls's process-wide crypto provider, once. Every Kluis crate calls this
/// before building a TLS config so that no crate depends on which provider cargo's feature
/// unification happened to pick.
pub fn install_crypto_provider() {
    // An error only means another part of the process installed a provider first; that's fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
