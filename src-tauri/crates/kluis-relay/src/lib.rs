//! kluis-relay: a self-hostable inbox for the service's webhook callbacks, for one office or
//! for many.
//!
//! The service can only deliver a backup's result id by calling a public https URL once; an
//! office PC behind NAT cannot be reached, and nobody may be listening at that moment. The
//! relay is reachable (on a server of the office's own, an IT provider's, or behind a reverse
//! proxy), stores every callback, and lets Kluis collect them later by long-polling — at least
//! once, in order per inbox.
//!
//! Data flows: the service → [`server`]'s callback path → [`storage`] (which wakes the
//! long-polls parked on that inbox) → a tenant's long-poll answer → its acknowledgement.
//!
//! - [`tenants`]: tenant keys (`klr_<id>_<secret>`, stored as a SHA-256) and who a request
//!   acts for; the shared `KLUIS_RELAY_SECRET` is the built-in tenant `*`.
//! - [`key_directory`]: every key id (read again whenever keys change) and the keys read
//!   lately: a real key is told from junk without spending the budget junk spends.
//! - [`storage`]: the [`Storage`] trait (tenants, inboxes, callbacks, quotas, versioned
//!   schema; and the office hub's part, `storage::office`: an office's PCs and each klant's
//!   office-wide turn) and its engines: SQLite (embedded, one instance) and PostgreSQL
//!   (several instances, woken across by `LISTEN/NOTIFY`).
//! - [`server`]: the HTTP API (the inboxes; the office hub's turns and PCs), limits,
//!   long-polls, graceful stop, health and readiness.
//! - [`metrics`]: Prometheus counters and the delivery-latency histogram.
//! - `fuzz.rs` (tests): every API path, query and body, generated, never makes it panic or fail.
//! - `main.rs`: `kluis-relay --listen ADDR --data DIR` (or `--database-url`) serves; `kluis-relay tenant
//!   add|list|revoke|rotate|pc-key` administers tenants and their PCs (`admin.rs`).

mod constant_time;
#[cfg(test)]
mod fuzz;
pub mod key_directory;
pub mod metrics;
pub mod server;
pub mod storage;
pub mod tenants;

/// Runs `f` to completion on a fresh single-threaded runtime (unit tests of async code).
#[cfg(test)]
fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

pub use server::{metrics_router, router, Relay, RelayConfig};
pub use storage::postgres::PgStore;
pub use storage::sqlite::SqliteStore;
pub use storage::{Event, Limits, Quota, Refusal, Storage, StoreError};
