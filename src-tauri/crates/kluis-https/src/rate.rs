//! A token bucket: how many requests a small public endpoint answers per second before it
//! starts to refuse (429). Shared by the loopback callback receiver and the relay.
//!
//! A bucket reads the time from a [`Clock`]: the system's, or one a test holds still and moves
//! by hand. A test that counts what a budget admits then gets the same count on a fast machine
//! and a slow one (with the system's clock, a slow machine's requests refill the bucket while
//! they run, and a fast one's do not).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where budgets read the time. Cheap to clone: clones of a manual clock share its time.
#[derive(Clone, Default)]
pub struct Clock(Option<Arc<Mutex<Instant>>>);

impl Clock {
    /// The system's monotonic clock (what every server runs on).
    pub fn system() -> Clock {
        Clock(None)
    }

    /// A clock that stands still until [`Clock::advance`] moves it: for tests.
    pub fn manual() -> Clock {
        Clock(Some(Arc::new(Mutex::new(Instant::now()))))
    }

    /// Moves a manual clock on by `by` (nothing for the system's).
    pub fn advance(&self, by: Duration) {
        if let Some(now) = &self.0 {
            let mut now = now.lock().unwrap_or_else(|p| p.into_inner());
            *now += by;
        }
    }

    pub fn now(&self) -> Instant {
        match &self.0 {
            None => Instant::now(),
            Some(now) => *now.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }

    /// How long ago `then` was, by this clock.
    pub fn since(&self, then: Instant) -> Duration {
        self.now().saturating_duration_since(then)
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            None => "Clock::system",
            Some(_) => "Clock::manual",
        })
    }
}

pub struct RateLimit {
    per_sec: f64,
    burst: f64,
    clock: Clock,
    state: Mutex<(f64, Instant)>,
}

impl RateLimit {
    /// Refills at `per_sec` tokens a second, holding at most `burst`, by the system's clock.
    pub fn new(per_sec: f64, burst: f64) -> Self {
        Self::with_clock(per_sec, burst, Clock::system())
    }

    /// As [`RateLimit::new`], by `clock`.
    pub fn with_clock(per_sec: f64, burst: f64, clock: Clock) -> Self {
        let now = clock.now();
        Self {
            per_sec,
            burst,
            clock,
            state: Mutex::new((burst, now)),
        }
    }

    /// Takes a token if one is left.
    pub fn admit(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.clock.now();
        let (tokens, last) = *state;
        let refill = now.saturating_duration_since(last).as_secs_f64() * self.per_sec;
        let tokens = (tokens + refill).min(self.burst);
        let admitted = tokens >= 1.0;
        *state = (if admitted { tokens - 1.0 } else { tokens }, now);
        admitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst is admitted up to its size, then refused.
    #[test]
    fn admits_a_burst_then_refuses() {
        let limit = RateLimit::new(0.001, 3.0);
        assert_eq!((0..5).filter(|_| limit.admit()).count(), 3);
    }

    /// By a clock that stands still, a bucket admits exactly its burst however long the
    /// requests take; moved on, it admits what the rate refilled, never past the burst.
    #[test]
    fn a_manual_clock_makes_the_count_exact() {
        let clock = Clock::manual();
        let limit = RateLimit::with_clock(10.0, 20.0, clock.clone());
        assert_eq!((0..100).filter(|_| limit.admit()).count(), 20);
        clock.advance(Duration::from_millis(500));
        assert_eq!(
            (0..100).filter(|_| limit.admit()).count(),
            5,
            "half a second: 5"
        );
        clock.advance(Duration::from_secs(3600));
        assert_eq!(
            (0..100).filter(|_| limit.admit()).count(),
            20,
            "never past the burst"
        );
    }
}
