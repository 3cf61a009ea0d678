//! SQLite databases that several processes open: the history (the app, `kluis run-due` and
//! every `kluis` command) and the relay's store (the relay and `kluis-relay tenant …`).
//!
//! [`open_shared`] opens one with a busy timeout and in WAL mode (readers never wait for the
//! writer). Turning a new database to WAL takes an exclusive lock for which SQLite does not
//! call the busy handler: two processes opening a database nobody has opened yet — the app and
//! the scheduler's `kluis run-due` on the first morning, or a test watching a command's
//! history — saw "database is locked" at once (12 of 1,200 openings of three processes at once,
//! measured), and the command failed before it began. The change is retried within the busy
//! timeout instead; once a database is in WAL mode the pragma takes no lock at all.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

/// How long an opening or a write waits for another process's lock before it fails.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens (creating if needed) the database at `path` for sharing with other processes: busy
/// timeout [`BUSY_TIMEOUT`], WAL journal, `synchronous = NORMAL` (a commit is durable once the
/// WAL is synced at a checkpoint; callers sync what must survive a power cut themselves).
/// The file should already exist owner-only ([`crate::files::prepare_file`]).
pub fn open_shared(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    use_wal(&conn, BUSY_TIMEOUT)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// Sets `conn`'s database to WAL, retrying while another connection holds the lock the change
/// needs, for at most `within`.
fn use_wal(conn: &Connection, within: Duration) -> rusqlite::Result<()> {
    let deadline = Instant::now() + within;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == ErrorCode::DatabaseBusy && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            done => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Connections opening a new database all at once each open it in WAL mode: none fails
    /// with "database is locked" (without the retry one of the first rounds failed, run after run).
    #[test]
    fn databases_opened_at_once_by_many_all_open() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..60 {
            let path = dir.path().join(format!("{round}.sqlite3"));
            crate::files::prepare_file(&path).unwrap();
            let start = std::sync::Arc::new(std::sync::Barrier::new(4));
            let openers: Vec<_> = (0..4)
                .map(|_| {
                    let (path, start) = (path.clone(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        let conn = open_shared(&path)?;
                        conn.query_row("PRAGMA journal_mode", [], |row| row.get::<_, String>(0))
                    })
                })
                .collect();
            for opener in openers {
                let mode = opener.join().unwrap();
                assert_eq!(mode.as_deref(), Ok("wal"), "round {round}: {mode:?}");
            }
        }
    }
}
