//! Where the relay keeps tenants, inboxes and callbacks: one [`Storage`] trait, two engines.
//!
//! - [`sqlite`]: the embedded default, one file beside one relay process.
//! - [`postgres`]: several stateless relay instances share one PostgreSQL database; a callback
//!   stored by one wakes the long-polls parked on another (`LISTEN/NOTIFY`, see
//!   [`Storage::watch`]).
//! - [`office`]: the office hub's part ([`OfficeStore`], which every engine is too): an
//!   office's PCs and each klant's office-wide turn.
//!
//! Every inbox belongs to a tenant, and every inbox operation names the tenant asking: a
//! tenant's question about another tenant's inbox gets the same answer as one about an inbox
//! that does not exist (`None`/`false`), so the HTTP layer answers 404 either way and inbox ids
//! cannot be probed. The shared-secret mode is the built-in tenant [`SHARED_TENANT`].
//!
//! Sequence numbers grow within each inbox in the order callbacks were committed, so a client's
//! cursor (`after=N`) never skips one; acknowledging is "forget up to N" in one transaction.

pub mod office;
pub mod postgres;
pub mod sqlite;

pub use office::{InviteMade, KeyCheck, OfficeStore, PcSummary, StoredReport, Turn};

use async_trait::async_trait;
use serde::Serialize;

/// The tenant that `KLUIS_RELAY_SECRET` (the single-office mode) acts as. Not a valid name for
/// `tenant add`, so it cannot be taken.
pub const SHARED_TENANT: &str = "*";

/// What one tenant may hold and ask; `None` is no bound.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Quota {
    pub max_inboxes: Option<u64>,
    /// Unacknowledged callbacks across the tenant's inboxes.
    pub max_events: Option<u64>,
    /// Bytes of unacknowledged callbacks (method and query) across the tenant's inboxes.
    pub max_bytes: Option<u64>,
    /// Requests a second to the inbox API with the tenant's key (per relay instance).
    pub requests_per_sec: Option<f64>,
}

impl Quota {
    /// No bound: the shared-secret tenant, whose operator is the only user.
    pub const UNLIMITED: Quota = Quota {
        max_inboxes: None,
        max_events: None,
        max_bytes: None,
        requests_per_sec: None,
    };
}

/// Relay-wide bounds on what callbacks may store (beside the tenant's own quota).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_events_per_inbox: u64,
    pub max_db_bytes: u64,
}

impl Limits {
    /// No bound (tests of the store alone).
    pub const NONE: Limits = Limits {
        max_events_per_inbox: u64::MAX,
        max_db_bytes: u64::MAX,
    };
}

/// Why something was not stored. Each is answered 507 (Insufficient Storage), which tells the
/// service to retry later and the client what is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("this inbox holds as many unacknowledged callbacks as it may")]
    Inbox,
    #[error("the relay's database is full")]
    Database,
    #[error("this tenant has as many inboxes as its quota allows; delete finished ones")]
    TenantInboxes,
    #[error("this tenant holds as many unacknowledged callbacks as its quota allows")]
    TenantEvents,
    #[error("this tenant holds as many bytes of callbacks as its quota allows")]
    TenantBytes,
    /// The tenant was revoked while the request was on its way.
    #[error("this tenant is revoked")]
    Revoked,
}

impl Refusal {
    /// Stable code for answers and metrics.
    pub fn code(self) -> &'static str {
        match self {
            Refusal::Inbox => "inbox_full",
            Refusal::Database => "database_full",
            Refusal::TenantInboxes => "quota_inboxes",
            Refusal::TenantEvents => "quota_events",
            Refusal::TenantBytes => "quota_bytes",
            Refusal::Revoked => "revoked",
        }
    }

    /// Whether a tenant's quota (rather than a relay-wide bound) refused it.
    pub fn is_quota(self) -> bool {
        matches!(
            self,
            Refusal::TenantInboxes | Refusal::TenantEvents | Refusal::TenantBytes
        )
    }
}

/// One received callback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Event {
    pub seq: i64,
    pub method: String,
    /// The raw query string, e.g. `id=…`.
    pub query: String,
    pub received_ms: i64,
}

/// What became of a callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// Stored in `tenant`'s inbox as number `seq`.
    Stored { tenant: String, seq: i64 },
    /// Not stored: `tenant`'s inbox or quota, or the database, is full.
    Refused { tenant: String, why: Refusal },
    /// No inbox with that id and token.
    NoInbox,
}

/// A tenant key as stored: never the key, only its SHA-256.
#[derive(Debug, Clone)]
pub struct StoredKey {
    pub tenant: String,
    pub hash: [u8; 32],
    /// After a rotation the old key works until then.
    pub expires_ms: Option<i64>,
    pub revoked: bool,
    pub quota: Quota,
    /// The office PC this key is (see [`office`]); none for the tenant's own keys.
    pub pc: Option<String>,
}

/// A tenant as `tenant list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct TenantSummary {
    pub name: String,
    pub created_ms: i64,
    pub revoked_ms: Option<i64>,
    /// The tenant's own keys that work now (two during a rotation's overlap; PCs' not counted).
    pub live_keys: u64,
    pub inboxes: u64,
    pub events: u64,
    pub bytes: u64,
    pub quota: Quota,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("relay store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("relay store: {0}")]
    Io(std::io::Error),
    #[error("relay store: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("relay store: no database connection ({0})")]
    Pool(String),
    #[error("relay store: {0}")]
    Config(String),
    #[error("relay store: the database was written by a newer kluis-relay (schema {found}, this one knows {known}); upgrade this relay")]
    TooNew { found: i64, known: i64 },
}

/// Told which inbox got a callback (`Some`), or that any may have (`None`: after a lost
/// connection to the notices); answers `false` once nobody listens any more.
pub type Wake = Box<dyn Fn(Option<&str>) -> bool + Send + Sync>;

/// The relay's storage engine (the office hub's part too).
#[async_trait]
pub trait Storage: OfficeStore + Send + Sync + 'static {
    /// The engine's name, for logs.
    fn engine(&self) -> &'static str;
    /// Starts passing on the callbacks other relay instances store (an engine one process
    /// owns has none: the instance wakes its own long-polls).
    fn watch(&self, _wake: Wake) -> Option<tokio::task::JoinHandle<()>> {
        None
    }
    /// Readies what serving needs before the instance takes requests (a connection pool's
    /// connections, prepared statements); nothing for an engine with nothing to ready.
    async fn warm(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Whether the database answers (`/readyz`).
    async fn ping(&self) -> Result<(), StoreError>;

    /// Adds a tenant with its first key; `false` if the name is taken (also by a revoked one).
    async fn add_tenant(
        &self,
        name: &str,
        quota: Quota,
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError>;
    async fn tenants(&self) -> Result<Vec<TenantSummary>, StoreError>;
    /// Revokes a tenant: its keys stop working and its inboxes and callbacks are deleted.
    async fn revoke_tenant(&self, name: &str) -> Result<bool, StoreError>;
    /// Adds a key to a live tenant; its other keys (not its PCs') keep working until
    /// `old_until_ms`.
    async fn rotate_key(
        &self,
        name: &str,
        key_id: &str,
        key_hash: [u8; 32],
        old_until_ms: i64,
    ) -> Result<bool, StoreError>;
    async fn key(&self, key_id: &str) -> Result<Option<StoredKey>, StoreError>;
    /// The id of every tenant key there is, for the relay's key directory (ids find a key;
    /// they do not open one).
    async fn key_ids(&self) -> Result<Vec<String>, StoreError>;
    /// A number that differs whenever the tenant keys may have changed since it was last
    /// asked — at this instance, at another one, or by `kluis-relay tenant …` — as far as the
    /// engine can tell without a round trip to the database; the key directory reads
    /// [`Storage::key_ids`] again when it does. Asked at each request that names a key id the
    /// directory does not hold, so it must be cheap.
    fn keys_version(&self) -> u128;
    /// The relay's key for callback tokens (`server::capability`): the one stored, or
    /// `fresh`, stored now, when there is none — so every instance on one database has the
    /// same.
    async fn callback_key(&self, fresh: [u8; 32]) -> Result<[u8; 32], StoreError>;

    /// A new inbox of `tenant` within `quota`.
    async fn create_inbox(
        &self,
        tenant: &str,
        quota: &Quota,
        id: &str,
        token: &str,
    ) -> Result<Result<(), Refusal>, StoreError>;
    /// Stores a callback if `inbox` exists with `token` (a callback's capability, compared in
    /// constant time), within `limits` and its tenant's quota.
    async fn record(
        &self,
        inbox: &str,
        token: &str,
        method: &str,
        query: &str,
        limits: Limits,
    ) -> Result<Recorded, StoreError>;
    /// Events of `tenant`'s `inbox` after `after`, oldest first, at most `limit`; `None` if
    /// `tenant` has no such inbox.
    async fn events_after(
        &self,
        tenant: &str,
        inbox: &str,
        after: i64,
        limit: usize,
    ) -> Result<Option<Vec<Event>>, StoreError>;
    /// Forgets the events of `tenant`'s `inbox` up to and including `up_to`; how many, or
    /// `None` if `tenant` has no such inbox.
    async fn ack(&self, tenant: &str, inbox: &str, up_to: i64) -> Result<Option<u64>, StoreError>;
    async fn delete_inbox(&self, tenant: &str, inbox: &str) -> Result<bool, StoreError>;
    /// Drops events received before `events_before_ms` and inboxes unused since
    /// `inboxes_before_ms`; how many of each.
    async fn expire(
        &self,
        events_before_ms: i64,
        inboxes_before_ms: i64,
    ) -> Result<(u64, u64), StoreError>;
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
