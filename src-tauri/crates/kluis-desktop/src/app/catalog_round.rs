//! The recovery catalogs after unattended backups (plans, Backup all): written once, by the
//! last of the unattended backups running to end, not once per klant. Each catalog written is
//! a new object naming every klant — on a bucket that keeps every version for its default
//! retention, 200 klanten a night would leave 200 of them.
//!
//! Each unattended backup holds an [`InRound`] from the moment it is asked for (while it waits
//! for a slot too, so that Backup all's queue is one round) to its end; the one whose end
//! leaves none running writes the catalogs (two ending at once: the counter decides which).
//! A backup started by hand, one at a time, writes them after its own copies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use kluis_profiles::unattended::{self, AfterSave};

use super::shared::Shared;

impl Shared {
    /// The recovery catalogs of every copy target written now (none until a kit is made).
    pub async fn write_round_catalogs(&self) -> Vec<AfterSave> {
        let Some(catalogs) = self.catalogs_after() else {
            return Vec::new();
        };
        let (history, targets) = (self.history.clone(), self.copy_targets().await);
        unattended::write_catalogs(history, targets, catalogs).await
    }

    /// [`Shared::write_round_catalogs`], for a window that says each copy target whose catalog
    /// could not be written now, with why (a kit made or joined, *Carry on*).
    pub async fn write_catalogs_now(&self) -> Vec<String> {
        let mut not_written = Vec::new();
        for step in self.write_round_catalogs().await {
            if let AfterSave::CatalogFailed { target, error } = step {
                not_written.push(format!("{target}: {error}"));
            }
        }
        not_written
    }
}

/// How many unattended backups are running now.
#[derive(Default)]
pub(crate) struct CatalogRound {
    running: AtomicUsize,
}

impl CatalogRound {
    /// An unattended backup begins.
    pub fn begin(self: &Arc<Self>) -> InRound {
        self.running.fetch_add(1, Ordering::SeqCst);
        InRound(Some(self.clone()))
    }
}

/// One unattended backup's place in the round, given back at its end (or when dropped).
pub(crate) struct InRound(Option<Arc<CatalogRound>>);

impl InRound {
    /// This backup has ended: whether it was the last one running (its task then writes the
    /// catalogs).
    pub fn end(mut self) -> bool {
        let round = self.0.take().expect("ended once");
        round.running.fetch_sub(1, Ordering::SeqCst) == 1
    }
}

impl Drop for InRound {
    fn drop(&mut self) {
        if let Some(round) = self.0.take() {
            round.running.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Of backups that overlap, only the last to end writes; one alone writes at its end.
    #[test]
    fn the_last_backup_running_writes() {
        let round = Arc::new(CatalogRound::default());
        let (a, b) = (round.begin(), round.begin());
        assert!(!a.end(), "b still runs");
        let c = round.begin();
        assert!(!b.end(), "c still runs");
        assert!(c.end(), "the last");
        drop(round.begin()); // (one that never ended properly gives its place back)
        assert!(round.begin().end(), "alone");
    }
}
