//! Time: [`Clock`], where the session reads the monotonic time (so tests can move it);
//! [`WallClock`], the local date and time plans are due at; and [`now_ms`], the wall-clock
//! time the history and the journal record.

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

/// The wall clock in the computer's time zone (tests: one that follows tokio's paused time).
pub trait WallClock: Send + Sync {
    fn now(&self) -> jiff::Zoned;
}

/// The system's clock and time zone.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemWallClock;

impl WallClock for SystemWallClock {
    fn now(&self) -> jiff::Zoned {
        jiff::Zoned::now()
    }
}

/// Unix milliseconds now (0 if the system clock is before 1970).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
