//! The PostgreSQL engine: several stateless relay instances share one database.
//!
//! - Storing a callback (`kluis_relay_record`, which also checks the inbox's token) and
//!   forgetting events (`kluis_relay_forget`) are PL/pgSQL functions, so each is one
//!   statement and one round trip. A long-poll's look is one statement too.
//! - Order per inbox: a callback takes the inbox's row lock and its next number
//!   (`inboxes.last_seq`) in the transaction that stores it, so callbacks of one inbox commit
//!   in number order and a reader that saw N has seen everything before N — a client's cursor
//!   never skips one, whichever instance stored or serves it.
//! - Wake-ups across instances: once the storing transaction has committed, the instance sends
//!   `NOTIFY kluis_relay, '<inbox>'` — not inside it: a notifying commit takes a
//!   database-wide lock, and must not wait for it while holding the inbox's and the tenant's
//!   rows (measured: that made each callback wait for the others' commits). [`PgStore::watch`]
//!   keeps one connection `LISTEN`ing and passes each notice to the relay; after that
//!   connection is lost and made again it wakes every parked long-poll (a notice may have been
//!   missed), and each parked long-poll also looks again on its own every few seconds
//!   (`RelayConfig::recheck`), which also covers an instance that died between a commit and
//!   its notice.
//! - Key changes (a tenant added, rotated or revoked, by any instance or `kluis-relay tenant`)
//!   send `NOTIFY kluis_relay_keys` inside their transaction; the listening connection moves
//!   the keys version on each, and each instance's key directory reads the key ids again.
//! - Serving starts with every pooled connection open and its statements prepared
//!   ([`Storage::warm`]).
//! - The schema's migrations and the hot paths' statements are in `schema`; TLS to the
//!   database (`sslmode=require`, the certificate checked) in `tls`.
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
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::{NoTls, Socket};

mod office;
mod schema;
mod tls;

use schema::{EVENTS_AFTER, FORGET, KEY, MIGRATIONS, NOTIFY_STORED, RECORD};

use super::{
    Event, Limits, Quota, Recorded, Refusal, Storage, StoreError, StoredKey, TenantSummary, Wake,
    SHARED_TENANT,
};

/// The channel of `NOTIFY`: its payload is the inbox id.
const CHANNEL: &str = "kluis_relay";
/// The channel of `NOTIFY` when tenant keys changed (no payload): sent in the changing
/// transaction, so every instance hears of it exactly when it is committed.
const KEYS_CHANNEL: &str = "kluis_relay_keys";

pub struct PgStore {
    pool: Pool,
    /// TLS to the database (`sslmode=require`), or plain TCP.
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    config: tokio_postgres::Config,
    /// The keys version ([`Storage::keys_version`]): moved by this store's own key changes,
    /// by each notice on [`KEYS_CHANNEL`], and whenever the listening connection is made
    /// (again: notices may have been missed meanwhile).
    keys: std::sync::Arc<tokio::sync::watch::Sender<u64>>,
}

/// A pool's error with its causes: "error performing TLS handshake" alone does not say the
/// certificate was from an unknown CA.
fn pool_error(e: impl std::error::Error) -> StoreError {
    let mut words = e.to_string();
    let mut cause = e.source();
    while let Some(inner) = cause {
        let more = inner.to_string();
        if !words.contains(&more) {
            words = format!("{words}: {more}");
        }
        cause = inner.source();
    }
    StoreError::Pool(words)
}

/// Tells every instance that tenant keys changed: delivered when the transaction commits.
const KEYS_CHANGED: &str = "SELECT pg_notify('kluis_relay_keys', '')";

impl PgStore {
    /// Moves the keys version (this store changed keys; the notice reaches the others).
    fn keys_changed(&self) {
        self.keys.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// Told whenever the keys version moves (for tests that wait for another instance's key
    /// change to arrive).
    pub fn keys_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.keys.subscribe()
    }

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
        let tls = tls::connector(&config)?;
        let recycling = || ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = match tls.clone() {
            Some(tls) => Manager::from_config(config.clone(), tls, recycling()),
            None => Manager::from_config(config.clone(), NoTls, recycling()),
        };
        let pool = Pool::builder(manager)
            .max_size(max_connections)
            .wait_timeout(Some(Duration::from_secs(10)))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(pool_error)?;
        let store = Self {
            pool,
            config,
            tls,
            keys: std::sync::Arc::new(tokio::sync::watch::Sender::new(0)),
        };
        store.migrate().await?;
        Ok(store)
    }

    /// Opens every connection of the pool and readies the hot paths on each: the statements
    /// prepared, the two functions compiled (by a call that finds no inbox). Otherwise the
    /// first callbacks an instance takes would each wait for that work (measured: the first
    /// 120 ms of the benchmark's callbacks took 100–200 ms to deliver).
    async fn warm_all(&self) -> Result<(), StoreError> {
        let mut warming = tokio::task::JoinSet::new();
        for _ in 0..self.pool.status().max_size {
            let pool = self.pool.clone();
            warming.spawn(async move {
                let client = pool.get().await.map_err(pool_error)?;
                for statement in [RECORD, NOTIFY_STORED, FORGET, KEY, EVENTS_AFTER] {
                    client.prepare_cached(statement).await?;
                }
                client
                    .batch_execute(
                        "SELECT * FROM kluis_relay_record('', '', 'GET', '', 0, 0);
                         SELECT kluis_relay_forget('', '', 0, 0, false, 0)",
                    )
                    .await?;
                Ok::<_, StoreError>(client)
            });
        }
        // Each connection is held until all are warm, so every one of them is.
        let mut warm = Vec::new();
        while let Some(done) = warming.join_next().await {
            warm.push(done.map_err(pool_error)??);
        }
        Ok(())
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

/// What `kluis_relay_forget` forgets of an inbox.
struct Forget<'a> {
    tenant: &'a str,
    inbox: &'a str,
    /// Events numbered up to this…
    up_to: i64,
    /// …or received before this.
    before: i64,
    /// And the inbox itself.
    drop: bool,
    /// Only if unused since then (expiry).
    idle_before: i64,
}

impl Forget<'_> {
    /// How many events went, or `None` if the tenant has no such inbox (idle, for expiry).
    async fn run(&self, client: &impl GenericClient) -> Result<Option<u64>, StoreError> {
        let statement = client.prepare_cached(FORGET).await?;
        let row = client
            .query_one(
                &statement,
                &[
                    &self.tenant,
                    &self.inbox,
                    &self.up_to,
                    &self.before,
                    &self.drop,
                    &self.idle_before,
                ],
            )
            .await?;
        Ok(row.get::<_, Option<i64>>(0).map(|n| n.max(0) as u64))
    }
}

#[async_trait]
impl Storage for PgStore {
    fn engine(&self) -> &'static str {
        "postgres"
    }

    fn watch(&self, wake: Wake) -> Option<tokio::task::JoinHandle<()>> {
        let (config, keys) = (self.config.clone(), self.keys.clone());
        Some(match self.tls.clone() {
            Some(tls) => tokio::spawn(listen(config, tls, wake, keys)),
            None => tokio::spawn(listen(config, NoTls, wake, keys)),
        })
    }

    async fn warm(&self) -> Result<(), StoreError> {
        self.warm_all().await
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
        tx.execute(KEYS_CHANGED, &[]).await?;
        tx.commit().await?;
        self.keys_changed();
        Ok(true)
    }

    async fn tenants(&self) -> Result<Vec<TenantSummary>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT name, created_ms, revoked_ms, max_inboxes, max_events, max_bytes, requests_per_sec,
                    (SELECT COUNT(*) FROM tenant_keys k WHERE k.tenant = t.name AND k.pc IS NULL
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
        tx.execute("DELETE FROM office_reports WHERE tenant = $1", &[&name])
            .await?;
        tx.execute("DELETE FROM office_invites WHERE tenant = $1", &[&name])
            .await?;
        tx.execute("DELETE FROM office_key_checks WHERE tenant = $1", &[&name])
            .await?;
        tx.execute(
            "DELETE FROM office_key_checkers WHERE tenant = $1",
            &[&name],
        )
        .await?;
        tx.execute("DELETE FROM office_turns WHERE tenant = $1", &[&name])
            .await?;
        tx.execute("DELETE FROM tenant_keys WHERE tenant = $1", &[&name])
            .await?;
        // Their events go with them (ON DELETE CASCADE).
        tx.execute("DELETE FROM inboxes WHERE tenant = $1", &[&name])
            .await?;
        tx.execute(KEYS_CHANGED, &[]).await?;
        tx.commit().await?;
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
            "UPDATE tenant_keys SET expires_ms = LEAST(COALESCE(expires_ms, $2), $2)
             WHERE tenant = $1 AND pc IS NULL",
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
        tx.execute(KEYS_CHANGED, &[]).await?;
        tx.commit().await?;
        self.keys_changed();
        Ok(true)
    }

    async fn key(&self, key_id: &str) -> Result<Option<StoredKey>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(KEY).await?;
        Ok(client
            .query_opt(&statement, &[&key_id])
            .await?
            .map(|r| StoredKey {
                tenant: r.get(0),
                hash: r.get::<_, Vec<u8>>(1).try_into().unwrap_or([0; 32]),
                expires_ms: r.get(2),
                revoked: r.get(3),
                quota: quota_of(&r, 4),
                pc: r.get(8),
            }))
    }

    async fn key_ids(&self) -> Result<Vec<String>, StoreError> {
        let rows = (self.client().await?)
            .query("SELECT id FROM tenant_keys", &[])
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn keys_version(&self) -> u128 {
        u128::from(*self.keys.borrow())
    }

    async fn callback_key(&self, fresh: [u8; 32]) -> Result<[u8; 32], StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO kluis_relay_keys (name, key) VALUES ('callback', $1)
                 ON CONFLICT (name) DO NOTHING",
                &[&&fresh[..]],
            )
            .await?;
        let row = client
            .query_one(
                "SELECT key FROM kluis_relay_keys WHERE name = 'callback'",
                &[],
            )
            .await?;
        row.get::<_, Vec<u8>>(0).try_into().map_err(|_| {
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

    async fn record(
        &self,
        inbox: &str,
        token: &str,
        method: &str,
        query: &str,
        limits: Limits,
    ) -> Result<Recorded, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(RECORD).await?;
        let max_held = limits.max_events_per_inbox.min(i64::MAX as u64) as i64;
        let row = client
            .query_one(
                &statement,
                &[&inbox, &token, &method, &query, &super::now_ms(), &max_held],
            )
            .await?;
        let (outcome, tenant, seq): (String, Option<String>, Option<i64>) =
            (row.get(0), row.get(1), row.get(2));
        let tenant = tenant.unwrap_or_default();
        let why = match outcome.as_str() {
            "stored" => {
                // Committed: now tell the other instances. Should this fail, their parked
                // long-polls still find the callback when they look again on their own.
                let notify = client.prepare_cached(NOTIFY_STORED).await?;
                if let Err(e) = client.execute(&notify, &[&inbox]).await {
                    tracing::warn!(%e, "could not tell the other instances of a callback");
                }
                return Ok(Recorded::Stored {
                    tenant,
                    seq: seq.unwrap_or_default(),
                });
            }
            "no_inbox" => return Ok(Recorded::NoInbox),
            "inbox_full" => Refusal::Inbox,
            "quota_events" => Refusal::TenantEvents,
            _ => Refusal::TenantBytes,
        };
        Ok(Recorded::Refused { tenant, why })
    }

    async fn events_after(
        &self,
        tenant: &str,
        inbox: &str,
        after: i64,
        limit: usize,
    ) -> Result<Option<Vec<Event>>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(EVENTS_AFTER).await?;
        let rows = client
            .query(&statement, &[&inbox, &tenant, &after, &(limit as i64)])
            .await?;
        if rows.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            rows.iter()
                .filter_map(|r| {
                    Some(Event {
                        seq: r.get::<_, Option<i64>>(0)?,
                        method: r.get(1),
                        query: r.get(2),
                        received_ms: r.get(3),
                    })
                })
                .collect(),
        ))
    }

    async fn ack(&self, tenant: &str, inbox: &str, up_to: i64) -> Result<Option<u64>, StoreError> {
        let forget = Forget {
            tenant,
            inbox,
            up_to,
            before: i64::MIN,
            drop: false,
            idle_before: i64::MAX,
        };
        forget.run(&self.client().await?).await
    }

    async fn delete_inbox(&self, tenant: &str, inbox: &str) -> Result<bool, StoreError> {
        let forget = Forget {
            tenant,
            inbox,
            up_to: i64::MAX,
            before: i64::MIN,
            drop: true,
            idle_before: i64::MAX,
        };
        Ok(forget.run(&self.client().await?).await?.is_some())
    }

    async fn expire(
        &self,
        events_before_ms: i64,
        inboxes_before_ms: i64,
    ) -> Result<(u64, u64), StoreError> {
        // One inbox per statement, in batches: every instance runs this, and no transaction
        // holds many locks at once.
        let client = self.client().await?;
        let (mut events, mut inboxes) = (0, 0);
        let idle = client
            .query(
                "SELECT id, tenant FROM inboxes WHERE used_ms < $1 LIMIT 1000",
                &[&inboxes_before_ms],
            )
            .await?;
        for row in idle {
            let forget = Forget {
                tenant: row.get(1),
                inbox: row.get(0),
                up_to: i64::MAX,
                before: i64::MIN,
                drop: true,
                idle_before: inboxes_before_ms,
            };
            if let Some(gone) = forget.run(&client).await? {
                events += gone;
                inboxes += 1;
            }
        }
        let old = client
            .query(
                "SELECT DISTINCT e.inbox, i.tenant FROM events e JOIN inboxes i ON i.id = e.inbox
                 WHERE e.received_ms < $1 LIMIT 1000",
                &[&events_before_ms],
            )
            .await?;
        for row in old {
            let forget = Forget {
                tenant: row.get(1),
                inbox: row.get(0),
                up_to: i64::MIN,
                before: events_before_ms,
                drop: false,
                idle_before: i64::MAX,
            };
            events += forget.run(&client).await?.unwrap_or(0);
        }
        Ok((events, inboxes))
    }
}

/// Keeps a connection listening for other instances' callbacks, passing each to `wake`, and
/// for key changes, moving the keys version `keys`; made again after it is lost (waking
/// everyone and moving the version then, as notices may have been missed), until `wake` says
/// nobody listens any more.
async fn listen<T>(
    mut config: tokio_postgres::Config,
    tls: T,
    wake: Wake,
    keys: std::sync::Arc<tokio::sync::watch::Sender<u64>>,
) where
    T: MakeTlsConnect<Socket> + Clone + Send + 'static,
    T::Stream: Send,
    T::TlsConnect: Send,
    <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
{
    config.application_name("kluis-relay listen");
    let mut failures = 0u32;
    loop {
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let command = format!("LISTEN {CHANNEL}; LISTEN {KEYS_CHANNEL}");
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
                                    // Key changes may have been missed too.
                                    keys.send_modify(|v| *v = v.wrapping_add(1));
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
                        Some(Ok(tokio_postgres::AsyncMessage::Notification(notice)))
                            if notice.channel() == KEYS_CHANNEL =>
                        {
                            keys.send_modify(|v| *v = v.wrapping_add(1));
                        }
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
