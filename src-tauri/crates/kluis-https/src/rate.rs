//! A token bucket: how many requests a small public endpoint answers per second before it
//! starts to refuse (429). Shared by the loopback callback receiver and the relay.

use std::sync::Mutex;
use std::time::Instant;

pub struct RateLimit {
    per_sec: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl RateLimit {
    /// Refills at `per_sec` tokens a second, holding at most `burst`.
    pub fn new(per_sec: f64, burst: f64) -> Self {
        Self {
            per_sec,
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// Takes a token if one is left.
    pub fn admit(&self) -> bool {
        let mut state = self.state.lock().unwrap();
        let now = Instant::now();
        let (tokens, last) = *state;
        let tokens =
            (tokens + now.duration_since(last).as_secs_f64() * self.per_sec).min(self.burst);
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
}
