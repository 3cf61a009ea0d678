//! Download turns: how many of a batch's backups download at once.
//!
//! A batch (Backup all, a night's plans) has up to two klanten more under way than it
//! downloads, sharing two places: while N files come in, the next klanten sign in, ask for
//! their backup, wait for their callback and redeem it, so the line does not stand idle
//! between two klanten while the service prepares a file; and a klant whose bytes have all
//! come in writes, syncs and names its file and records its end after it gave its turn back.
//! The line never carries more than N downloads. The job takes its turn once it holds the
//! file's address — only the real callback gets that far, so junk sent to a callback URL never
//! holds a turn — and the download gives it back once every byte has arrived (or it failed):
//! from then on the job no longer uses the office's line. A job whose address is older than
//! [`DownloadTurns::fresh_for`] when its turn comes asks for it again before it downloads:
//! the document says nothing of how long one stays valid. [`BatchLimits`] holds these rules in
//! one place for the CLI's batch and the app's plans: N turns, and N + 2 klanten under way.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A batch's limits for `at_once` downloads: that many download turns, and places for two
/// klanten more under way (the klant ahead, and one ending). Cloning shares them.
#[derive(Clone, Debug)]
pub struct BatchLimits {
    at_once: usize,
    klanten: Arc<Semaphore>,
    downloads: DownloadTurns,
}

impl BatchLimits {
    /// `at_once` downloading (at least one) and two klanten more under way.
    pub fn new(at_once: usize) -> Self {
        let at_once = at_once.max(1);
        Self {
            at_once,
            klanten: Arc::new(Semaphore::new(at_once + 2)),
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
pub struct DownloadTurns {
    turns: Arc<Semaphore>,
    fresh_for: Duration,
}

/// How long a file's address is used without asking for it again ([`DownloadTurns::fresh_for`]):
/// less than any expiry a download address is given in practice (signed URLs: minutes to
/// hours), and far more than a batch's klant waits for its turn on a fast line — a wait of
/// milliseconds asked again cost a request, and the line's time, per klant.
pub const FRESH_FOR: Duration = Duration::from_secs(60);

/// A download's turn, held while it lasts (none: the job is not limited).
#[derive(Debug)]
pub struct DownloadTurn {
    _permit: Option<OwnedSemaphorePermit>,
}

impl DownloadTurns {
    /// At most `at_once` downloads at a time (at least one).
    pub fn new(at_once: usize) -> Self {
        Self {
            turns: Arc::new(Semaphore::new(at_once.max(1))),
            fresh_for: FRESH_FOR,
        }
    }

    /// The same turns, with addresses fresh for `fresh_for` instead of [`FRESH_FOR`] (tests).
    pub fn fresh_for_only(mut self, fresh_for: Duration) -> Self {
        self.fresh_for = fresh_for;
        self
    }

    /// How old a file's address may be when its turn comes; older, it is asked for again.
    pub fn fresh_for(&self) -> Duration {
        self.fresh_for
    }

    /// Waits for a turn in the order asked (the semaphore is fair); without `turns`, at once.
    pub async fn take(turns: Option<Self>) -> DownloadTurn {
        // (Never closed: the semaphore lives as long as any clone.)
        let permit = match turns {
            Some(turns) => turns.turns.acquire_owned().await.ok(),
            None => None,
        };
        DownloadTurn { _permit: permit }
    }

    /// Turns free now (tests).
    pub fn free(&self) -> usize {
        self.turns.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N download turns and N + 2 places for klanten, and never fewer than one turn.
    #[tokio::test]
    async fn a_batch_has_two_klanten_more_under_way_than_it_downloads() {
        for (asked, at_once) in [(0, 1), (1, 1), (3, 3)] {
            let limits = BatchLimits::new(asked);
            assert_eq!(limits.at_once(), at_once);
            assert_eq!(limits.downloads().free(), at_once, "turns of {asked}");
            let mut places = Vec::new();
            for _ in 0..at_once + 2 {
                places.push(limits.klant_place().await);
            }
            assert!(
                limits.klanten.clone().try_acquire_owned().is_err(),
                "no place more than {} for {asked}",
                at_once + 2
            );
            places.pop();
            let _freed = limits.klant_place().await;
        }
    }
}
