//! The PostgreSQL engine: several stateless relay instances share one database.
//!
//! - Order per inbox: a callback takes the inbox's row lock and its next number
//!   (`inboxes.last_seq`) in the transaction that stores it, so callbacks of one inbox commit
//!   in number order and a reader that saw N has seen everything before N — a client's cursor
//!   never skips one, whichever instance stored or serves it.
//! - Wake-ups across instances: the storing transaction sends `NOTIFY kluis_relay, '<inbox>'`,
//!   delivered at commit. [`PgStore::watch`] keeps one connection `LISTEN`ing and passes each
//!   notice to the relay; after that connection is lost and made again it wakes every parked
//!   long-poll (a notice may have been missed), and each parked long-poll also looks again on
//!   its own every few seconds (`RelayConfig::recheck`).
//! - Locks are always taken inbox first, then tenant, so two transactions never wait on each
//!   other in a circle.
//! - Migrations run at start in one transaction under an advisory lock, so instances that
//!   start together migrate once; the version is in `kluis_relay_schema`.
//!
//! The connection string's password never reaches logs or errors: tokio-postgres does not
//! print it, and [`PgStore::connect`] takes it from the environment (`PGPASSWORD`) when the
//! URL has none.

use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use super::{
    Event, Limits, Quota, Recorded, Refusal, Storage, StoreError, StoredKey, TenantSummary, Wake,
    SHARED_TENANT,
};
use crate::tenants::constant_time_eq;

/// The channel of `NOTIFY`: its payload is the inbox id.
const CHANNEL: &str = "kluis_relay";

/// Schema versions, oldest first; version N is the state after `MIGRATIONS[N - 1]`.
const MIGRATIONS: &[&str] = &["
    CREATE TABLE tenants (
        name TEXT PRIMARY KEY,
        created_ms BIGINT NOT NULL,
        revoked_ms BIGINT,
        max_inboxes BIGINT,
        max_events BIGINT,
        max_bytes BIGINT,
        requests_per_sec DOUBLE PRECISION,
        events BIGINT NOT NULL DEFAULT 0,
        bytes BIGINT NOT NULL DEFAULT 0
    );
    INSERT INTO tenants (name, created_ms) VALUES ('*', 0);
    CREATE TABLE tenant_keys (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL REFERENCES tenants(name),
        hash BYTEA NOT NULL,
        created_ms BIGINT NOT NULL,
        expires_ms BIGINT
    );
    CREATE TABLE inboxes (
        id TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        tenant TEXT NOT NULL REFERENCES tenants(name),
        created_ms BIGINT NOT NULL,
        used_ms BIGINT NOT NULL,
        last_seq BIGINT NOT NULL DEFAULT 0,
        held BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX inboxes_tenant ON inboxes(tenant);
    CREATE INDEX inboxes_used ON inboxes(used_ms);
    CREATE TABLE events (
        inbox TEXT NOT NULL REFERENCES inboxes(id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        method TEXT NOT NULL,
        query TEXT NOT NULL,
        received_ms BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        PRIMARY KEY (inbox, seq)
    );
    CREATE INDEX events_received ON events(received_ms);
"];

pub struct PgStore {
    pool: Pool,
    config: tokio_postgres::Config,
}

fn pool_error(e: impl std::fmt::Display) -> StoreError {
    StoreError::Pool(e.to_string())
}

impl PgStore {
    /// Connects to `url` (`postgres://user@host:port/db`; the password from `PGPASSWORD` when
    /// the URL has none) with up to `max_connections`, and brings the schema up to date.
    pub async fn connect(url: &str, max_connections: usize) -> Result<Self, StoreError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|_| {
            StoreError::Config(
                "the database URL is not one PostgreSQL understands (postgres://user@host:5432/db)"
                    .into(),
            )
        })?;
        if config.get_password().is_none() {
            if let Ok(password) = std::env::var("PGPASSWORD") {
                config.password(password);
            }
        }
        config.application_name("kluis-relay");
        config.connect_timeout(Duration::from_secs(10));
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(max_connections)
            .wait_timeout(Some(Duration::from_secs(10)))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(pool_error)?;
        let store = Self { pool, config };
        store.migrate().await?;
        Ok(store)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock(74610262)", &[])
            .await?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS kluis_relay_schema (version INTEGER NOT NULL)",
        )
        .await?;
        let version: i32 = match tx
            .query_opt("SELECT version FROM kluis_relay_schema", &[])
            .await?
        {
            Some(row) => row.get(0),
            None => {
                tx.execute("INSERT INTO kluis_relay_schema VALUES (0)", &[])
                    .await?;
                0
            }
        };
        let known = MIGRATIONS.len() as i32;
        if version > known {
            return Err(StoreError::TooNew {
                found: version.into(),
                known: known.into(),
            });
        }
        for migration in &MIGRATIONS[version as usize..] {
            tx.batch_execute(migration).await?;
        }
        tx.execute("UPDATE kluis_relay_schema SET version = $1", &[&known])
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

fn quota_of(row: &tokio_postgres::Row, first: usize) -> Quota {
    let bound = |i: usize| row.get::<_, Option<i64>>(i).map(|v| v.max(0) as u64);
    Quota {
        max_inboxes: bound(first),
        max_events: bound(first + 1),
        max_bytes: bound(first + 2),
        requests_per_sec: row.get(first + 3),
    }
}

fn as_i64(v: Option<u64>) -> Option<i64> {
    v.map(|v| v.min(i64::MAX as u64) as i64)
}

/// Locks `tenant`'s `inbox`; `false` if there is none.
async fn lock_owned(
    tx: &deadpool_postgres::Transaction<'_>,
    tenant: &str,
    inbox: &str,
) -> Result<bool, StoreError> {
    let statement = tx
        .prepare_cached("SELECT 1 FROM inboxes WHERE id = $1 AND tenant = $2 FOR UPDATE")
        .await?;
    Ok(tx
        .query_opt(&statement, &[&inbox, &tenant])
        .await?
        .is_some())
}

/// Deletes the locked `inbox`'s events numbered up to `up_to` or received before
/// `received_before`, keeping its and its tenant's totals; how many.
async fn forget(
    tx: &deadpool_postgres::Transaction<'_>,
    inbox: &str,
    up_to: i64,
    received_before: i64,
) -> Result<u64, StoreError> {
    let statement = tx
        .prepare_cached(
            "WITH gone AS (
                DELETE FROM events WHERE inbox = $1 AND (seq <= $2 OR received_ms < $3)
                RETURNING bytes
             ) SELECT COUNT(*), COALESCE(SUM(bytes), 0)::BIGINT FROM gone",
        )
        .await?;
    let row = tx
        .query_one(&statement, &[&inbox, &up_to, &received_before])
        .await?;
    let (count, bytes): (i64, i64) = (row.get(0), row.get(1));
    if count > 0 {
        let inboxes = tx
            .prepare_cached(
                "UPDATE inboxes SET held = GREATEST(held - $2, 0) WHERE id = $1 RETURNING tenant",
            )
            .await?;
        let tenant: String = tx.query_one(&inboxes, &[&inbox, &count]).await?.get(0);
        let tenants = tx
            .prepare_cached(
                "UPDATE tenants SET events = GREATEST(events - $2, 0), bytes = GREATEST(bytes - $3, 0) WHERE name = $1",
            )
            .await?;
        tx.execute(&tenants, &[&tenant, &count, &bytes]).await?;
    }
    Ok(count as u64)
}

#[async_trait]
impl Storage for PgStore {
    fn engine(&self) -> &'static str {
        "postgres"
    }

    fn watch(&self, wake: Wake) -> Option<tokio::task::JoinHandle<()>> {
        Some(tokio::spawn(listen(self.config.clone(), wake)))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.client().await?.execute("SELECT 1", &[]).await?;
        Ok(())
    }

    async fn add_tenant(
        &self,
        name: &str,
        quota: Quota,
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = super::now_ms();
        let added = tx
            .execute(
                "INSERT INTO tenants (name, created_ms, max_inboxes, max_events, max_bytes, requests_per_sec)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                &[
                    &name,
                    &now,
                    &as_i64(quota.max_inboxes),
                    &as_i64(quota.max_events),
                    &as_i64(quota.max_bytes),
                    &quota.requests_per_sec,
                ],
            )
            .await?;
        if added == 0 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO tenant_keys (id, tenant, hash, created_ms) VALUES ($1, $2, $3, $4)",
            &[&key_id, &name, &&key_hash[..], &now],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn tenants(&self) -> Result<Vec<TenantSummary>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT name, created_ms, revoked_ms, max_inboxes, max_events, max_bytes, requests_per_sec,
                    (SELECT COUNT(*) FROM tenant_keys k WHERE k.tenant = t.name
                        AND (k.expires_ms IS NULL OR k.expires_ms > $1)),
                    (SELECT COUNT(*) FROM inboxes i WHERE i.tenant = t.name),
                    events, bytes
                 FROM tenants t ORDER BY name",
                &[&super::now_ms()],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| TenantSummary {
                name: r.get(0),
                created_ms: r.get(1),
                revoked_ms: r.get(2),
                quota: quota_of(r, 3),
                live_keys: r.get::<_, i64>(7) as u64,
                inboxes: r.get::<_, i64>(8) as u64,
                events: r.get::<_, i64>(9).max(0) as u64,
                bytes: r.get::<_, i64>(10).max(0) as u64,
            })
            .collect())
    }

    async fn revoke_tenant(&self, name: &str) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // Inboxes first, then the tenant: the order every transaction locks in.
        tx.execute(
            "SELECT 1 FROM inboxes WHERE tenant = $1 FOR UPDATE",
            &[&name],
        )
        .await?;
        let revoked = tx
            .execute(
                "UPDATE tenants SET revoked_ms = $2, events = 0, bytes = 0
                 WHERE name = $1 AND revoked_ms IS NULL AND name != $3",
                &[&name, &super::now_ms(), &SHARED_TENANT],
            )
            .await?;
        if revoked == 0 {
            return Ok(false);
        }
        tx.execute("DELETE FROM tenant_keys WHERE tenant = $1", &[&name])
            .await?;
        // Their events go with them (ON DELETE CASCADE).
        tx.execute("DELETE FROM inboxes WHERE tenant = $1", &[&name])
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn rotate_key(
        &self,
        name: &str,
        key_id: &str,
        key_hash: [u8; 32],
        old_until_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let live = tx
            .query_opt(
                "SELECT 1 FROM tenants WHERE name = $1 AND revoked_ms IS NULL AND name != $2 FOR UPDATE",
                &[&name, &SHARED_TENANT],
            )
            .await?
            .is_some();
        if !live {
            return Ok(false);
        }
        let now = super::now_ms();
        // Keys that already end sooner keep their earlier end.
        tx.execute(
            "UPDATE tenant_keys SET expires_ms = LEAST(COALESCE(expires_ms, $2), $2) WHERE tenant = $1",
            &[&name, &old_until_ms],
        )
        .await?;
        tx.execute(
            "DELETE FROM tenant_keys WHERE tenant = $1 AND expires_ms <= $2",
            &[&name, &now],
        )
        .await?;
        tx.execute(
            "INSERT INTO tenant_keys (id, tenant, hash, created_ms) VALUES ($1, $2, $3, $4)",
            &[&key_id, &name, &&key_hash[..], &now],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn key(&self, key_id: &str) -> Result<Option<StoredKey>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT k.tenant, k.hash, k.expires_ms, t.revoked_ms IS NOT NULL,
                    t.max_inboxes, t.max_events, t.max_bytes, t.requests_per_sec
                 FROM tenant_keys k JOIN tenants t ON t.name = k.tenant WHERE k.id = $1",
            )
            .await?;
        Ok(client
            .query_opt(&statement, &[&key_id])
            .await?
            .map(|r| StoredKey {
                tenant: r.get(0),
                hash: r.get::<_, Vec<u8>>(1).try_into().unwrap_or([0; 32]),
                expires_ms: r.get(2),
                revoked: r.get(3),
                quota: quota_of(&r, 4),
            }))
    }

    async fn create_inbox(
        &self,
        tenant: &str,
        quota: &Quota,
        id: &str,
        token: &str,
    ) -> Result<Result<(), Refusal>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The tenant's row lock makes count-then-insert one step among instances.
        let live = tx
            .query_opt(
                "SELECT 1 FROM tenants WHERE name = $1 AND revoked_ms IS NULL FOR UPDATE",
                &[&tenant],
            )
            .await?
            .is_some();
        if !live {
            return Ok(Err(Refusal::Revoked));
        }
        if let Some(max) = quota.max_inboxes {
            let held: i64 = tx
                .query_one("SELECT COUNT(*) FROM inboxes WHERE tenant = $1", &[&tenant])
                .await?
                .get(0);
            if held as u64 >= max {
                return Ok(Err(Refusal::TenantInboxes));
            }
        }
        tx.execute(
            "INSERT INTO inboxes (id, token, tenant, created_ms, used_ms) VALUES ($1, $2, $3, $4, $4)",
            &[&id, &token, &tenant, &super::now_ms()],
        )
        .await?;
        tx.commit().await?;
        Ok(Ok(()))
    }

    async fn is_live(&self, inbox: &str, token: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached("SELECT token FROM inboxes WHERE id = $1")
            .await?;
        let stored: Option<String> = client
            .query_opt(&statement, &[&inbox])
            .await?
            .map(|r| r.get(0));
        Ok(stored.is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes())))
    }

    async fn record(
        &self,
        inbox: &str,
        token: &str,
        method: &str,
        query: &str,
        limits: Limits,
    ) -> Result<Recorded, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let lock = tx
            .prepare_cached("SELECT token, tenant, held FROM inboxes WHERE id = $1 FOR UPDATE")
            .await?;
        let Some(row) = tx.query_opt(&lock, &[&inbox]).await? else {
            return Ok(Recorded::NoInbox);
        };
        let (stored_token, tenant, held): (String, String, i64) =
            (row.get(0), row.get(1), row.get(2));
        if !constant_time_eq(stored_token.as_bytes(), token.as_bytes()) {
            return Ok(Recorded::NoInbox);
        }
        let refused = |why| {
            Ok(Recorded::Refused {
                tenant: tenant.clone(),
                why,
            })
        };
        if held as u64 >= limits.max_events_per_inbox {
            return refused(Refusal::Inbox);
        }
        let bytes = (method.len() + query.len()) as i64;
        let quota = tx
            .prepare_cached(
                "SELECT max_events, max_bytes, events, bytes FROM tenants WHERE name = $1 FOR UPDATE",
            )
            .await?;
        let row = tx.query_one(&quota, &[&tenant]).await?;
        let (max_events, max_bytes): (Option<i64>, Option<i64>) = (row.get(0), row.get(1));
        let (events, held_bytes): (i64, i64) = (row.get(2), row.get(3));
        if max_events.is_some_and(|max| events >= max) {
            return refused(Refusal::TenantEvents);
        }
        if max_bytes.is_some_and(|max| held_bytes + bytes > max) {
            return refused(Refusal::TenantBytes);
        }
        let now = super::now_ms();
        let number = tx
            .prepare_cached(
                "UPDATE inboxes SET last_seq = last_seq + 1, held = held + 1, used_ms = $2
                 WHERE id = $1 RETURNING last_seq",
            )
            .await?;
        let seq: i64 = tx.query_one(&number, &[&inbox, &now]).await?.get(0);
        let insert = tx
            .prepare_cached(
                "INSERT INTO events (inbox, seq, method, query, received_ms, bytes) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .await?;
        let totals = tx
            .prepare_cached(
                "UPDATE tenants SET events = events + 1, bytes = bytes + $2 WHERE name = $1",
            )
            .await?;
        let notify = tx.prepare_cached("SELECT pg_notify($1, $2)").await?;
        // Sent together (tokio-postgres pipelines them): one round trip, not three.
        let event: [&(dyn tokio_postgres::types::ToSql + Sync); 6] =
            [&inbox, &seq, &method, &query, &now, &bytes];
        let total: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&tenant, &bytes];
        let notice: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&CHANNEL, &inbox];
        tokio::try_join!(
            tx.execute(&insert, &event),
            tx.execute(&totals, &total),
            tx.execute(&notify, &notice),
        )?;
        tx.commit().await?;
        Ok(Recorded::Stored { tenant, seq })
    }

    async fn events_after(
        &self,
        tenant: &str,
        inbox: &str,
        after: i64,
        limit: usize,
    ) -> Result<Option<Vec<Event>>, StoreError> {
        let client = self.client().await?;
        let owned = client
            .prepare_cached("SELECT 1 FROM inboxes WHERE id = $1 AND tenant = $2")
            .await?;
        let events = client
            .prepare_cached(
                "SELECT e.seq, e.method, e.query, e.received_ms FROM events e
                 JOIN inboxes i ON i.id = e.inbox
                 WHERE e.inbox = $1 AND i.tenant = $2 AND e.seq > $3 ORDER BY e.seq LIMIT $4",
            )
            .await?;
        let limit = limit as i64;
        let whose: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&inbox, &tenant];
        let which: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&inbox, &tenant, &after, &limit];
        let (owned, rows) = tokio::try_join!(
            client.query_opt(&owned, &whose),
            client.query(&events, &which),
        )?;
        if owned.is_none() {
            return Ok(None);
        }
        Ok(Some(
            rows.iter()
                .map(|r| Event {
                    seq: r.get(0),
                    method: r.get(1),
                    query: r.get(2),
                    received_ms: r.get(3),
                })
                .collect(),
        ))
    }

    async fn ack(&self, tenant: &str, inbox: &str, up_to: i64) -> Result<Option<u64>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        if !lock_owned(&tx, tenant, inbox).await? {
            return Ok(None);
        }
        let removed = forget(&tx, inbox, up_to, i64::MIN).await?;
        tx.commit().await?;
        Ok(Some(removed))
    }

    async fn delete_inbox(&self, tenant: &str, inbox: &str) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        if !lock_owned(&tx, tenant, inbox).await? {
            return Ok(false);
        }
        forget(&tx, inbox, i64::MAX, i64::MIN).await?;
        tx.execute("DELETE FROM inboxes WHERE id = $1", &[&inbox])
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn expire(
        &self,
        events_before_ms: i64,
        inboxes_before_ms: i64,
    ) -> Result<(u64, u64), StoreError> {
        // One inbox per transaction, in batches: every instance runs this, and no transaction
        // holds many locks at once.
        let (events, inboxes) = self
            .forget_each(
                "SELECT id, tenant FROM inboxes WHERE used_ms < $1 LIMIT 1000",
                inboxes_before_ms,
                Forget::IdleInbox,
            )
            .await?;
        let (old, _) = self
            .forget_each(
                "SELECT DISTINCT e.inbox, i.tenant FROM events e JOIN inboxes i ON i.id = e.inbox
                 WHERE e.received_ms < $1 LIMIT 1000",
                events_before_ms,
                Forget::Before(events_before_ms),
            )
            .await?;
        Ok((events + old, inboxes))
    }
}

/// What expiry forgets of an inbox.
#[derive(Clone, Copy)]
enum Forget {
    /// The whole inbox, if it is still unused since the bound.
    IdleInbox,
    /// Its events received before this.
    Before(i64),
}

impl PgStore {
    /// Forgets `what` of each (inbox, tenant) that `list` (bound to `bound`) names, one locked
    /// inbox per transaction; the events and inboxes gone.
    async fn forget_each(
        &self,
        list: &str,
        bound: i64,
        what: Forget,
    ) -> Result<(u64, u64), StoreError> {
        let (mut events, mut inboxes) = (0, 0);
        let found: Vec<(String, String)> = self
            .client()
            .await?
            .query(list, &[&bound])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        for (inbox, tenant) in found {
            let mut client = self.client().await?;
            let tx = client.transaction().await?;
            if !lock_owned(&tx, &tenant, &inbox).await? {
                continue;
            }
            match what {
                Forget::IdleInbox => {
                    events += forget(&tx, &inbox, i64::MAX, i64::MIN).await?;
                    inboxes += tx
                        .execute(
                            "DELETE FROM inboxes WHERE id = $1 AND used_ms < $2",
                            &[&inbox, &bound],
                        )
                        .await?;
                }
                Forget::Before(before) => events += forget(&tx, &inbox, i64::MIN, before).await?,
            }
            tx.commit().await?;
        }
        Ok((events, inboxes))
    }
}

/// Keeps a connection listening for other instances' callbacks, passing each to `wake`; made
/// again after it is lost (waking everyone then, as notices may have been missed), until
/// `wake` says nobody listens any more.
async fn listen(mut config: tokio_postgres::Config, wake: Wake) {
    config.application_name("kluis-relay listen");
    let mut failures = 0u32;
    loop {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                let command = format!("LISTEN {CHANNEL}");
                let listening = client.batch_execute(&command);
                let mut listening = std::pin::pin!(listening);
                let mut announced = false;
                loop {
                    let message = tokio::select! {
                        message = std::future::poll_fn(|cx| connection.poll_message(cx)) => message,
                        done = &mut listening, if !announced => {
                            announced = true;
                            match done {
                                Ok(()) => {
                                    failures = 0;
                                    if !wake(None) {
                                        return;
                                    }
                                    continue;
                                }
                                Err(e) => {
                                    tracing::warn!(%e, "cannot listen for other instances' callbacks");
                                    break;
                                }
                            }
                        }
                    };
                    match message {
                        Some(Ok(tokio_postgres::AsyncMessage::Notification(notice))) => {
                            if !wake(Some(notice.payload())) {
                                return;
                            }
                        }
                        Some(Ok(_)) => {}
                        Some(Err(e)) => {
                            tracing::warn!(%e, "lost the connection for other instances' callbacks");
                            break;
                        }
                        None => break,
                    }
                }
            }
            Err(e) => tracing::warn!(%e, "cannot connect to listen for other instances' callbacks"),
        }
        // Meanwhile parked long-polls look again on their own (RelayConfig::recheck).
        failures += 1;
        tokio::time::sleep(Duration::from_millis(250 * u64::from(failures.min(40)))).await;
        if !wake(None) {
            return;
        }
    }
}
