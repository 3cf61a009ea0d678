//! Download turns: how many of a batch's backups download at once.
//!
//! A batch (Backup all, a night's plans) runs one klant more than it downloads: while N
//! files come in, the next klant signs in, asks for its backup and waits for its callback, so
//! the line does not stand idle between two klanten while the service prepares a file. The
//! job takes its turn when its callback comes and before it asks the service for the file's
//! address (`GET /webhook`), so the address is fresh when the download starts — the
//! document says nothing of how long one stays valid — and it gives the turn back once the
//! file is saved, or when the job ends otherwise.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Turns shared by the downloads of one batch; cloning shares them.
#[derive(Clone, Debug)]
pub struct DownloadTurns(Arc<Semaphore>);

/// A download's turn, held while it lasts (none: the job is not limited).
#[derive(Debug)]
pub struct DownloadTurn(#[allow(dead_code)] Option<OwnedSemaphorePermit>);

impl DownloadTurns {
    /// At most `at_once` downloads at a time (at least one).
    pub fn new(at_once: usize) -> Self {
        Self(Arc::new(Semaphore::new(at_once.max(1))))
    }

    /// Waits for a turn in the order asked (the semaphore is fair); without `turns`, at once.
    pub async fn take(turns: Option<Self>) -> DownloadTurn {
        match turns {
            // (Never closed: the semaphore lives as long as any clone.)
            Some(turns) => DownloadTurn(turns.0.acquire_owned().await.ok()),
            None => DownloadTurn(None),
        }
    }

    /// Turns free now (tests).
    pub fn free(&self) -> usize {
        self.0.available_permits()
    }
}
