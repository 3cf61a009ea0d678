//! [`Scheduler`]: decides which profile's plan runs next. Its host (the app) loops on
//! [`Scheduler::next`] and starts a backup of each profile it returns. It asks a [`PlanBook`]
//! for every profile's plan and last backup, hands out the due ones one spacing apart (so
//! twenty catch-ups do not hit the service in the same second), and otherwise sleeps until the
//! next slot — at most a minute at a time, because the wall clock jumps when the computer
//! sleeps, and no longer once told that the plans changed. A profile it handed out is not due
//! again until a backup at least that recent counts, so a slow history never causes a second
//! run.

use std::collections::{HashMap, VecDeque};
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

/// Where plans come from (the app: its profiles file and history; a test: a list).
pub trait PlanBook: Send + Sync {
    fn planned(&self) -> Vec<PlannedProfile>;
}

pub struct Scheduler {
    clock: Arc<dyn WallClock>,
    /// Time between the starts of plans due together.
    spacing: Duration,
    /// Notified when plans change (set, paused, a profile added or removed).
    changed: Arc<Notify>,
    /// Profiles handed out, and when: due again only after that.
    started: HashMap<String, Timestamp>,
    /// Due profiles not handed out yet (a batch being spread out).
    queue: VecDeque<String>,
    last_handed_out: Option<tokio::time::Instant>,
}

impl Scheduler {
    pub fn new(clock: Arc<dyn WallClock>, spacing: Duration) -> Self {
        Scheduler {
            clock,
            spacing,
            changed: Arc::new(Notify::new()),
            started: HashMap::new(),
            queue: VecDeque::new(),
            last_handed_out: None,
        }
    }

    /// Profile `id`, handed out, did not start after all and is to be looked at again: due
    /// still, it is handed out at the next look (within a minute) — another PC of the office
    /// was backing it up, and may not finish.
    pub fn look_again(&mut self, id: &str) {
        self.started.remove(id);
    }

    /// What to notify when the plans change, so the next look is now.
    pub fn changed(&self) -> Arc<Notify> {
        self.changed.clone()
    }

    /// "Cancel all" at `cancelled_at`: the profiles due by then and not handed out yet — queued,
    /// or not looked at yet (the host was busy starting another) — are not started: each counts
    /// as handed out now, so it is due again at its next slot. Returns how many.
    pub fn skip_waiting(&mut self, book: &dyn PlanBook, cancelled_at: &Zoned) -> usize {
        let now = self.clock.now().timestamp();
        let mut skipped: Vec<String> = self.queue.drain(..).collect();
        for profile in book.planned() {
            let last = self.last_started(&profile);
            if matches!(profile.plan.due(last, cancelled_at), Due::Now { .. })
                && !skipped.contains(&profile.id)
            {
                skipped.push(profile.id);
            }
        }
        for id in &skipped {
            self.started.insert(id.clone(), now);
        }
        skipped.len()
    }

    /// When `profile`'s last backup started: the history's, or the hand-out this scheduler
    /// remembers when that is later (a slow history).
    fn last_started(&self, profile: &PlannedProfile) -> Option<Timestamp> {
        let ours = self.started.get(&profile.id).copied();
        match (profile.last_started, ours) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next profile whose plan is due, when it is its turn to start. (Dropped while it
    /// waits, the profile stays queued: [`Scheduler::skip_waiting`] sees it.)
    pub async fn next(&mut self, book: &dyn PlanBook) -> String {
        loop {
            if let Some(id) = self.queue.front().cloned() {
                if let Some(last) = self.last_handed_out {
                    tokio::time::sleep_until(last + self.spacing).await;
                }
                self.queue.pop_front();
                self.last_handed_out = Some(tokio::time::Instant::now());
                self.started
                    .insert(id.clone(), self.clock.now().timestamp());
                return id;
            }
            let wait = self.look(book);
            if self.queue.is_empty() {
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = self.changed.notified() => {}
                }
            }
        }
    }

    /// Queues the due profiles; returns how long until the next slot (at most a minute).
    fn look(&mut self, book: &dyn PlanBook) -> Duration {
        let now = self.clock.now();
        let mut next: Option<Zoned> = None;
        for profile in book.planned() {
            let last = self.last_started(&profile);
            match profile.plan.due(last, &now) {
                Due::Now { missed } => {
                    tracing::info!(profile = %profile.id, catch_up = missed, "a planned backup is due");
                    self.queue.push_back(profile.id);
                }
                Due::At(slot) => {
                    if next.as_ref().is_none_or(|n| slot < *n) {
                        next = Some(slot);
                    }
                }
                Due::Never => {}
            }
        }
        next.map(|slot| {
            let wait = slot.timestamp().duration_since(now.timestamp());
            Duration::try_from(wait).unwrap_or(Duration::ZERO)
        })
        .unwrap_or(LOOK_AT_LEAST_EVERY)
        .min(LOOK_AT_LEAST_EVERY)
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
    }

    impl TestBook {
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

    /// The host's loop: start each profile the scheduler hands out.
    async fn host(mut scheduler: Scheduler, book: Arc<TestBook>) {
        loop {
            let id = scheduler.next(&*book).await;
            book.start(&id);
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
        let scheduler = Scheduler::new(clock, Duration::from_secs(15));
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
            let running = tokio::spawn(host(scheduler, book.clone()));
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

    /// A klant handed out but held by another PC of the office is handed out again at the
    /// next look (within a minute), not at its next slot; one that started is not.
    #[tokio::test(start_paused = true)]
    async fn a_klant_held_elsewhere_is_looked_at_again() {
        let (book, mut scheduler) = setup(
            "2026-11-23T08:30",
            vec![daily(1, "2026-11-22T02:00"), daily(2, "2026-11-22T02:00")],
            false,
        );
        let first = scheduler.next(&*book).await;
        let second = scheduler.next(&*book).await;
        scheduler.look_again(&first);
        let again = tokio::time::timeout(Duration::from_secs(120), scheduler.next(&*book)).await;
        assert_eq!(
            again.ok(),
            Some(first.clone()),
            "held elsewhere: asked again"
        );
        let none = tokio::time::timeout(Duration::from_secs(3600), scheduler.next(&*book)).await;
        assert!(none.is_err(), "{second} started: not before its next slot");
    }

    /// "Cancel all" while due plans wait for their turn (15 s apart): none of them is handed
    /// out until its next slot — also the one whose wait was under way, and one that came due
    /// while the host was busy (not looked at yet) — while the one handed out before stays
    /// started, and one due only after the cancel is not skipped.
    #[tokio::test(start_paused = true)]
    async fn skipped_plans_wait_for_their_next_slot() {
        let profiles = (0..3).map(|i| daily(i, "2026-11-22T02:00")).collect();
        let (book, mut scheduler) = setup("2026-11-23T08:30", profiles, false);
        let first = scheduler.next(&*book).await;
        book.start(&first);
        // The second's wait for its turn is under way when Cancel all comes.
        let waiting = tokio::time::timeout(Duration::from_secs(5), scheduler.next(&*book)).await;
        assert!(waiting.is_err(), "15 s apart");
        // Due since 08:00, not looked at yet; and one due at 08:31, after the cancel.
        let every = |id: &str, set: &str| PlannedProfile {
            id: id.into(),
            plan: Plan::new(Schedule::Every { hours: 1 }, amsterdam(set).timestamp()).unwrap(),
            last_started: None,
        };
        book.profiles
            .lock()
            .unwrap()
            .push(every("not-looked-at", "2026-11-23T07:00"));
        book.profiles
            .lock()
            .unwrap()
            .push(every("due-after", "2026-11-23T07:31"));
        let cancelled_at = book.clock.now();
        assert_eq!(
            scheduler.skip_waiting(&*book, &cancelled_at),
            3,
            "the two queued and the one not looked at yet"
        );
        let after = tokio::time::timeout(Duration::from_secs(120), scheduler.next(&*book)).await;
        assert_eq!(
            after.ok().as_deref(),
            Some("due-after"),
            "due after the cancel: started"
        );
        book.profiles
            .lock()
            .unwrap()
            .retain(|p| p.id.starts_with("klant-"));
        let none = tokio::time::timeout(Duration::from_secs(3600), scheduler.next(&*book)).await;
        assert!(none.is_err(), "none of them before its next slot: {none:?}");
        let next_night = scheduler.next(&*book).await;
        assert_eq!(
            book.clock.now().timestamp(),
            amsterdam("2026-11-24T02:00").timestamp(),
            "{next_night} at its next slot"
        );
    }

    /// A plan set while the scheduler sleeps is looked at at once, not after its minute.
    #[tokio::test(start_paused = true)]
    async fn a_changed_plan_is_looked_at_at_once() {
        let (book, scheduler) = setup("2026-11-23T08:30", Vec::new(), false);
        let changed = scheduler.changed();
        let running = tokio::spawn(host(scheduler, book.clone()));
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
        let running = tokio::spawn(host(scheduler, book.clone()));
        tokio::time::sleep(Duration::from_secs(3 * 24 * 3600)).await;
        assert!(book.starts.lock().unwrap().is_empty());
        running.abort();
    }
}
