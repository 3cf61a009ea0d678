//! A running job's durable history writes, made without stopping the async runtime's thread.
//!
//! A durable write (SQLite's `synchronous=FULL`) waits for the disk to sync the `-wal` file —
//! on the thread that commits. For a batch that was the CLI's one runtime thread, which also
//! reads and decrypts every running download: each klant's two durable writes (its journal
//! before the backup is asked for, its end) held all of them for the disk's sync, 0.4 ms each
//! on the development machine's SSD, tens of milliseconds on a laptop's hard disk.
//!
//! So [`History::write_durably`] makes the very same write — the same transaction, FULL, done
//! by SQLite — on tokio's blocking pool, and returns once it is done: on disk at the same point
//! of the job as before, visible to other processes only once it is on disk, and not made at
//! all when the sync fails (SQLite then keeps the commit out of the database). The
//! connection's lock is held meanwhile, as before: another job's history write made in that
//! moment still waits on the runtime's thread (a stage's light write, once in a while); the
//! downloads' reading and decrypting no longer do. A write already begun is finished even when
//! the job is dropped meanwhile (the blocking pool does not abandon it halfway); a journal
//! written after a cancel ended the job is not kept (`journal::journaling`).

use rusqlite::Transaction;

use crate::error::{Error, Result};
use crate::history::{write_on, Durability, History};

impl History {
    /// Runs `change` as one durable transaction on tokio's blocking pool and waits for it.
    pub(crate) async fn write_durably<T: Send + 'static>(
        &self,
        change: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T> {
        let conn = self.conn.clone();
        let written = tokio::task::spawn_blocking(move || {
            write_on(&mut conn.lock().unwrap(), Durability::Durable, change)
        });
        written.await.unwrap_or_else(|_| {
            Err(Error::Io(
                "The backup history could not be written (its write stopped). Try the backup again.".into(),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use uuid::Uuid;

    use super::*;
    use crate::history::reaching;
    use crate::stage::Stage;
    use crate::KlantKey;

    /// A file history's durable write runs off the runtime's only thread, as FULL: other tasks
    /// run while it waits, and it returns only once it is done — then another connection
    /// reads it.
    #[tokio::test(flavor = "current_thread")]
    async fn a_durable_write_runs_off_the_runtime_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        let history = History::open(&path).unwrap();
        let id = Uuid::new_v4();
        (history.start(id, &KlantKey::profile("klant"), "relay")).unwrap();
        let (release, held) = mpsc::channel::<()>();
        let (tell, seen) = mpsc::channel();
        let runtime_thread = std::thread::current().id();
        let write = history.write_durably(move |tx| {
            let synchronous: i64 = tx.query_row("PRAGMA synchronous", [], |row| row.get(0))?;
            tell.send((std::thread::current().id(), synchronous))
                .unwrap();
            // Held until the test lets go (bounded, so a write made on the test's own thread
            // fails the test rather than hang it).
            let released = held.recv_timeout(Duration::from_secs(20)).is_ok();
            assert!(released, "never released: the write held the test's thread");
            reaching(id, Stage::Failed, |_| Ok(0))(tx)
        });
        let mut write = std::pin::pin!(write);
        let mut other_work = 0;
        let (thread, synchronous) = loop {
            assert!(futures_util::poll!(write.as_mut()).is_pending());
            if let Ok(seen) = seen.try_recv() {
                break seen;
            }
            tokio::task::yield_now().await;
            other_work += 1;
        };
        assert_ne!(thread, runtime_thread, "not on the runtime's thread");
        assert_eq!(synchronous, 2, "FULL: on disk when it returns");
        for _ in 0..3 {
            assert!(
                futures_util::poll!(write.as_mut()).is_pending(),
                "not done while the write waits"
            );
            tokio::task::yield_now().await;
            other_work += 1;
        }
        assert!(other_work > 3, "the runtime's thread went on meanwhile");
        release.send(()).unwrap();
        write.await.expect("written");
        let reader = rusqlite::Connection::open(&path).unwrap();
        let stage: String = reader
            .query_row(
                "SELECT stage FROM jobs WHERE id = ?1",
                [id.to_string()],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stage, "failed");
        assert_eq!(history.get(id).unwrap().unwrap().stage, Stage::Failed);
        let synchronous: i64 = (history.conn.lock().unwrap())
            .query_row("PRAGMA synchronous", [], |row| row.get(0))
            .unwrap();
        assert_eq!(synchronous, 1, "NORMAL again for the next, light, write");
    }
}
