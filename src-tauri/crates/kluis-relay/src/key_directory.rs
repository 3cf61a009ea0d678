//! [`KeyDirectory`]: which tenant keys there are, and the keys read lately.
//!
//! Every key id is read from the store at the first request that names one, and read again
//! whenever the store says the keys may have changed ([`Storage::keys_version`]: a tenant
//! added, rotated or revoked at this instance, at another one, or by `kluis-relay tenant …`).
//! So a request whose key id the directory holds is a real key's (or a guess at its secret),
//! and is looked up without spending the budget for unknown keys — which junk spends. Before,
//! only ids this instance had read were known: after a restart, anyone sending junk keys kept
//! every office whose key was not read yet out of its inboxes until the budget refilled.
//!
//! Where the store cannot tell of a change (a PostgreSQL behind a pooler that drops
//! `NOTIFY`), the ids are read again at least every [`READ_AGAIN_AFTER`], and a key that
//! worked through the budget for unknown keys (a key made elsewhere, its notice not here yet)
//! is added at once: a real key waits on that budget once at most.
//!
//! The directory holds ids only (16 hex characters each: 10,000 keys are a few hundred KiB);
//! a key's row — its hash, tenant and quota — is read when it is used and trusted for the
//! relay's `key_ttl`, so a busy tenant's requests do not read their key again each time.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use kluis_https::Clock;

use crate::storage::{Storage, StoreError, StoredKey};

/// Keys held in the cache of rows at most: past it the cache starts again (a read for each is
/// the worst that costs).
const MOST_CACHED: usize = 100_000;
/// The ids are read again at least this often, whatever the store says (one read a minute is
/// all that junk can make the directory cost).
pub const READ_AGAIN_AFTER: Duration = Duration::from_secs(60);

/// What the directory reads of a store to know its keys: every key id, and whether they may
/// have changed since (each [`Storage`] tells both; a test's store may tell only these).
#[async_trait::async_trait]
pub trait KeyIds: Send + Sync {
    async fn key_ids(&self) -> Result<Vec<String>, StoreError>;
    fn keys_version(&self) -> u128;
}

#[async_trait::async_trait]
impl<S: Storage + ?Sized> KeyIds for S {
    async fn key_ids(&self) -> Result<Vec<String>, StoreError> {
        Storage::key_ids(self).await
    }
    fn keys_version(&self) -> u128 {
        Storage::keys_version(self)
    }
}

/// Every key id, as read at a keys version and a time.
struct Ids {
    version: u128,
    read: Instant,
    ids: HashSet<String>,
}

/// See the module's text.
pub struct KeyDirectory {
    ttl: Duration,
    clock: Clock,
    /// Every key id, and the store's keys version they were read at (none: not read yet).
    ids: RwLock<Option<Ids>>,
    /// One read of the ids at a time: requests that find them stale together wait for it.
    reading: tokio::sync::Mutex<()>,
    /// Rows read lately, and when (by `clock`).
    found: Mutex<HashMap<String, (Instant, StoredKey)>>,
}

impl KeyDirectory {
    /// A directory whose rows are trusted for `ttl` (zero: read at every use) by `clock`.
    pub fn new(ttl: Duration, clock: Clock) -> Self {
        Self {
            ttl,
            clock,
            ids: RwLock::default(),
            reading: tokio::sync::Mutex::new(()),
            found: Mutex::default(),
        }
    }

    /// Whether `id` is the id of a key the store has, the ids read again first when the keys
    /// changed since they were last read.
    pub async fn knows<S: KeyIds + ?Sized>(&self, store: &S, id: &str) -> Result<bool, StoreError> {
        if let Some(known) = self.holds(store.keys_version(), id) {
            return Ok(known);
        }
        let _reading = self.reading.lock().await;
        // (Read meanwhile by the request this one waited for.) The version is taken before
        // the ids: a change while they are read makes the next request read them again.
        let version = store.keys_version();
        if let Some(known) = self.holds(version, id) {
            return Ok(known);
        }
        let ids: HashSet<String> = store.key_ids().await?.into_iter().collect();
        let known = ids.contains(id);
        *self.ids.write().unwrap_or_else(|p| p.into_inner()) = Some(Ids {
            version,
            read: self.clock.now(),
            ids,
        });
        Ok(known)
    }

    /// Whether the ids as read at `version` hold `id`; none when they were read at another, or
    /// longer ago than [`READ_AGAIN_AFTER`].
    fn holds(&self, version: u128, id: &str) -> Option<bool> {
        match &*self.ids.read().unwrap_or_else(|p| p.into_inner()) {
            Some(read)
                if read.version == version && self.clock.since(read.read) < READ_AGAIN_AFTER =>
            {
                Some(read.ids.contains(id))
            }
            _ => None,
        }
    }

    /// Adds `id`, a key that just worked though the directory did not hold it (made at another
    /// instance, its notice not here yet — or never, behind a pooler that drops them).
    pub fn learn(&self, id: &str) {
        if let Some(read) = &mut *self.ids.write().unwrap_or_else(|p| p.into_inner()) {
            read.ids.insert(id.to_string());
        }
    }

    /// Forgets the rows read lately: a key revoked here works no more at this instance from
    /// now (at the others within the time to live).
    pub fn forget_rows(&self) {
        self.found.lock().unwrap().clear();
    }

    /// The row of key `id`: as read within the time to live, else from the store.
    pub async fn key(
        &self,
        store: &dyn Storage,
        id: &str,
    ) -> Result<Option<StoredKey>, StoreError> {
        if let Some((read, key)) = self.found.lock().unwrap().get(id) {
            if self.clock.since(*read) < self.ttl {
                return Ok(Some(key.clone()));
            }
        }
        let key = store.key(id).await?;
        let mut found = self.found.lock().unwrap();
        match &key {
            Some(key) if !self.ttl.is_zero() => {
                if found.len() >= MOST_CACHED {
                    found.clear();
                }
                found.insert(id.to_string(), (self.clock.now(), key.clone()));
            }
            _ => {
                found.remove(id);
            }
        }
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block;
    use crate::storage::sqlite::SqliteStore;
    use crate::storage::{Quota, Storage, StoreError};
    use crate::tenants::new_key;

    /// A key added after the ids were read is known at once (the store's keys version moved),
    /// a revoked one no longer; ids that are no key are not, and asking about them reads
    /// nothing again.
    #[test]
    fn the_directory_follows_the_keys() {
        block(async {
            let store = SqliteStore::in_memory().unwrap();
            let directory = KeyDirectory::new(Duration::ZERO, Clock::manual());
            let first = new_key();
            assert!(!directory.knows(&store, &first.id).await.unwrap());
            assert!(store
                .add_tenant("acme", Quota::UNLIMITED, &first.id, first.hash)
                .await
                .unwrap());
            assert!(directory.knows(&store, &first.id).await.unwrap(), "added");
            let read_at = Storage::keys_version(&store);
            for n in 0..50 {
                assert!(!directory.knows(&store, &format!("{n:016x}")).await.unwrap());
            }
            assert_eq!(
                directory.ids.read().unwrap().as_ref().map(|r| r.version),
                Some(read_at),
                "junk reads the ids no more"
            );
            assert!(store.revoke_tenant("acme").await.unwrap());
            assert!(
                !directory.knows(&store, &first.id).await.unwrap(),
                "revoked"
            );
        })
    }

    /// A key added by another process (`kluis-relay tenant add` beside a running relay, on the
    /// same SQLite file) is known at the next request.
    #[test]
    fn a_key_added_by_another_process_is_known() {
        block(async {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("relay.db");
            let serving = SqliteStore::open(&path).unwrap();
            let directory = KeyDirectory::new(Duration::ZERO, Clock::manual());
            let key = new_key();
            assert!(!directory.knows(&serving, &key.id).await.unwrap());
            let admin = SqliteStore::open(&path).unwrap();
            assert!(admin
                .add_tenant("acme", Quota::UNLIMITED, &key.id, key.hash)
                .await
                .unwrap());
            assert!(directory.knows(&serving, &key.id).await.unwrap());
        })
    }

    /// Where the store tells of no change (a pooler that drops notices), a key made elsewhere
    /// is known once it worked (`learn`), and every key within a minute (the ids read again),
    /// by the directory's clock.
    #[test]
    fn a_key_nobody_told_of_is_learnt_or_read_again() {
        block(async {
            let told = SqliteStore::in_memory().unwrap();
            let silent = Silent(told);
            let clock = Clock::manual();
            let directory = KeyDirectory::new(Duration::ZERO, clock.clone());
            let (first, second) = (new_key(), new_key());
            assert!(!directory.knows(&silent, &first.id).await.unwrap());
            for (name, key) in [("a", &first), ("b", &second)] {
                assert!(silent
                    .0
                    .add_tenant(name, Quota::UNLIMITED, &key.id, key.hash)
                    .await
                    .unwrap());
            }
            assert!(
                !directory.knows(&silent, &first.id).await.unwrap(),
                "not told"
            );
            directory.learn(&first.id);
            assert!(directory.knows(&silent, &first.id).await.unwrap(), "learnt");
            assert!(!directory.knows(&silent, &second.id).await.unwrap());
            clock.advance(READ_AGAIN_AFTER);
            assert!(
                directory.knows(&silent, &second.id).await.unwrap(),
                "read again"
            );
        })
    }

    /// A store whose keys version never moves (as behind a pooler that drops `NOTIFY`).
    struct Silent(SqliteStore);

    #[async_trait::async_trait]
    impl KeyIds for Silent {
        async fn key_ids(&self) -> Result<Vec<String>, StoreError> {
            Storage::key_ids(&self.0).await
        }
        fn keys_version(&self) -> u128 {
            0
        }
    }

    /// A row read is trusted for its time to live, then the store's word counts again.
    #[test]
    fn rows_are_read_again_after_their_time() {
        block(async {
            let store = SqliteStore::in_memory().unwrap();
            let key = new_key();
            assert!(store
                .add_tenant("acme", Quota::UNLIMITED, &key.id, key.hash)
                .await
                .unwrap());
            let clock = Clock::manual();
            let directory = KeyDirectory::new(Duration::from_secs(3600), clock.clone());
            assert!(directory.key(&store, &key.id).await.unwrap().is_some());
            assert!(store.revoke_tenant("acme").await.unwrap());
            assert!(
                directory.key(&store, &key.id).await.unwrap().is_some(),
                "within its time the row read still serves (the documented delay)"
            );
            clock.advance(Duration::from_secs(3601));
            assert!(
                directory.key(&store, &key.id).await.unwrap().is_none(),
                "read again after it: revoked, gone"
            );
        })
    }
}
