//! [`Scheduler`]: runs the plans. It asks its [`PlanBook`] for every profile's plan and last
//! backup, starts the due ones (one spacing apart, so twenty catch-ups do not hit the service
//! in the same second), and sleeps until the next slot — at most a minute at a
//! time, because the wall clock jumps when the computer sleeps, and at once when told that the
//! plans changed. A profile it started is not started again until the book reports a backup
//! at least that recent, so a slow history write never causes a second run.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::{Timestamp, Zoned};
use tokio::sync::Notify;

use crate::clock::WallClock;
use crate::plan::{Due, Plan};

/// Longest sleep between two looks at the plans.
pub const LOOK_AT_LEAST_EVERY: Duration = Duration::from_secs(60);

/// One profile's plan, as the scheduler sees it.
#[derive(Debug, Clone)]
pub struct PlannedProfile {
    pub id: String,
    pub plan: Plan,
    /// When the profile's latest backup started (any outcome), from the history.
    pub last_started: Option<Timestamp>,
}

/// Where plans come from, and how a due profile is started (the app: its profiles file and
/// history, and its job registry; a test: a list).
pub trait PlanBook: Send + Sync {
    fn planned(&self) -> Vec<PlannedProfile>;
    /// Starts a backup of profile `id`; an error is the book's to record (the scheduler goes
    /// on with the others).
    fn start(&self, id: &str);
}

pub struct Scheduler {
    book: Arc<dyn PlanBook>,
    clock: Arc<dyn WallClock>,
    /// Time between the starts of plans due together.
    spacing: Duration,
    /// Notified when plans change (set, paused, a profile added or removed).
    changed: Arc<Notify>,
}

impl Scheduler {
    pub fn new(book: Arc<dyn PlanBook>, clock: Arc<dyn WallClock>, spacing: Duration) -> Self {
        Scheduler {
            book,
            clock,
            spacing,
            changed: Arc::new(Notify::new()),
        }
    }

    /// What to notify when the plans change, so the next look is now.
    pub fn changed(&self) -> Arc<Notify> {
        self.changed.clone()
    }

    /// Runs until the task is dropped.
    pub async fn run(self) {
        let mut started: HashMap<String, Timestamp> = HashMap::new();
        loop {
            let now = self.clock.now();
            let mut due = Vec::new();
            let mut next: Option<Zoned> = None;
            for profile in self.book.planned() {
                let ours = started.get(&profile.id).copied();
                let last = match (profile.last_started, ours) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                match profile.plan.due(last, &now) {
                    Due::Now { missed } => due.push((profile.id, missed)),
                    Due::At(slot) => {
                        if next.as_ref().is_none_or(|n| slot < *n) {
                            next = Some(slot);
                        }
                    }
                    Due::Never => {}
                }
            }
            for (i, (id, missed)) in due.into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(self.spacing).await;
                }
                tracing::info!(profile = %id, catch_up = missed, "starting a planned backup");
                started.insert(id.clone(), self.clock.now().timestamp());
                self.book.start(&id);
            }
            let until_next = next
                .map(|slot| {
                    let wait = slot
                        .timestamp()
                        .duration_since(self.clock.now().timestamp());
                    Duration::try_from(wait).unwrap_or(Duration::ZERO)
                })
                .unwrap_or(LOOK_AT_LEAST_EVERY)
                .min(LOOK_AT_LEAST_EVERY);
            tokio::select! {
                _ = tokio::time::sleep(until_next) => {}
                _ = self.changed.notified() => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use jiff::tz::TimeZone;
    use jiff::SignedDuration;

    use super::*;
    use crate::plan::{ClockTime, Schedule};

    /// A wall clock that moves with tokio's (paused) test time.
    struct TestClock {
        base: Zoned,
        at: tokio::time::Instant,
    }

    impl WallClock for TestClock {
        fn now(&self) -> Zoned {
            let elapsed = SignedDuration::try_from(self.at.elapsed()).unwrap();
            self.base.checked_add(elapsed).unwrap()
        }
    }

    /// Profiles in memory; a start is recorded, and written to the "history" unless the
    /// history is slow (then the scheduler alone remembers it).
    struct TestBook {
        clock: Arc<TestClock>,
        profiles: Mutex<Vec<PlannedProfile>>,
        starts: Mutex<Vec<(String, Zoned)>>,
        history_is_slow: bool,
    }

    impl PlanBook for TestBook {
        fn planned(&self) -> Vec<PlannedProfile> {
            self.profiles.lock().unwrap().clone()
        }
        fn start(&self, id: &str) {
            let now = self.clock.now();
            if !self.history_is_slow {
                for p in self.profiles.lock().unwrap().iter_mut() {
                    if p.id == id {
                        p.last_started = Some(now.timestamp());
                    }
                }
            }
            self.starts.lock().unwrap().push((id.to_string(), now));
        }
    }

    fn amsterdam(text: &str) -> Zoned {
        let tz = TimeZone::get("Europe/Amsterdam").unwrap();
        text.parse::<jiff::civil::DateTime>()
            .unwrap()
            .to_zoned(tz)
            .unwrap()
    }

    fn setup(
        now: &str,
        profiles: Vec<PlannedProfile>,
        history_is_slow: bool,
    ) -> (Arc<TestBook>, Scheduler) {
        let clock = Arc::new(TestClock {
            base: amsterdam(now),
            at: tokio::time::Instant::now(),
        });
        let book = Arc::new(TestBook {
            clock: clock.clone(),
            profiles: Mutex::new(profiles),
            starts: Mutex::default(),
            history_is_slow,
        });
        let scheduler = Scheduler::new(book.clone(), clock, Duration::from_secs(15));
        (book, scheduler)
    }

    fn daily(id: usize, last: &str) -> PlannedProfile {
        let at = ClockTime::parse("02:00").unwrap();
        PlannedProfile {
            id: format!("klant-{id}"),
            plan: Plan::new(
                Schedule::Daily { at },
                amsterdam("2026-11-01T12:00").timestamp(),
            )
            .unwrap(),
            last_started: Some(amsterdam(last).timestamp()),
        }
    }

    /// Twenty klanten whose nightly backups were missed over a weekend each run once on
    /// Monday morning, 15 s apart, then again at the next night's slot — and not before,
    /// even when the history is slow to show the runs.
    #[tokio::test(start_paused = true)]
    async fn missed_plans_run_once_each_spread_out_then_at_their_next_slot() {
        for history_is_slow in [false, true] {
            let profiles = (0..20).map(|i| daily(i, "2026-11-20T02:00")).collect();
            let (book, scheduler) = setup("2026-11-23T08:30", profiles, history_is_slow);
            let running = tokio::spawn(scheduler.run());
            tokio::time::sleep(Duration::from_secs(3600)).await;
            let starts = book.starts.lock().unwrap().clone();
            assert_eq!(
                starts.len(),
                20,
                "each once (slow history: {history_is_slow})"
            );
            let gaps: Vec<_> = starts
                .windows(2)
                .map(|w| w[1].1.timestamp().duration_since(w[0].1.timestamp()))
                .collect();
            assert!(
                gaps.iter().all(|g| *g == SignedDuration::from_secs(15)),
                "{gaps:?}"
            );
            // Until the next night, nothing; then each again (its due time, within a minute).
            tokio::time::sleep(Duration::from_secs(16 * 3600)).await;
            assert_eq!(book.starts.lock().unwrap().len(), 20);
            tokio::time::sleep(Duration::from_secs(2 * 3600)).await;
            let starts = book.starts.lock().unwrap().clone();
            assert_eq!(starts.len(), 40, "the next night's run");
            assert_eq!(
                starts[20].1.timestamp(),
                amsterdam("2026-11-24T02:00").timestamp(),
                "at its slot"
            );
            running.abort();
        }
    }

    /// A plan set while the scheduler sleeps is looked at at once, not after its minute.
    #[tokio::test(start_paused = true)]
    async fn a_changed_plan_is_looked_at_at_once() {
        let (book, scheduler) = setup("2026-11-23T08:30", Vec::new(), false);
        let changed = scheduler.changed();
        let running = tokio::spawn(scheduler.run());
        tokio::time::sleep(Duration::from_secs(5)).await;
        let every = Plan::new(
            Schedule::Every { hours: 1 },
            amsterdam("2026-11-23T06:00").timestamp(),
        )
        .unwrap();
        book.profiles.lock().unwrap().push(PlannedProfile {
            id: "new".into(),
            plan: every,
            last_started: None,
        });
        changed.notify_one();
        tokio::time::sleep(Duration::from_millis(10)).await;
        let starts = book.starts.lock().unwrap().clone();
        assert_eq!(starts.len(), 1, "started when told, not at the next minute");
        assert_eq!(
            starts[0].1.timestamp(),
            amsterdam("2026-11-23T08:30:05").timestamp()
        );
        running.abort();
    }

    /// Paused and manual plans are never started.
    #[tokio::test(start_paused = true)]
    async fn paused_and_manual_plans_never_start() {
        let mut paused = daily(1, "2026-11-20T02:00");
        paused.plan.paused = true;
        let manual = PlannedProfile {
            id: "manual".into(),
            plan: Plan::new(Schedule::Manual, Timestamp::UNIX_EPOCH).unwrap(),
            last_started: None,
        };
        let (book, scheduler) = setup("2026-11-23T08:30", vec![paused, manual], false);
        let running = tokio::spawn(scheduler.run());
        tokio::time::sleep(Duration::from_secs(3 * 24 * 3600)).await;
        assert!(book.starts.lock().unwrap().is_empty());
        running.abort();
    }
}
