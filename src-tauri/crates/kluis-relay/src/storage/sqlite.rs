//! The SQLite engine: one file, one writer, WAL. Calls are short (an indexed lookup or a small
//! transaction, well under a millisecond), so they run inline on the async worker under a
//! mutex rather than paying a thread hop each.
//!
//! The schema is versioned with `PRAGMA user_version`; `MIGRATIONS` run at open, each in its
//! own transaction, so a relay upgraded over an older database carries its inboxes along.
//! Tenants keep running totals of their unacknowledged events and bytes, so a quota check is
//! one row read instead of a count over every event; expiry recounts them.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, Transaction};

mod office;

use super::{
    Event, Limits, Quota, Recorded, Refusal, Storage, StoreError, StoredKey, TenantSummary,
    SHARED_TENANT,
};

/// Schema versions, oldest first; version N is the state after `MIGRATIONS[N - 1]`.
const MIGRATIONS: &[&str] = &[
    // 1: the single-office relay (IF NOT EXISTS: databases of relays before versioning).
    "CREATE TABLE IF NOT EXISTS inboxes (
        id TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        used_ms INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        inbox TEXT NOT NULL REFERENCES inboxes(id) ON DELETE CASCADE,
        method TEXT NOT NULL,
        query TEXT NOT NULL,
        received_ms INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS events_inbox ON events(inbox, seq);",
    // 2: tenants with hashed keys and quotas; existing inboxes belong to the shared secret.
    "CREATE TABLE tenants (
        name TEXT PRIMARY KEY,
        created_ms INTEGER NOT NULL,
        revoked_ms INTEGER,
        max_inboxes INTEGER,
        max_events INTEGER,
        max_bytes INTEGER,
        requests_per_sec REAL,
        events INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE tenant_keys (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL REFERENCES tenants(name),
        hash BLOB NOT NULL,
        created_ms INTEGER NOT NULL,
        expires_ms INTEGER
    );
    INSERT INTO tenants (name, created_ms) VALUES ('*', 0);
    ALTER TABLE inboxes ADD COLUMN tenant TEXT NOT NULL DEFAULT '*';
    CREATE INDEX inboxes_tenant ON inboxes(tenant);
    ALTER TABLE events ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
    UPDATE events SET bytes = length(method) + length(query);
    UPDATE tenants SET events = (SELECT COUNT(*) FROM events),
        bytes = (SELECT COALESCE(SUM(bytes), 0) FROM events);",
    // 3: the relay's own keys (the callback tokens' HMAC key), made by the relay at first use.
    "CREATE TABLE relay_keys (
        name TEXT PRIMARY KEY,
        key BLOB NOT NULL
    );",
    // 4: the office hub (`office`): PC keys, and each klant's office-wide turn.
    "ALTER TABLE tenant_keys ADD COLUMN pc TEXT;
    CREATE INDEX tenant_keys_pc ON tenant_keys(tenant, pc);
    CREATE TABLE office_turns (
        tenant TEXT NOT NULL REFERENCES tenants(name),
        klant TEXT NOT NULL,
        holder TEXT,
        held_until_ms INTEGER,
        done_by TEXT,
        done_ms INTEGER,
        PRIMARY KEY (tenant, klant)
    );",
    // 5: each office PC's last report, sealed with the office key (`office`).
    "CREATE TABLE office_reports (
        tenant TEXT NOT NULL REFERENCES tenants(name),
        pc TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        sealed BLOB NOT NULL,
        PRIMARY KEY (tenant, pc)
    );",
    // 6: invitations of new PCs to an office (`office`): each one's enrolment token as its
    // SHA-256.
    "CREATE TABLE office_invites (
        token_hash BLOB PRIMARY KEY,
        tenant TEXT NOT NULL REFERENCES tenants(name),
        pc TEXT NOT NULL,
        made_by TEXT NOT NULL,
        expires_ms INTEGER NOT NULL
    );
    CREATE INDEX office_invites_tenant ON office_invites(tenant, pc);",
    // 7: each office's office key check value (`office`), set by its first PC.
    "CREATE TABLE office_key_checks (
        tenant TEXT PRIMARY KEY REFERENCES tenants(name),
        check_value BLOB NOT NULL,
        set_ms INTEGER NOT NULL
    );",
    // 8: the PCs that checked the office key and were told it is the office's (`office`): the
    // check counts while one of them has a working key.
    "CREATE TABLE office_key_checkers (
        tenant TEXT NOT NULL REFERENCES tenants(name),
        pc TEXT NOT NULL,
        PRIMARY KEY (tenant, pc)
    );",
];

pub struct SqliteStore {
    conn: Mutex<Connection>,
    /// Key changes made through this store (with `PRAGMA data_version`, which counts other
    /// connections' commits: the keys version).
    key_changes: AtomicU64,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`, owner-only: it holds the callback
    /// queries, which carry the service's secret ids.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        kluis_private::files::prepare_file(path).map_err(StoreError::Io)?;
        // Shared: `kluis-relay tenant add` may open it beside a running relay.
        Self::setup(kluis_private::database::open_shared(path)?)
    }

    pub fn in_memory() -> Result<Self, StoreError> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(mut conn: Connection) -> Result<Self, StoreError> {
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrate(&mut conn)?;
        Ok(Self {
            conn: Mutex::new(conn),
            key_changes: AtomicU64::new(0),
        })
    }

    fn keys_changed(&self) {
        self.key_changes.fetch_add(1, Ordering::SeqCst);
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (transactions roll
        // back on drop), so the connection stays usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Brings the schema to the newest version, one transaction per step.
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let known = MIGRATIONS.len() as i64;
    loop {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version > known {
            return Err(StoreError::TooNew {
                found: version,
                known,
            });
        }
        if version == known {
            return Ok(());
        }
        tx.execute_batch(MIGRATIONS[version as usize])?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
    }
}

fn quota_of(row: &rusqlite::Row, first: usize) -> rusqlite::Result<Quota> {
    Ok(Quota {
        max_inboxes: row.get::<_, Option<i64>>(first)?.map(|v| v.max(0) as u64),
        max_events: row
            .get::<_, Option<i64>>(first + 1)?
            .map(|v| v.max(0) as u64),
        max_bytes: row
            .get::<_, Option<i64>>(first + 2)?
            .map(|v| v.max(0) as u64),
        requests_per_sec: row.get(first + 3)?,
    })
}

fn as_i64(v: Option<u64>) -> Option<i64> {
    v.map(|v| v.min(i64::MAX as u64) as i64)
}

/// The live tenant owning `inbox`, if it is `tenant`.
fn owned(tx: &Connection, tenant: &str, inbox: &str) -> rusqlite::Result<bool> {
    Ok(tx
        .query_row(
            "SELECT 1 FROM inboxes WHERE id = ?1 AND tenant = ?2",
            params![inbox, tenant],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// Deletes the events of `inbox` up to `up_to`, keeping its tenant's totals.
fn forget(tx: &Transaction, inbox: &str, up_to: i64) -> rusqlite::Result<u64> {
    let (count, bytes): (i64, i64) = tx.query_row(
        "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM events WHERE inbox = ?1 AND seq <= ?2",
        params![inbox, up_to],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if count > 0 {
        tx.execute(
            "DELETE FROM events WHERE inbox = ?1 AND seq <= ?2",
            params![inbox, up_to],
        )?;
        tx.execute(
            "UPDATE tenants SET events = MAX(events - ?2, 0), bytes = MAX(bytes - ?3, 0)
             WHERE name = (SELECT tenant FROM inboxes WHERE id = ?1)",
            params![inbox, count, bytes],
        )?;
    }
    Ok(count as u64)
}

#[async_trait]
impl Storage for SqliteStore {
    fn engine(&self) -> &'static str {
        "sqlite"
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.conn().query_row("SELECT 1", [], |_| Ok(()))?;
        Ok(())
    }

    async fn add_tenant(
        &self,
        name: &str,
        quota: Quota,
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = super::now_ms();
        let added = tx.execute(
            "INSERT INTO tenants (name, created_ms, max_inboxes, max_events, max_bytes, requests_per_sec)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
            params![
                name,
                now,
                as_i64(quota.max_inboxes),
                as_i64(quota.max_events),
                as_i64(quota.max_bytes),
                quota.requests_per_sec
            ],
        )?;
        if added == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO tenant_keys (id, tenant, hash, created_ms) VALUES (?1, ?2, ?3, ?4)",
            params![key_id, name, &key_hash[..], now],
        )?;
        tx.commit()?;
        self.keys_changed();
        Ok(true)
    }

    async fn tenants(&self) -> Result<Vec<TenantSummary>, StoreError> {
        let conn = self.conn();
        let now = super::now_ms();
        let mut statement = conn.prepare(
            "SELECT name, created_ms, revoked_ms, max_inboxes, max_events, max_bytes, requests_per_sec,
                (SELECT COUNT(*) FROM tenant_keys k WHERE k.tenant = t.name AND k.pc IS NULL
                    AND (k.expires_ms IS NULL OR k.expires_ms > ?1)),
                (SELECT COUNT(*) FROM inboxes i WHERE i.tenant = t.name),
                events, bytes
             FROM tenants t ORDER BY name",
        )?;
        let rows = statement.query_map(params![now], |r| {
            Ok(TenantSummary {
                name: r.get(0)?,
                created_ms: r.get(1)?,
                revoked_ms: r.get(2)?,
                quota: quota_of(r, 3)?,
                live_keys: r.get::<_, i64>(7)? as u64,
                inboxes: r.get::<_, i64>(8)? as u64,
                events: r.get::<_, i64>(9)?.max(0) as u64,
                bytes: r.get::<_, i64>(10)?.max(0) as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    async fn revoke_tenant(&self, name: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let revoked = tx.execute(
            "UPDATE tenants SET revoked_ms = ?2, events = 0, bytes = 0
             WHERE name = ?1 AND revoked_ms IS NULL AND name != ?3",
            params![name, super::now_ms(), SHARED_TENANT],
        )?;
        if revoked == 0 {
            return Ok(false);
        }
        tx.execute("DELETE FROM tenant_keys WHERE tenant = ?1", params![name])?;
        tx.execute("DELETE FROM office_turns WHERE tenant = ?1", params![name])?;
        tx.execute(
            "DELETE FROM office_reports WHERE tenant = ?1",
            params![name],
        )?;
        tx.execute(
            "DELETE FROM office_invites WHERE tenant = ?1",
            params![name],
        )?;
        tx.execute(
            "DELETE FROM office_key_checks WHERE tenant = ?1",
            params![name],
        )?;
        tx.execute(
            "DELETE FROM office_key_checkers WHERE tenant = ?1",
            params![name],
        )?;
        tx.execute(
            "DELETE FROM events WHERE inbox IN (SELECT id FROM inboxes WHERE tenant = ?1)",
            params![name],
        )?;
        tx.execute("DELETE FROM inboxes WHERE tenant = ?1", params![name])?;
        tx.commit()?;
        self.keys_changed();
        Ok(true)
    }

    async fn rotate_key(
        &self,
        name: &str,
        key_id: &str,
        key_hash: [u8; 32],
        old_until_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let live: bool = tx
            .query_row(
                "SELECT 1 FROM tenants WHERE name = ?1 AND revoked_ms IS NULL AND name != ?2",
                params![name, SHARED_TENANT],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        if !live {
            return Ok(false);
        }
        // Keys that already end sooner keep their earlier end.
        tx.execute(
            "UPDATE tenant_keys SET expires_ms = MIN(COALESCE(expires_ms, ?2), ?2)
             WHERE tenant = ?1 AND pc IS NULL",
            params![name, old_until_ms],
        )?;
        tx.execute(
            "DELETE FROM tenant_keys WHERE tenant = ?1 AND expires_ms <= ?2",
            params![name, super::now_ms()],
        )?;
        tx.execute(
            "INSERT INTO tenant_keys (id, tenant, hash, created_ms) VALUES (?1, ?2, ?3, ?4)",
            params![key_id, name, &key_hash[..], super::now_ms()],
        )?;
        tx.commit()?;
        self.keys_changed();
        Ok(true)
    }

    async fn key(&self, key_id: &str) -> Result<Option<StoredKey>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(
            "SELECT k.tenant, k.hash, k.expires_ms, t.revoked_ms IS NOT NULL,
                t.max_inboxes, t.max_events, t.max_bytes, t.requests_per_sec, k.pc
             FROM tenant_keys k JOIN tenants t ON t.name = k.tenant WHERE k.id = ?1",
        )?;
        let key = statement
            .query_row(params![key_id], |r| {
                let hash: Vec<u8> = r.get(1)?;
                Ok(StoredKey {
                    tenant: r.get(0)?,
                    hash: hash.try_into().unwrap_or([0; 32]),
                    expires_ms: r.get(2)?,
                    revoked: r.get(3)?,
                    quota: quota_of(r, 4)?,
                    pc: r.get(8)?,
                })
            })
            .optional()?;
        Ok(key)
    }

    async fn key_ids(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT id FROM tenant_keys")?;
        let ids = statement.query_map([], |r| r.get(0))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// This store's own key changes, and `PRAGMA data_version` for those of other connections
    /// to the file (`kluis-relay tenant …` beside the running relay): an in-memory read of
    /// SQLite's, no query of the tables.
    fn keys_version(&self) -> u128 {
        let others: i64 = (self.conn())
            .pragma_query_value(None, "data_version", |r| r.get(0))
            .unwrap_or(-1);
        (u128::from(self.key_changes.load(Ordering::SeqCst)) << 64) | u128::from(others as u64)
    }

    async fn callback_key(&self, fresh: [u8; 32]) -> Result<[u8; 32], StoreError> {
        let conn = self.conn();
        conn.execute(
            "INSERT OR IGNORE INTO relay_keys (name, key) VALUES ('callback', ?1)",
            params![&fresh[..]],
        )?;
        let key: Vec<u8> = conn.query_row(
            "SELECT key FROM relay_keys WHERE name = 'callback'",
            [],
            |r| r.get(0),
        )?;
        key.try_into().map_err(|_| {
            StoreError::Config("the relay's callback key in the database is not 32 bytes".into())
        })
    }

    async fn create_inbox(
        &self,
        tenant: &str,
        quota: &Quota,
        id: &str,
        token: &str,
    ) -> Result<Result<(), Refusal>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let revoked: Option<Option<i64>> = tx
            .query_row(
                "SELECT revoked_ms FROM tenants WHERE name = ?1",
                params![tenant],
                |r| r.get(0),
            )
            .optional()?;
        if !matches!(revoked, Some(None)) {
            return Ok(Err(Refusal::Revoked));
        }
        if let Some(max) = quota.max_inboxes {
            let held: i64 = tx.query_row(
                "SELECT COUNT(*) FROM inboxes WHERE tenant = ?1",
                params![tenant],
                |r| r.get(0),
            )?;
            if held as u64 >= max {
                return Ok(Err(Refusal::TenantInboxes));
            }
        }
        let now = super::now_ms();
        tx.execute(
            "INSERT INTO inboxes (id, token, created_ms, used_ms, tenant) VALUES (?1, ?2, ?3, ?3, ?4)",
            params![id, token, now, tenant],
        )?;
        tx.commit()?;
        Ok(Ok(()))
    }

    async fn record(
        &self,
        inbox: &str,
        token: &str,
        method: &str,
        query: &str,
        limits: Limits,
    ) -> Result<Recorded, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let Some(tenant) = token_owner(&tx, inbox, token)? else {
            return Ok(Recorded::NoInbox);
        };
        let refused = |why| {
            Ok(Recorded::Refused {
                tenant: tenant.clone(),
                why,
            })
        };
        let held: u64 = tx.query_row(
            "SELECT COUNT(*) FROM events WHERE inbox = ?1",
            params![inbox],
            |r| r.get(0),
        )?;
        if held >= limits.max_events_per_inbox {
            return refused(Refusal::Inbox);
        }
        let size: u64 = tx.query_row(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            [],
            |r| r.get(0),
        )?;
        if size >= limits.max_db_bytes {
            return refused(Refusal::Database);
        }
        let bytes = (method.len() + query.len()) as i64;
        let (max_events, max_bytes, events, held_bytes): (Option<i64>, Option<i64>, i64, i64) = tx
            .query_row(
                "SELECT max_events, max_bytes, events, bytes FROM tenants WHERE name = ?1",
                params![tenant],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )?;
        if max_events.is_some_and(|max| events >= max) {
            return refused(Refusal::TenantEvents);
        }
        if max_bytes.is_some_and(|max| held_bytes + bytes > max) {
            return refused(Refusal::TenantBytes);
        }
        let now = super::now_ms();
        tx.execute(
            "INSERT INTO events (inbox, method, query, received_ms, bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![inbox, method, query, now, bytes],
        )?;
        let seq = tx.last_insert_rowid();
        tx.execute(
            "UPDATE inboxes SET used_ms = ?2 WHERE id = ?1",
            params![inbox, now],
        )?;
        tx.execute(
            "UPDATE tenants SET events = events + 1, bytes = bytes + ?2 WHERE name = ?1",
            params![tenant, bytes],
        )?;
        tx.commit()?;
        Ok(Recorded::Stored { tenant, seq })
    }

    async fn events_after(
        &self,
        tenant: &str,
        inbox: &str,
        after: i64,
        limit: usize,
    ) -> Result<Option<Vec<Event>>, StoreError> {
        let conn = self.conn();
        if !owned(&conn, tenant, inbox)? {
            return Ok(None);
        }
        let mut statement = conn.prepare_cached(
            "SELECT seq, method, query, received_ms FROM events WHERE inbox = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let rows = statement.query_map(params![inbox, after, limit as i64], |r| {
            Ok(Event {
                seq: r.get(0)?,
                method: r.get(1)?,
                query: r.get(2)?,
                received_ms: r.get(3)?,
            })
        })?;
        Ok(Some(rows.collect::<Result<_, _>>()?))
    }

    async fn ack(&self, tenant: &str, inbox: &str, up_to: i64) -> Result<Option<u64>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        if !owned(&tx, tenant, inbox)? {
            return Ok(None);
        }
        let removed = forget(&tx, inbox, up_to)?;
        tx.commit()?;
        Ok(Some(removed))
    }

    async fn delete_inbox(&self, tenant: &str, inbox: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        if !owned(&tx, tenant, inbox)? {
            return Ok(false);
        }
        forget(&tx, inbox, i64::MAX)?;
        tx.execute("DELETE FROM inboxes WHERE id = ?1", params![inbox])?;
        tx.commit()?;
        Ok(true)
    }

    async fn expire(
        &self,
        events_before_ms: i64,
        inboxes_before_ms: i64,
    ) -> Result<(u64, u64), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let events = tx.execute(
            "DELETE FROM events WHERE received_ms < ?1
                OR inbox IN (SELECT id FROM inboxes WHERE used_ms < ?2)",
            params![events_before_ms, inboxes_before_ms],
        )?;
        let inboxes = tx.execute(
            "DELETE FROM inboxes WHERE used_ms < ?1",
            params![inboxes_before_ms],
        )?;
        if events > 0 {
            tx.execute_batch(
                "UPDATE tenants SET
                    events = (SELECT COUNT(*) FROM events e JOIN inboxes i ON i.id = e.inbox
                              WHERE i.tenant = tenants.name),
                    bytes = (SELECT COALESCE(SUM(e.bytes), 0) FROM events e JOIN inboxes i ON i.id = e.inbox
                             WHERE i.tenant = tenants.name)",
            )?;
        }
        tx.commit()?;
        Ok((events as u64, inboxes as u64))
    }
}

/// The tenant of `inbox` if `token` is its capability (compared in constant time).
fn token_owner(conn: &Connection, inbox: &str, token: &str) -> Result<Option<String>, StoreError> {
    let stored: Option<(String, String)> = conn
        .prepare_cached("SELECT token, tenant FROM inboxes WHERE id = ?1")?
        .query_row(params![inbox], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(stored.and_then(|(t, tenant)| {
        crate::constant_time::constant_time_eq(t.as_bytes(), token.as_bytes()).then_some(tenant)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block;

    fn stored(r: Result<Recorded, StoreError>) -> i64 {
        match r.unwrap() {
            Recorded::Stored { seq, .. } => seq,
            other => panic!("not stored: {other:?}"),
        }
    }

    /// Events need the right token, come back in order after a cursor, and go on ack; each
    /// tenant's totals follow.
    #[test]
    fn records_lists_and_acks() {
        block(async {
            let store = SqliteStore::in_memory().unwrap();
            let shared = Quota::UNLIMITED;
            store
                .create_inbox(SHARED_TENANT, &shared, "a", "tok")
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                store
                    .record("a", "wrong", "GET", "id=1", Limits::NONE)
                    .await
                    .unwrap(),
                Recorded::NoInbox
            );
            assert_eq!(
                store
                    .record("b", "tok", "GET", "id=1", Limits::NONE)
                    .await
                    .unwrap(),
                Recorded::NoInbox
            );
            let first = stored(store.record("a", "tok", "GET", "id=1", Limits::NONE).await);
            let second = stored(store.record("a", "tok", "GET", "id=2", Limits::NONE).await);
            let all = store
                .events_after(SHARED_TENANT, "a", 0, 10)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                all.iter().map(|e| e.query.as_str()).collect::<Vec<_>>(),
                ["id=1", "id=2"]
            );
            let later = store
                .events_after(SHARED_TENANT, "a", first, 10)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(later[0].seq, second);
            assert_eq!(store.ack(SHARED_TENANT, "a", first).await.unwrap(), Some(1));
            let summary = &store.tenants().await.unwrap()[0];
            assert_eq!(
                (summary.events, summary.bytes),
                (1, 7),
                "one 'GET'+'id=2' left"
            );
        })
    }

    /// Old events and idle inboxes expire, and the totals are recounted.
    #[test]
    fn expires_old_data() {
        block(async {
            let store = SqliteStore::in_memory().unwrap();
            store
                .create_inbox(SHARED_TENANT, &Quota::UNLIMITED, "a", "t")
                .await
                .unwrap()
                .unwrap();
            stored(store.record("a", "t", "GET", "id=1", Limits::NONE).await);
            let now = super::super::now_ms();
            assert_eq!(
                store.expire(now + 10_000, now - 60_000).await.unwrap(),
                (1, 0)
            );
            assert_eq!(store.tenants().await.unwrap()[0].events, 0);
            assert_eq!(store.expire(now, now + 100_000).await.unwrap().1, 1);
            assert_eq!(
                store
                    .record("a", "t", "GET", "id=2", Limits::NONE)
                    .await
                    .unwrap(),
                Recorded::NoInbox,
                "the idle inbox expired"
            );
        })
    }

    /// A database written before versioning (the single-office schema, no user_version) opens
    /// with its inboxes and callbacks, now the shared secret's, with their totals.
    #[test]
    fn migrates_a_database_from_before_tenants() {
        block(async {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("relay.sqlite3");
            {
                let old = Connection::open(&path).unwrap();
                old.execute_batch(MIGRATIONS[0]).unwrap();
                old.execute_batch(
                    "INSERT INTO inboxes VALUES ('a', 't', 1, 1);
                     INSERT INTO events (inbox, method, query, received_ms) VALUES ('a', 'GET', 'id=1', 1);",
                )
                .unwrap();
            }
            let store = SqliteStore::open(&path).unwrap();
            let events = store.events_after(SHARED_TENANT, "a", 0, 10).await.unwrap();
            assert_eq!(events.unwrap()[0].query, "id=1");
            let shared = &store.tenants().await.unwrap()[0];
            assert_eq!(
                (shared.name.as_str(), shared.events, shared.bytes),
                ("*", 1, 7)
            );
            drop(store);
            assert!(SqliteStore::open(&path).is_ok(), "opening again is a no-op");
            Connection::open(&path)
                .unwrap()
                .pragma_update(None, "user_version", 99)
                .unwrap();
            assert!(matches!(
                SqliteStore::open(&path),
                Err(StoreError::TooNew { found: 99, .. })
            ));
        })
    }
}
