//! The relay's SQLite store: inboxes (each with a secret capability token) and the callback
//! events received for them, numbered by a global sequence.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS inboxes (
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
CREATE INDEX IF NOT EXISTS events_inbox ON events(inbox, seq);
";

/// Bounds on what callbacks may store.
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

/// Why a callback was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Full {
    #[error("this inbox holds as many unacknowledged callbacks as it may")]
    Inbox,
    #[error("the relay's database is full")]
    Database,
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

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("relay store: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("relay store: {0}")]
    Io(std::io::Error),
}

pub struct Store {
    conn: Mutex<Connection>,
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Opens (creating if needed) the database at `path`, owner-only: it holds the callback
    /// queries, which carry the service's secret ids.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        kluis_https::private::prepare_file(path).map_err(StoreError::Io)?;
        Self::setup(Connection::open(path)?)
    }

    pub fn in_memory() -> Result<Self, StoreError> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(conn: Connection) -> Result<Self, StoreError> {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    pub fn create_inbox(&self, id: &str, token: &str) -> Result<(), StoreError> {
        let now = now_ms();
        self.conn.lock().unwrap().execute(
            "INSERT INTO inboxes VALUES (?1, ?2, ?3, ?3)",
            params![id, token, now],
        )?;
        Ok(())
    }

    pub fn inbox_exists(&self, id: &str) -> Result<bool, StoreError> {
        let found = self
            .conn
            .lock()
            .unwrap()
            .query_row("SELECT 1 FROM inboxes WHERE id = ?1", params![id], |_| {
                Ok(())
            })
            .optional()?;
        Ok(found.is_some())
    }

    /// Whether `inbox` exists with `token`.
    pub fn is_live(&self, inbox: &str, token: &str) -> Result<bool, StoreError> {
        let conn = self.conn.lock().unwrap();
        Self::token_matches(&conn, inbox, token)
    }

    fn token_matches(conn: &Connection, inbox: &str, token: &str) -> Result<bool, StoreError> {
        let stored: Option<String> = conn
            .query_row(
                "SELECT token FROM inboxes WHERE id = ?1",
                params![inbox],
                |r| r.get(0),
            )
            .optional()?;
        Ok(stored.is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes())))
    }

    /// Stores a callback if `inbox` exists with `token`; returns its sequence number, or why
    /// it did not fit within `limits`.
    pub fn record(
        &self,
        inbox: &str,
        token: &str,
        method: &str,
        query: &str,
        limits: Limits,
    ) -> Result<Result<Option<i64>, Full>, StoreError> {
        let conn = self.conn.lock().unwrap();
        if !Self::token_matches(&conn, inbox, token)? {
            return Ok(Ok(None));
        }
        let held: u64 = conn.query_row(
            "SELECT COUNT(*) FROM events WHERE inbox = ?1",
            params![inbox],
            |r| r.get(0),
        )?;
        if held >= limits.max_events_per_inbox {
            return Ok(Err(Full::Inbox));
        }
        let size: u64 = conn.query_row(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            [],
            |r| r.get(0),
        )?;
        if size >= limits.max_db_bytes {
            return Ok(Err(Full::Database));
        }
        let now = now_ms();
        conn.execute(
            "INSERT INTO events (inbox, method, query, received_ms) VALUES (?1, ?2, ?3, ?4)",
            params![inbox, method, query, now],
        )?;
        let seq = conn.last_insert_rowid();
        conn.execute(
            "UPDATE inboxes SET used_ms = ?2 WHERE id = ?1",
            params![inbox, now],
        )?;
        Ok(Ok(Some(seq)))
    }

    /// Events of `inbox` after `after`, oldest first, at most `limit`.
    pub fn events_after(
        &self,
        inbox: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<Event>, StoreError> {
        let conn = self.conn.lock().unwrap();
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
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Forgets the events of `inbox` up to and including `up_to`.
    pub fn ack(&self, inbox: &str, up_to: i64) -> Result<usize, StoreError> {
        Ok(self.conn.lock().unwrap().execute(
            "DELETE FROM events WHERE inbox = ?1 AND seq <= ?2",
            params![inbox, up_to],
        )?)
    }

    pub fn delete_inbox(&self, inbox: &str) -> Result<bool, StoreError> {
        let conn = self.conn.lock().unwrap();
        conn.execute("DELETE FROM events WHERE inbox = ?1", params![inbox])?;
        Ok(conn.execute("DELETE FROM inboxes WHERE id = ?1", params![inbox])? > 0)
    }

    /// Drops events older than `event_ttl_ms` and inboxes unused for `inbox_ttl_ms`.
    pub fn expire(
        &self,
        now: i64,
        event_ttl_ms: i64,
        inbox_ttl_ms: i64,
    ) -> Result<(usize, usize), StoreError> {
        let conn = self.conn.lock().unwrap();
        let events = conn.execute(
            "DELETE FROM events WHERE received_ms < ?1",
            params![now - event_ttl_ms],
        )?;
        conn.execute(
            "DELETE FROM events WHERE inbox IN (SELECT id FROM inboxes WHERE used_ms < ?1)",
            params![now - inbox_ttl_ms],
        )?;
        let inboxes = conn.execute(
            "DELETE FROM inboxes WHERE used_ms < ?1",
            params![now - inbox_ttl_ms],
        )?;
        Ok((events, inboxes))
    }
}

/// Compares secrets without an early exit that would tell an attacker how much matched.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events need the right token, come back in order after a cursor, and go on ack.
    #[test]
    fn records_lists_and_acks() {
        let store = Store::in_memory().unwrap();
        store.create_inbox("a", "tok").unwrap();
        assert_eq!(
            store
                .record("a", "wrong", "GET", "id=1", Limits::NONE)
                .unwrap(),
            Ok(None)
        );
        assert_eq!(
            store
                .record("b", "tok", "GET", "id=1", Limits::NONE)
                .unwrap(),
            Ok(None)
        );
        let first = store
            .record("a", "tok", "GET", "id=1", Limits::NONE)
            .unwrap()
            .unwrap()
            .unwrap();
        let second = store
            .record("a", "tok", "GET", "id=2", Limits::NONE)
            .unwrap()
            .unwrap()
            .unwrap();
        let all = store.events_after("a", 0, 10).unwrap();
        assert_eq!(
            all.iter().map(|e| e.query.as_str()).collect::<Vec<_>>(),
            ["id=1", "id=2"]
        );
        assert_eq!(store.events_after("a", first, 10).unwrap()[0].seq, second);
        assert_eq!(store.ack("a", first).unwrap(), 1);
        assert_eq!(store.events_after("a", 0, 10).unwrap().len(), 1);
    }

    /// Old events and idle inboxes expire.
    #[test]
    fn expires_old_data() {
        let store = Store::in_memory().unwrap();
        store.create_inbox("a", "t").unwrap();
        store
            .record("a", "t", "GET", "id=1", Limits::NONE)
            .unwrap()
            .unwrap();
        let later = now_ms() + 10_000;
        assert_eq!(store.expire(later, 5_000, 60_000).unwrap(), (1, 0));
        assert_eq!(store.expire(later + 100_000, 5_000, 60_000).unwrap().1, 1);
        assert!(!store.inbox_exists("a").unwrap());
    }
}
