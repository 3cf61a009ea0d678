//! The download speed limit: one budget of bytes per second that every download of the
//! process draws from ([`Bandwidth`], shared through an `Arc`), so a Backup all of many
//! klanten at noon takes no more of the office's connection than the limit — however many run
//! at once. Optionally only during office hours (Monday to Friday, between two times).
//!
//! A token bucket: bytes are admitted as they arrive from the network; when the bucket runs
//! dry, the download that took the last bytes waits until the budget has paid for them. While
//! it waits it does not read the socket, so TCP slows the sender down: the limit holds on the
//! wire, not only on the disk.

use std::sync::Mutex;
use std::time::Duration;

use jiff::civil::Weekday;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::clock::{SystemWallClock, WallClock};
use crate::error::{Error, Result};
use crate::plan::ClockTime;

/// The limit as the user sets it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthLimit {
    /// Megabytes (10⁶ bytes) per second, for all downloads together.
    pub mb_per_sec: f64,
    /// Only on weekdays between these times (local); outside them, no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub office_hours: Option<OfficeHours>,
}

/// Monday to Friday, from `from` until `to` (local time).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OfficeHours {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub from: ClockTime,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub to: ClockTime,
}

/// Slowest and fastest limits accepted: below, a backup would take days; above, no office
/// line needs a limit.
const MIN_MB_PER_SEC: f64 = 0.05;
const MAX_MB_PER_SEC: f64 = 10_000.0;

impl BandwidthLimit {
    /// Refuses a limit that is not a sensible number, or office hours that end before they
    /// begin.
    pub fn check(&self) -> Result<()> {
        if !(MIN_MB_PER_SEC..=MAX_MB_PER_SEC).contains(&self.mb_per_sec) {
            return Err(Error::Config(format!(
                "A download limit is between {MIN_MB_PER_SEC} and {MAX_MB_PER_SEC} MB/s."
            )));
        }
        if let Some(hours) = self.office_hours {
            if hours.from >= hours.to {
                return Err(Error::Config(
                    "Office hours end after they begin, e.g. 08:00 to 18:00.".into(),
                ));
            }
        }
        Ok(())
    }

    fn bytes_per_sec(&self) -> f64 {
        self.mb_per_sec * 1_000_000.0
    }
}

impl OfficeHours {
    fn contain(&self, now: &jiff::Zoned) -> bool {
        let weekday = !matches!(now.weekday(), Weekday::Saturday | Weekday::Sunday);
        let time = now.time();
        weekday && self.from.time() <= time && time < self.to.time()
    }
}

/// How much may arrive at once before pacing starts: a quarter of a second's worth, so short
/// bursts are smooth without letting a download run ahead of the limit.
const BURST_SECS: f64 = 0.25;
/// Office hours are looked up at most this often (a clock read per chunk would cost more
/// than the chunk).
const RECHECK: Duration = Duration::from_secs(1);

/// The process's shared download budget. Its limit may change while downloads run (the
/// app's Settings): they follow it from their next chunk.
pub struct Bandwidth {
    clock: Box<dyn WallClock>,
    state: Mutex<Bucket>,
}

struct Bucket {
    /// None: no limit.
    limit: Option<BandwidthLimit>,
    /// Bytes that may arrive now without waiting (below zero: owed).
    tokens: f64,
    refilled: Instant,
    /// Whether the limit applies, and until when that answer stands.
    applies: bool,
    checked_until: Option<Instant>,
}

impl Bandwidth {
    /// The budget for `limit` (checked; none: no limit), office hours read from the
    /// computer's clock.
    pub fn new(limit: Option<BandwidthLimit>) -> Result<Bandwidth> {
        Bandwidth::with_clock(limit, Box::new(SystemWallClock))
    }

    /// The same, reading the time of day from `clock` (tests).
    pub fn with_clock(
        limit: Option<BandwidthLimit>,
        clock: Box<dyn WallClock>,
    ) -> Result<Bandwidth> {
        let bandwidth = Bandwidth {
            clock,
            state: Mutex::new(Bucket {
                limit: None,
                tokens: 0.0,
                refilled: Instant::now(),
                applies: false,
                checked_until: None,
            }),
        };
        bandwidth.set_limit(limit)?;
        Ok(bandwidth)
    }

    /// Changes the limit (checked first; none: no limit), from the next chunk on.
    pub fn set_limit(&self, limit: Option<BandwidthLimit>) -> Result<()> {
        if let Some(limit) = &limit {
            limit.check()?;
        }
        let mut bucket = self.state.lock().unwrap();
        bucket.tokens = limit
            .as_ref()
            .map_or(0.0, |l| l.bytes_per_sec() * BURST_SECS);
        bucket.refilled = Instant::now();
        bucket.checked_until = None;
        bucket.limit = limit;
        Ok(())
    }

    pub fn limit(&self) -> Option<BandwidthLimit> {
        self.state.lock().unwrap().limit.clone()
    }

    /// A budget of the same limit for the other direction: uploads (copies off this computer)
    /// go up the line while downloads come down it, and each direction has its own capacity.
    pub fn other_direction(&self) -> Bandwidth {
        // The limit was checked when it was set: the new budget takes it as it is.
        let limit = self.limit();
        Bandwidth::new(limit).unwrap_or_else(|_| Bandwidth::new(None).expect("no limit is valid"))
    }

    /// Admits `bytes` that just arrived: returns at once while the budget has them, else after
    /// the time the budget needs to pay for them.
    pub async fn admit(&self, bytes: usize) {
        let wait = self.charge(bytes as f64, Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    /// Takes `bytes` from the bucket at `now`; how long the caller must wait for them.
    fn charge(&self, bytes: f64, now: Instant) -> Duration {
        let mut bucket = self.state.lock().unwrap();
        let Some(limit) = bucket.limit.clone() else {
            return Duration::ZERO;
        };
        let rate = limit.bytes_per_sec();
        if bucket.checked_until.is_none_or(|until| now >= until) {
            bucket.applies = match limit.office_hours {
                Some(hours) => hours.contain(&self.clock.now()),
                None => true,
            };
            bucket.checked_until = Some(now + RECHECK);
        }
        let elapsed = now.saturating_duration_since(bucket.refilled).as_secs_f64();
        bucket.refilled = now;
        bucket.tokens = (bucket.tokens + elapsed * rate).min(rate * BURST_SECS);
        if !bucket.applies {
            return Duration::ZERO;
        }
        bucket.tokens -= bytes;
        match bucket.tokens < 0.0 {
            true => Duration::from_secs_f64(-bucket.tokens / rate),
            false => Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use jiff::{SignedDuration, Zoned};

    use super::*;

    /// A wall clock that moves with tokio's paused test time.
    struct TestClock {
        base: Zoned,
        at: Instant,
    }

    impl WallClock for TestClock {
        fn now(&self) -> Zoned {
            let elapsed = SignedDuration::try_from(self.at.elapsed()).unwrap();
            self.base.checked_add(elapsed).unwrap()
        }
    }

    fn clock(at: &str) -> Box<TestClock> {
        Box::new(TestClock {
            base: format!("{at}[Europe/Amsterdam]").parse().unwrap(),
            at: Instant::now(),
        })
    }

    /// Three downloads drawing 64 KiB chunks as fast as they can from one 2 MB/s budget get
    /// 20 MB through in 10 s between them — the limit is shared, not per download.
    #[tokio::test(start_paused = true)]
    async fn one_budget_for_every_download() {
        let limit = BandwidthLimit {
            mb_per_sec: 2.0,
            office_hours: None,
        };
        let bandwidth =
            Arc::new(Bandwidth::with_clock(Some(limit), clock("2026-11-24T12:00")).unwrap());
        let start = Instant::now();
        let until = start + Duration::from_secs(10);
        let downloads: Vec<_> = (0..3)
            .map(|_| {
                let bandwidth = bandwidth.clone();
                tokio::spawn(async move {
                    let mut got = 0u64;
                    while Instant::now() < until {
                        bandwidth.admit(64 * 1024).await;
                        got += 64 * 1024;
                    }
                    got
                })
            })
            .collect();
        let mut total = 0;
        for download in downloads {
            total += download.await.unwrap();
        }
        let mb = total as f64 / 1e6;
        assert!((19.5..=21.0).contains(&mb), "{mb} MB in 10 s at 2 MB/s");
    }

    /// With office hours, the limit holds on a weekday at noon and not in the evening or at
    /// the weekend.
    #[tokio::test(start_paused = true)]
    async fn only_in_office_hours() {
        let hours = OfficeHours {
            from: ClockTime::parse("08:00").unwrap(),
            to: ClockTime::parse("18:00").unwrap(),
        };
        let limit = BandwidthLimit {
            mb_per_sec: 1.0,
            office_hours: Some(hours),
        };
        // 10 MB at once: paid for over ~10 s in office hours, at once outside them.
        let waits = |at: &str| {
            let bandwidth = Bandwidth::with_clock(Some(limit.clone()), clock(at)).unwrap();
            bandwidth.charge(10e6, Instant::now())
        };
        assert!(
            waits("2026-11-24T12:00").as_secs_f64() > 9.0,
            "Tuesday noon"
        );
        assert_eq!(waits("2026-11-24T18:00"), Duration::ZERO, "Tuesday 18:00");
        assert_eq!(waits("2026-11-24T07:59"), Duration::ZERO, "Tuesday early");
        assert_eq!(waits("2026-11-28T12:00"), Duration::ZERO, "Saturday noon");
    }

    /// Nonsense is refused with what to set.
    #[test]
    fn refuses_nonsense() {
        let limit = |mb_per_sec| BandwidthLimit {
            mb_per_sec,
            office_hours: None,
        };
        assert!(limit(0.0).check().is_err());
        assert!(limit(f64::NAN).check().is_err());
        assert!(limit(2.5).check().is_ok());
        let backwards = BandwidthLimit {
            office_hours: Some(OfficeHours {
                from: ClockTime::parse("18:00").unwrap(),
                to: ClockTime::parse("08:00").unwrap(),
            }),
            ..limit(2.0)
        };
        assert!(backwards.check().is_err());
        let bandwidth = Bandwidth::new(None).unwrap();
        assert!(bandwidth.set_limit(Some(limit(0.0))).is_err());
        assert_eq!(bandwidth.limit(), None, "a refused limit changes nothing");
    }

    /// No limit admits everything at once; a limit set later applies from then on, and can
    /// be lifted again.
    #[tokio::test(start_paused = true)]
    async fn the_limit_can_change() {
        let bandwidth = Bandwidth::with_clock(None, clock("2026-11-24T12:00")).unwrap();
        assert_eq!(bandwidth.charge(100e6, Instant::now()), Duration::ZERO);
        let limit = BandwidthLimit {
            mb_per_sec: 1.0,
            office_hours: None,
        };
        bandwidth.set_limit(Some(limit)).unwrap();
        let wait = bandwidth.charge(5.25e6, Instant::now());
        assert_eq!(
            wait,
            Duration::from_secs(5),
            "5 MB past the quarter-second burst"
        );
        bandwidth.set_limit(None).unwrap();
        assert_eq!(bandwidth.charge(100e6, Instant::now()), Duration::ZERO);
    }
}
