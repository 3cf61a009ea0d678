//! [`Clock`]: where the session reads the time, so tests can move it.

use tokio::time::Instant;

/// A source of the current instant.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

/// Tokio's clock: real time, or paused test time under `tokio::time::pause`.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioClock;

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}
