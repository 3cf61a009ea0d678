//! Download turns: how many of a batch's backups download at once.
//!
//! A batch (Backup all, a night's plans) runs one klant more than it downloads: while N
//! files come in, the next klant signs in, asks for its backup, waits for its callback and
//! redeems it, so the line does not stand idle between two klanten while the service prepares
//! a file. The job takes its turn once it holds the file's address — only the real callback
//! gets that far, so junk sent to a callback URL never holds a turn — and gives it back when
//! its end is recorded (saved or failed). A job that had to wait for its turn asks for the
//! address again before it downloads, so it is fresh: the document says nothing of how long
//! one stays valid.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// Turns shared by the downloads of one batch; cloning shares them.
#[derive(Clone, Debug)]
pub struct DownloadTurns(Arc<Semaphore>);

/// A download's turn, held while it lasts (none: the job is not limited).
#[derive(Debug)]
pub struct DownloadTurn {
    _permit: Option<OwnedSemaphorePermit>,
    waited: bool,
}

impl DownloadTurns {
    /// At most `at_once` downloads at a time (at least one).
    pub fn new(at_once: usize) -> Self {
        Self(Arc::new(Semaphore::new(at_once.max(1))))
    }

    /// Waits for a turn in the order asked (the semaphore is fair); without `turns`, at once.
    pub async fn take(turns: Option<Self>) -> DownloadTurn {
        let Some(turns) = turns else {
            return DownloadTurn {
                _permit: None,
                waited: false,
            };
        };
        let (permit, waited) = match turns.0.clone().try_acquire_owned() {
            Ok(permit) => (Some(permit), false),
            // (Never closed: the semaphore lives as long as any clone.)
            Err(TryAcquireError::NoPermits) => (turns.0.acquire_owned().await.ok(), true),
            Err(TryAcquireError::Closed) => (None, false),
        };
        DownloadTurn {
            _permit: permit,
            waited,
        }
    }

    /// Turns free now (tests).
    pub fn free(&self) -> usize {
        self.0.available_permits()
    }
}

impl DownloadTurn {
    /// Whether the turn was not free at once: another download ran meanwhile.
    pub fn waited(&self) -> bool {
        self.waited
    }
}
