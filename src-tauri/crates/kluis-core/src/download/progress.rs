//! Progress of a download, told at most every [`PROGRESS_INTERVAL`], with its rate.

use tokio::time::Instant;

use super::{Progress, PROGRESS_INTERVAL};

/// Throttles progress reports and computes the rate.
pub(super) struct Reporter {
    started: Instant,
    last: Option<Instant>,
}

impl Reporter {
    pub(super) fn new() -> Self {
        Self {
            started: Instant::now(),
            last: None,
        }
    }

    pub(super) fn tick(&mut self, bytes: u64, total: Option<u64>) -> Option<Progress> {
        let now = Instant::now();
        if self.last.is_some_and(|last| now - last < PROGRESS_INTERVAL) {
            return None;
        }
        self.last = Some(now);
        Some(self.progress(bytes, total))
    }

    pub(super) fn progress(&self, bytes: u64, total: Option<u64>) -> Progress {
        let secs = self.started.elapsed().as_secs_f64();
        let bytes_per_sec = if secs > 0.0 {
            (bytes as f64 / secs) as u64
        } else {
            0
        };
        Progress {
            bytes,
            total,
            bytes_per_sec,
        }
    }
}
