//! A profile's backup plan — manual, daily, on weekdays or weekly at a local time, or every N
//! hours — and when it is due. One due-computation serves the app and `kluis run-due`.
//!
//! [`Plan::due`] takes the moment the plan was set, the start of the profile's last backup and
//! "now" (in the computer's time zone), and answers [`Due::Now`] or [`Due::At`] the next slot
//! (or [`Due::Never`]: manual, paused). A slot missed while the computer was off or asleep
//! makes the plan due *once* at the next chance, however many slots were missed; the next slot
//! after that counts from the run. [`crate::engine::Scheduler`] runs the due ones.
//!
//! Times are local wall-clock times (jiff, with the time zone database bundled): "daily at
//! 02:00" stays 02:00 across a daylight-saving change; a time that does not exist that night
//! (inside the spring-forward gap) is moved on by the gap (02:30 → 03:30), and one that occurs
//! twice in the autumn runs at the first.

use jiff::civil::{Date, Time, Weekday};
use jiff::{Timestamp, Zoned};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The longest "every N hours" (a week); anything longer is a weekly plan.
pub const MAX_EVERY_HOURS: u32 = 7 * 24;

/// When a profile is backed up.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Schedule {
    /// Only when someone clicks (or runs `kluis backup`).
    Manual,
    Daily {
        #[cfg_attr(feature = "ts", ts(type = "string"))]
        at: ClockTime,
    },
    /// Monday to Friday.
    Weekdays {
        #[cfg_attr(feature = "ts", ts(type = "string"))]
        at: ClockTime,
    },
    Weekly {
        day: Day,
        #[cfg_attr(feature = "ts", ts(type = "string"))]
        at: ClockTime,
    },
    /// Every `hours` hours, counted from the last backup's start.
    Every { hours: u32 },
}

/// A profile's plan: its schedule, and whether it is paused.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub schedule: Schedule,
    #[serde(default)]
    pub paused: bool,
    /// When the schedule was set (ms since the epoch): slots before it are not "missed".
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub set_at_ms: i64,
}

/// A day of the week, as stored (`"monday"` …).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Day {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

/// A local time of day, hours and minutes, stored as `"HH:MM"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClockTime(Time);

/// What a plan says now.
#[derive(Debug, Clone, PartialEq)]
pub enum Due {
    /// Manual, or paused.
    Never,
    /// Due now; `missed`: its slot passed while nothing ran (a catch-up).
    Now { missed: bool },
    /// The next slot.
    At(Zoned),
}

impl Plan {
    pub fn new(schedule: Schedule, set_at: Timestamp) -> Result<Plan> {
        schedule.check()?;
        Ok(Plan {
            schedule,
            paused: false,
            set_at_ms: set_at.as_millisecond(),
        })
    }

    /// `current` set to `schedule` (paused or not) at `now`, as the app's form and `kluis plan`
    /// do: manual means no plan; the same schedule again keeps when it was set (its count of
    /// slots); a new schedule counts its slots from `now`.
    pub fn reschedule(
        current: Option<Plan>,
        schedule: Schedule,
        paused: bool,
        now: Timestamp,
    ) -> Result<Option<Plan>> {
        Ok(match (current, schedule) {
            (_, Schedule::Manual) => None,
            (Some(plan), schedule) if plan.schedule == schedule => Some(Plan { paused, ..plan }),
            (_, schedule) => Some(Plan {
                paused,
                ..Plan::new(schedule, now)?
            }),
        })
    }

    /// Whether a backup is due at `now`, given when the profile's last backup started.
    pub fn due(&self, last_started: Option<Timestamp>, now: &Zoned) -> Due {
        if self.paused || self.schedule == Schedule::Manual {
            return Due::Never;
        }
        let set_at = Timestamp::from_millisecond(self.set_at_ms).unwrap_or(Timestamp::UNIX_EPOCH);
        // What counts is the later of the plan's setting and the last backup: a slot after it
        // that has passed is due (once); otherwise the first slot after it (and after now).
        let since = last_started.map_or(set_at, |last| last.max(set_at));
        let since = since.to_zoned(now.time_zone().clone());
        let Some(slot) = self.schedule.next_slot_after(&since) else {
            return Due::Never;
        };
        if slot.timestamp() > now.timestamp() {
            return Due::At(slot);
        }
        let missed = self
            .schedule
            .next_slot_after(&slot)
            .is_some_and(|next| next.timestamp() <= now.timestamp())
            || now.timestamp().duration_since(slot.timestamp()) > CATCH_UP_AFTER;
        Due::Now { missed }
    }
}

impl Plan {
    /// The plan in words: "daily at 02:00", "every 6 hours (paused)", "manual".
    pub fn in_words(&self) -> String {
        let words = match &self.schedule {
            Schedule::Manual => "manual".to_string(),
            Schedule::Daily { at } => format!("daily at {at}"),
            Schedule::Weekdays { at } => format!("weekdays at {at}"),
            Schedule::Weekly { day, at } => {
                let day = serde_json::to_value(day).ok();
                let day = day.as_ref().and_then(|d| d.as_str()).unwrap_or("?");
                format!("weekly on {day} at {at}")
            }
            Schedule::Every { hours } => format!("every {hours} hours"),
        };
        match self.paused {
            true => format!("{words} (paused)"),
            false => words,
        }
    }

    /// How long ago the schedule's current slot began at `now`: its latest timed slot at or
    /// before `now`, or for "every N hours" N hours; none for a manual plan. A backup of the
    /// klant made since then (by any PC of the office) is this slot's backup.
    pub fn slot_age(&self, now: &Zoned) -> Option<std::time::Duration> {
        let begun = match &self.schedule {
            Schedule::Manual => return None,
            Schedule::Every { hours } => {
                return Some(std::time::Duration::from_secs(u64::from(*hours) * 3600))
            }
            schedule => (0..=8).find_map(|back| {
                let date = now.date().checked_sub(jiff::Span::new().days(back)).ok()?;
                let slot = schedule.slot_on(date, now.time_zone())?;
                (slot.timestamp() <= now.timestamp()).then_some(slot)
            })?,
        };
        now.timestamp()
            .duration_since(begun.timestamp())
            .try_into()
            .ok()
    }
}

impl Due {
    /// Whether a backup is due now.
    pub fn is_now(&self) -> bool {
        matches!(self, Due::Now { .. })
    }

    /// When the plan runs next, in ms since the epoch: `now` when it is due, its next slot, or
    /// none (manual, paused).
    pub fn next_ms(&self, now: &Zoned) -> Option<i64> {
        match self {
            Due::Now { .. } => Some(now.timestamp().as_millisecond()),
            Due::At(slot) => Some(slot.timestamp().as_millisecond()),
            Due::Never => None,
        }
    }
}

/// A slot this long past counts as missed (a catch-up), not as "due right now".
pub const CATCH_UP_AFTER: jiff::SignedDuration = jiff::SignedDuration::from_mins(15);

impl Schedule {
    /// Refuses schedules that cannot run (every 0 hours, or more than a week).
    pub fn check(&self) -> Result<()> {
        match self {
            Schedule::Every { hours } if !(1..=MAX_EVERY_HOURS).contains(hours) => Err(Error::Config(
                format!("A plan runs every 1 to {MAX_EVERY_HOURS} hours; for less often, use a weekly plan."),
            )),
            _ => Ok(()),
        }
    }

    /// The first slot strictly after `t`, in `t`'s time zone.
    fn next_slot_after(&self, t: &Zoned) -> Option<Zoned> {
        let at = match self {
            Schedule::Manual => return None,
            Schedule::Every { hours } => {
                return t
                    .checked_add(jiff::SignedDuration::from_hours(i64::from(*hours)))
                    .ok()
            }
            Schedule::Daily { at } | Schedule::Weekdays { at } | Schedule::Weekly { at, .. } => {
                at.0
            }
        };
        let start: Date = t.date();
        // A week and a day covers every weekly slot, whatever the day today.
        (0..=8).find_map(|offset| {
            let date = start.checked_add(jiff::Span::new().days(offset)).ok()?;
            if !self.runs_on(date.weekday()) {
                return None;
            }
            // A time inside the spring-forward gap is moved on by the gap (02:30 → 03:30); a
            // time that occurs twice in the autumn is the first of the two.
            let slot = date.to_datetime(at).to_zoned(t.time_zone().clone()).ok()?;
            (slot.timestamp() > t.timestamp()).then_some(slot)
        })
    }

    /// A timed schedule's slot on `date` in `tz`; none on a day it does not run, for a manual
    /// plan, and for "every N hours" (whose slots follow the last backup, not the calendar).
    /// The dashboard's day strip asks, to tell a missed day from a free one.
    pub fn slot_on(&self, date: Date, tz: &jiff::tz::TimeZone) -> Option<Zoned> {
        let (Schedule::Daily { at } | Schedule::Weekdays { at } | Schedule::Weekly { at, .. }) =
            self
        else {
            return None;
        };
        self.runs_on(date.weekday())
            .then(|| date.to_datetime(at.0).to_zoned(tz.clone()).ok())
            .flatten()
    }

    /// Whether a timed schedule has a slot on a day like `day`.
    fn runs_on(&self, day: Weekday) -> bool {
        match self {
            Schedule::Weekdays { .. } => !matches!(day, Weekday::Saturday | Weekday::Sunday),
            Schedule::Weekly { day: wanted, .. } => wanted.weekday() == day,
            _ => true,
        }
    }
}

impl Day {
    fn weekday(self) -> Weekday {
        match self {
            Day::Monday => Weekday::Monday,
            Day::Tuesday => Weekday::Tuesday,
            Day::Wednesday => Weekday::Wednesday,
            Day::Thursday => Weekday::Thursday,
            Day::Friday => Weekday::Friday,
            Day::Saturday => Weekday::Saturday,
            Day::Sunday => Weekday::Sunday,
        }
    }
}

impl ClockTime {
    /// `"HH:MM"` (24-hour clock), refused otherwise with what to write.
    pub fn parse(text: &str) -> Result<ClockTime> {
        let refuse = || {
            Error::Config(format!(
                "\"{}\" is not a time of day; write it as HH:MM, for example 02:00.",
                text.chars().take(16).collect::<String>()
            ))
        };
        let (h, m) = text.trim().split_once(':').ok_or_else(refuse)?;
        let digits = |s: &str, len: std::ops::RangeInclusive<usize>| {
            len.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
        };
        if !digits(h, 1..=2) || !digits(m, 2..=2) {
            return Err(refuse());
        }
        let (h, m): (i8, i8) = (
            h.parse().map_err(|_| refuse())?,
            m.parse().map_err(|_| refuse())?,
        );
        if !(0..24).contains(&h) || !(0..60).contains(&m) {
            return Err(refuse());
        }
        Time::new(h, m, 0, 0).map(ClockTime).map_err(|_| refuse())
    }

    /// The time of day.
    pub fn time(self) -> Time {
        self.0
    }
}

impl std::fmt::Display for ClockTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02}:{:02}", self.0.hour(), self.0.minute())
    }
}

impl Serialize for ClockTime {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ClockTime {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ClockTime::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::TimeZone;

    fn amsterdam(text: &str) -> Zoned {
        let tz = TimeZone::get("Europe/Amsterdam").expect("the bundled time zone database");
        text.parse::<jiff::civil::DateTime>()
            .unwrap()
            .to_zoned(tz)
            .unwrap()
    }

    fn plan(schedule: Schedule, set: &str) -> Plan {
        Plan::new(schedule, amsterdam(set).timestamp()).unwrap()
    }

    fn at(text: &str) -> ClockTime {
        ClockTime::parse(text).unwrap()
    }

    /// Rescheduling: manual clears the plan; the same schedule keeps when it was set (paused
    /// or not); another schedule counts from now; a schedule that cannot run is refused.
    #[test]
    fn rescheduling_keeps_the_count_of_an_unchanged_schedule() {
        let daily = Schedule::Daily { at: at("02:00") };
        let old = plan(daily.clone(), "2026-11-01T12:00");
        let now = amsterdam("2026-11-23T14:00").timestamp();
        let same = Plan::reschedule(Some(old.clone()), daily, true, now)
            .unwrap()
            .unwrap();
        assert_eq!((same.set_at_ms, same.paused), (old.set_at_ms, true));
        let every = Plan::reschedule(Some(old.clone()), Schedule::Every { hours: 6 }, false, now);
        assert_eq!(every.unwrap().unwrap().set_at_ms, now.as_millisecond());
        assert_eq!(
            Plan::reschedule(Some(old.clone()), Schedule::Manual, false, now).unwrap(),
            None
        );
        assert!(Plan::reschedule(Some(old), Schedule::Every { hours: 0 }, false, now).is_err());
    }

    /// The current slot began at the latest timed slot at or before now (yesterday's before
    /// today's time, Friday's on a Monday morning for weekdays), or N hours ago.
    #[test]
    fn a_plan_s_current_slot_is_its_latest_begun() {
        let hours = |h: u64| Some(std::time::Duration::from_secs(h * 3600));
        let daily = plan(Schedule::Daily { at: at("02:00") }, "2026-11-01T12:00");
        assert_eq!(daily.slot_age(&amsterdam("2026-11-23T09:00")), hours(7));
        assert_eq!(daily.slot_age(&amsterdam("2026-11-23T02:00")), hours(0));
        assert_eq!(daily.slot_age(&amsterdam("2026-11-23T01:00")), hours(23));
        // 2026-11-23 is a Monday.
        let weekdays = plan(Schedule::Weekdays { at: at("02:00") }, "2026-11-01T12:00");
        assert_eq!(weekdays.slot_age(&amsterdam("2026-11-23T01:00")), hours(71));
        let weekly = Schedule::Weekly {
            day: Day::Wednesday,
            at: at("02:00"),
        };
        let weekly = plan(weekly, "2026-11-01T12:00");
        assert_eq!(
            weekly.slot_age(&amsterdam("2026-11-25T01:00")),
            hours(7 * 24 - 1)
        );
        let every = plan(Schedule::Every { hours: 6 }, "2026-11-01T12:00");
        assert_eq!(every.slot_age(&amsterdam("2026-11-23T09:00")), hours(6));
        let manual = Plan {
            schedule: Schedule::Manual,
            ..daily
        };
        assert_eq!(manual.slot_age(&amsterdam("2026-11-23T09:00")), None);
    }

    /// A daily plan set in the afternoon first runs the next night, not at once.
    #[test]
    fn a_new_daily_plan_waits_for_its_first_slot() {
        let p = plan(Schedule::Daily { at: at("02:00") }, "2026-11-23T14:00");
        assert_eq!(
            p.due(None, &amsterdam("2026-11-23T14:01")),
            Due::At(amsterdam("2026-11-24T02:00"))
        );
        assert_eq!(
            p.due(None, &amsterdam("2026-11-24T02:00")),
            Due::Now { missed: false }
        );
    }

    /// A computer off for a weekend runs a daily plan once when it comes back (not three
    /// times), and the next slot counts from that run.
    #[test]
    fn missed_slots_run_once_at_the_next_chance() {
        let p = plan(Schedule::Daily { at: at("02:00") }, "2026-11-01T12:00");
        let friday_run = amsterdam("2026-11-20T02:00").timestamp();
        let monday = amsterdam("2026-11-23T08:30");
        assert_eq!(p.due(Some(friday_run), &monday), Due::Now { missed: true });
        let caught_up = monday.timestamp();
        assert_eq!(
            p.due(Some(caught_up), &amsterdam("2026-11-23T08:31")),
            Due::At(amsterdam("2026-11-24T02:00"))
        );
    }

    /// Weekdays skip the weekend; weekly runs on its day only.
    #[test]
    fn weekdays_and_weekly_plans_keep_to_their_days() {
        let weekdays = plan(Schedule::Weekdays { at: at("18:30") }, "2026-11-20T19:00"); // a Friday
        assert_eq!(
            weekdays.due(None, &amsterdam("2026-11-21T10:00")),
            Due::At(amsterdam("2026-11-23T18:30"))
        );
        let weekly = plan(
            Schedule::Weekly {
                day: Day::Wednesday,
                at: at("07:00"),
            },
            "2026-11-23T08:00",
        );
        assert_eq!(
            weekly.due(None, &amsterdam("2026-11-23T08:00")),
            Due::At(amsterdam("2026-11-25T07:00"))
        );
        let thursday = plan(
            Schedule::Weekly {
                day: Day::Thursday,
                at: at("07:00"),
            },
            "2026-11-26T08:00",
        );
        assert_eq!(
            thursday.due(None, &amsterdam("2026-11-26T08:00")),
            Due::At(amsterdam("2026-12-03T07:00")),
            "a week later, not today"
        );
    }

    /// Every N hours counts from the last backup's start (or the plan's setting).
    #[test]
    fn every_n_hours_counts_from_the_last_run() {
        let p = plan(Schedule::Every { hours: 6 }, "2026-11-23T00:00");
        assert_eq!(
            p.due(None, &amsterdam("2026-11-23T05:59")),
            Due::At(amsterdam("2026-11-23T06:00"))
        );
        let last = amsterdam("2026-11-23T07:00").timestamp();
        assert_eq!(
            p.due(Some(last), &amsterdam("2026-11-23T12:00")),
            Due::At(amsterdam("2026-11-23T13:00"))
        );
        assert_eq!(
            p.due(Some(last), &amsterdam("2026-11-23T13:05")),
            Due::Now { missed: false }
        );
    }

    /// 02:30 does not exist on the night clocks go forward: the plan runs at 03:30 that
    /// night, and at 02:30 again the night after; on the night clocks go back it runs once.
    #[test]
    fn daylight_saving_changes_neither_skip_nor_double_a_run() {
        let p = plan(Schedule::Daily { at: at("02:30") }, "2026-03-28T12:00");
        assert_eq!(
            p.due(None, &amsterdam("2026-03-28T12:00")),
            Due::At(amsterdam("2026-03-29T03:30"))
        );
        let ran = amsterdam("2026-03-29T03:30").timestamp();
        assert_eq!(
            p.due(Some(ran), &amsterdam("2026-03-29T03:31")),
            Due::At(amsterdam("2026-03-30T02:30"))
        );
        let autumn = plan(Schedule::Daily { at: at("02:30") }, "2026-10-24T12:00");
        let first = match autumn.due(None, &amsterdam("2026-10-24T12:00")) {
            Due::At(slot) => slot,
            other => panic!("{other:?}"),
        };
        let after_first = first.timestamp() + jiff::SignedDuration::from_mins(1);
        let tz = first.time_zone().clone();
        assert_eq!(
            autumn.due(Some(first.timestamp()), &after_first.to_zoned(tz.clone())),
            Due::At(amsterdam("2026-10-26T02:30")),
            "not again at the repeated 02:30"
        );
    }

    /// Paused and manual plans are never due.
    #[test]
    fn paused_and_manual_plans_are_never_due() {
        let mut p = plan(Schedule::Daily { at: at("02:00") }, "2026-11-01T12:00");
        p.paused = true;
        assert_eq!(p.due(None, &amsterdam("2026-11-23T08:00")), Due::Never);
        assert_eq!(
            plan(Schedule::Manual, "2026-11-01T12:00").due(None, &amsterdam("2026-11-23T08:00")),
            Due::Never
        );
    }

    /// Times are HH:MM; anything else is refused with the form to use; plans round-trip.
    #[test]
    fn times_and_plans_are_read_strictly_and_stored_plainly() {
        assert_eq!(at("2:05").to_string(), "02:05");
        for bad in ["24:00", "12:60", "12", "noon", "-1:00", "12:5x", "12:005"] {
            let e = ClockTime::parse(bad).unwrap_err();
            assert!(e.to_string().contains("HH:MM"), "{bad}: {e}");
        }
        assert!(Plan::new(Schedule::Every { hours: 0 }, Timestamp::UNIX_EPOCH).is_err());
        assert!(Plan::new(
            Schedule::Every {
                hours: MAX_EVERY_HOURS + 1
            },
            Timestamp::UNIX_EPOCH
        )
        .is_err());
        let p = plan(
            Schedule::Weekly {
                day: Day::Monday,
                at: at("06:15"),
            },
            "2026-11-23T00:00",
        );
        let json = serde_json::to_string(&p).unwrap();
        assert!(
            json.contains(r#""schedule":{"kind":"weekly","day":"monday","at":"06:15"}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Plan>(&json).unwrap(), p);
        assert!(serde_json::from_str::<Plan>(&json.replace("06:15", "6:75")).is_err());
    }
}
