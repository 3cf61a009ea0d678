//! Download turns: how many of a batch's backups download at once.
//!
//! A batch (Backup all, a night's plans) runs one klant more than it downloads: while N
//! files come in, the next klant signs in, asks for its backup, waits for its callback and
//! redeems it, so the line does not stand idle between two klanten while the service prepares
//! a file. The job takes its turn once it holds the file's address — only the real callback
//! gets that far, so junk sent to a callback URL never holds a turn — and gives it back when
//! its end is recorded (saved or failed). A job that had to wait for its turn asks for the
//! address again before it downloads, so it is fresh: the document says nothing of how long
//! one stays valid. [`BatchLimits`] holds that rule in one place for the CLI's batch and the
//! app's plans: N turns, and N + 1 klanten under way.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// A batch's limits for `at_once` downloads: that many download turns, and places for one
/// klant more under way (the klant ahead). Cloning shares them.
#[derive(Clone, Debug)]
pub struct BatchLimits {
    at_once: usize,
    klanten: Arc<Semaphore>,
    downloads: DownloadTurns,
}

impl BatchLimits {
    /// `at_once` downloading (at least one) and one klant more under way.
    pub fn new(at_once: usize) -> Self {
        let at_once = at_once.max(1);
        Self {
            at_once,
            klanten: Arc::new(Semaphore::new(at_once + 1)),
            downloads: DownloadTurns::new(at_once),
        }
    }

    /// How many klanten download at once (at least one).
    pub fn at_once(&self) -> usize {
        self.at_once
    }

    /// Waits for a klant's place among those under way, in the order asked; held until the
    /// klant's backup ends.
    pub async fn klant_place(&self) -> OwnedSemaphorePermit {
        (self.klanten.clone().acquire_owned().await)
            .expect("never closed: the semaphore lives as long as any clone")
    }

    /// The turns the klanten's downloads take.
    pub fn downloads(&self) -> &DownloadTurns {
        &self.downloads
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// N download turns and N + 1 places for klanten, and never fewer than one turn.
    #[tokio::test]
    async fn a_batch_has_one_klant_more_under_way_than_it_downloads() {
        for (asked, at_once) in [(0, 1), (1, 1), (3, 3)] {
            let limits = BatchLimits::new(asked);
            assert_eq!(limits.at_once(), at_once);
            assert_eq!(limits.downloads().free(), at_once, "turns of {asked}");
            let mut places = Vec::new();
            for _ in 0..at_once + 1 {
                places.push(limits.klant_place().await);
            }
            assert!(
                limits.klanten.clone().try_acquire_owned().is_err(),
                "no place more than {} for {asked}",
                at_once + 1
            );
            places.pop();
            let _freed = limits.klant_place().await;
        }
    }
}
