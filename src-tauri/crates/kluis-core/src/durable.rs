//! A running job's durable history writes, made without stopping the async runtime's thread.
//!
//! A durable write in WAL mode is a commit plus a sync of the `-wal` file: that sync is all
//! SQLite's `synchronous=FULL` adds to `NORMAL` ("an additional sync operation of the WAL file
//! happens after each transaction commit", SQLite's documentation of the pragma). Done by
//! SQLite, it blocks the thread that commits — for a batch the CLI's one runtime thread, which
//! also reads and decrypts every running download: each klant's two durable writes (its journal
//! before the backup is asked for, its end) held all of them for the disk's sync, 0.4 ms each
//! on the development machine's SSD, tens of milliseconds on a laptop's hard disk.
//!
//! So [`History::durably`] commits the job's write as a light one and then syncs the `-wal` file
//! itself on tokio's blocking pool, and returns once that is done: the write is on disk at the
//! same point of the job as before, while the other jobs go on. Why syncing the file from
//! outside SQLite is sound: the commit's frames are in that file, appended; if a checkpoint has
//! meanwhile moved them into the database, SQLite synced the database before it could reuse or
//! remove the file (what `NORMAL` guarantees), so a sync of the reused file, or none of a
//! removed one, still leaves the commit on disk. SQLite keeps no lock on the `-wal` file (its
//! locks are on the database and `-shm` files), so opening and closing it here releases none.
//! A history not in WAL mode (in memory, or a file system without it) writes as before.

use std::io;
use std::path::Path;

use crate::error::{Error, Result};
use crate::history::{Durability, History};

/// Syncs a file to disk (tests replace it to see when and where it runs).
type SyncFile = fn(&Path) -> io::Result<()>;

impl History {
    /// Runs `write` — a write of this history taking the [`Durability`] to use — so that it is
    /// on disk when this returns, its sync done off the calling thread where it can be.
    pub(crate) async fn durably<T>(
        &self,
        write: impl FnOnce(&Self, Durability) -> Result<T>,
    ) -> Result<T> {
        self.durably_with(write, sync_wal).await
    }

    async fn durably_with<T>(
        &self,
        write: impl FnOnce(&Self, Durability) -> Result<T>,
        sync: SyncFile,
    ) -> Result<T> {
        let Some(wal) = self.wal.clone() else {
            return write(self, Durability::Durable);
        };
        let written = write(self, Durability::Light)?;
        let synced = tokio::task::spawn_blocking(move || sync(&wal)).await;
        match synced {
            Ok(Ok(())) => Ok(written),
            Ok(Err(e)) => Err(Error::io("write the backup history to disk", e)),
            Err(_) => Err(Error::Io(
                "The backup history could not be written to disk (its sync stopped). Try the backup again.".into(),
            )),
        }
    }
}

/// Syncs the `-wal` file's data to disk. Gone: a checkpoint moved every frame into the
/// database and synced it before the file was removed.
fn sync_wal(wal: &Path) -> io::Result<()> {
    // Write access: Windows flushes a file's buffers only through a handle that may write.
    match std::fs::OpenOptions::new().write(true).open(wal) {
        Ok(file) => file.sync_data(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::sync::Mutex;

    use uuid::Uuid;

    use std::path::PathBuf;

    use super::*;
    use crate::stage::Stage;
    use crate::KlantKey;

    /// The syncs the test's `sync` was asked for: the path and the thread it ran on.
    static SYNCS: Mutex<Vec<(PathBuf, std::thread::ThreadId)>> = Mutex::new(Vec::new());
    /// Lets the test's `sync` return (a sender per sync).
    static RELEASE: Mutex<Option<mpsc::Receiver<()>>> = Mutex::new(None);

    fn held_sync(path: &Path) -> io::Result<()> {
        SYNCS
            .lock()
            .unwrap()
            .push((path.to_path_buf(), std::thread::current().id()));
        let release = RELEASE.lock().unwrap().take().expect("one sync at a time");
        // (Bounded, so a sync run on the test's own thread fails the test rather than hang it.)
        match release.recv_timeout(std::time::Duration::from_secs(20)) {
            Ok(()) => sync_wal(path),
            Err(_) => Err(io::Error::other(
                "never released: the sync held the test's thread",
            )),
        }
    }

    fn start(history: &History) -> Uuid {
        let id = Uuid::new_v4();
        (history.start(id, &KlantKey::profile("klant"), "relay")).unwrap();
        id
    }

    /// A file history syncs its `-wal` file off the runtime's only thread: other tasks run
    /// meanwhile, and the write returns only once the sync is done — committed before it, and
    /// read back by another connection after.
    #[tokio::test(flavor = "current_thread")]
    async fn a_durable_write_syncs_off_the_runtime_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.sqlite3");
        let history = History::open(&path).unwrap();
        let id = start(&history);
        let (release, held) = mpsc::channel();
        *RELEASE.lock().unwrap() = Some(held);
        let write = history.durably_with(
            |h, durability| h.reach_as(id, Stage::Failed, durability, |_| Ok(0)),
            held_sync,
        );
        let mut write = std::pin::pin!(write);
        // Until the sync is asked for, and while it is held, the write is not done...
        let mut other_task_ran = 0;
        while SYNCS.lock().unwrap().is_empty() {
            assert!(futures_util::poll!(write.as_mut()).is_pending());
            tokio::task::yield_now().await;
            other_task_ran += 1;
        }
        for _ in 0..3 {
            assert!(
                futures_util::poll!(write.as_mut()).is_pending(),
                "not done before the sync"
            );
            tokio::task::yield_now().await;
        }
        assert!(other_task_ran > 0, "this thread ran other work meanwhile");
        let (synced, thread) = SYNCS.lock().unwrap()[0].clone();
        let wal = format!("{}-wal", std::path::absolute(&path).unwrap().display());
        assert_eq!(synced, PathBuf::from(wal), "the database's -wal file");
        assert_ne!(
            thread,
            std::thread::current().id(),
            "not on the runtime's thread"
        );
        let reader = rusqlite::Connection::open(&path).unwrap();
        let stage: String = reader
            .query_row(
                "SELECT stage FROM jobs WHERE id = ?1",
                [id.to_string()],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stage, "failed", "committed before the sync");
        release.send(()).unwrap();
        write.await.expect("written and synced");
    }

    /// A history without a `-wal` file (in memory) writes durably in place, as SQLite's FULL.
    #[tokio::test(flavor = "current_thread")]
    async fn a_history_in_memory_writes_in_place() {
        let history = History::in_memory().unwrap();
        let id = start(&history);
        let seen = std::cell::Cell::new(None);
        history
            .durably_with(
                |h, durability| {
                    seen.set(Some(durability));
                    h.reach_as(id, Stage::Failed, durability, |_| Ok(0))
                },
                |_| panic!("no file to sync"),
            )
            .await
            .unwrap();
        assert_eq!(seen.get(), Some(Durability::Durable));
        assert_eq!(history.get(id).unwrap().unwrap().stage, Stage::Failed);
    }

    /// A `-wal` file a checkpoint removed is no failure; one that cannot be opened is.
    #[test]
    fn a_removed_wal_file_is_already_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        assert!(sync_wal(&dir.path().join("gone-wal")).is_ok());
        assert!(
            sync_wal(dir.path()).is_err(),
            "a folder is not a file to write"
        );
    }
}
