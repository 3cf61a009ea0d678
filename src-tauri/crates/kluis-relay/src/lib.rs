//! kluis-relay: a small, self-hostable inbox for the service's webhook callbacks.
//!
//! The service can only deliver a backup's result id by calling a public https URL once; an
//! office PC behind NAT cannot be reached, and nobody may be listening at that moment. The
//! relay is reachable (on a server of the office's own, or behind its reverse proxy), stores
//! every callback, and lets Kluis collect them later by long-polling — at least once.
//!
//! - [`store`]: SQLite (embedded): inboxes with their capability tokens, and events.
//! - [`server`]: the HTTP API (public callback path; secret-protected inbox API with
//!   long-poll, cursor and acknowledgement), limits and expiry.
//! - `fuzz.rs` (tests): every API path, query and body, generated, never makes it panic or fail.
//! - `main.rs`: `kluis-relay --listen ADDR --data DIR [--tls-cert PEM --tls-key PEM]`, with the
//!   client secret from `KLUIS_RELAY_SECRET`.

#[cfg(test)]
mod fuzz;
pub mod server;
pub mod store;

pub use server::{router, Relay, RelayConfig};
pub use store::{Event, Full, Limits, Store};
