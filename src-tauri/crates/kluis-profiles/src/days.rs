//! A klant's last days at a glance (the dashboard's strip): for each local day, whether a
//! verified backup was saved, only failures happened, a planned backup was missed, or nothing
//! was expected.

use jiff::civil::Date;
use jiff::{Timestamp, Zoned};
use kluis_core::plan::{Due, Plan, Schedule, CATCH_UP_AFTER};
use kluis_core::{Code, HistoryEntry, Stage};
use serde::Serialize;

/// How many days the strip shows (today and the 29 before it).
pub const STRIP_DAYS: usize = 30;

/// One day of a klant's strip.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DayMark {
    /// A backup started that day was saved and verified.
    Saved,
    /// Backups were tried that day and none was saved (cancelled ones are not counted).
    Failed,
    /// The plan had a slot that day (after it was set, and more than the catch-up grace
    /// ago) and no backup was tried that day.
    Missed,
    /// Nothing was tried and nothing was due.
    Free,
}

/// The strip of the [`STRIP_DAYS`] days up to and including `now`'s, oldest first, read from
/// `rows` (the klant's history, newest first) and its `plan`.
pub fn day_strip(rows: &[HistoryEntry], plan: Option<&Plan>, now: &Zoned) -> Vec<DayMark> {
    let today = now.date();
    (0..STRIP_DAYS as i64)
        .rev()
        .filter_map(|back| today.checked_sub(jiff::Span::new().days(back)).ok())
        .map(|date| mark(rows, plan, date, now))
        .collect()
}

fn mark(rows: &[HistoryEntry], plan: Option<&Plan>, date: Date, now: &Zoned) -> DayMark {
    let tz = now.time_zone();
    let day_start = date.to_zoned(tz.clone()).ok();
    let next_start = date
        .tomorrow()
        .ok()
        .and_then(|d| d.to_zoned(tz.clone()).ok());
    let (Some(day_start), Some(next_start)) = (day_start, next_start) else {
        return DayMark::Free;
    };
    let (from, until) = (
        day_start.timestamp().as_millisecond(),
        next_start.timestamp().as_millisecond(),
    );
    let that_day: Vec<&HistoryEntry> = tried(rows)
        .filter(|e| (from..until).contains(&e.started_at_ms))
        .collect();
    if that_day.iter().any(|e| e.stage == Stage::Saved) {
        return DayMark::Saved;
    }
    if that_day.iter().any(|e| e.stage == Stage::Failed) {
        return DayMark::Failed;
    }
    // A backup still under way that day is neither saved nor missed (yet).
    if !that_day.is_empty() {
        return DayMark::Free;
    }
    match plan.filter(|p| !p.paused) {
        Some(plan) if missed(rows, plan, date, &next_start, now) => DayMark::Missed,
        _ => DayMark::Free,
    }
}

/// Whether `plan` missed its backup on `date` (nothing was tried that day; the caller knows).
/// A timed plan: its slot that day came after the plan was set and is more than the catch-up
/// grace past. "Every N hours": by the day's end (or now, today) the plan was due and late,
/// counted from the last backup tried before then — the scheduler's own due-computation.
fn missed(rows: &[HistoryEntry], plan: &Plan, date: Date, next_start: &Zoned, now: &Zoned) -> bool {
    if let Schedule::Every { .. } = plan.schedule {
        let moment = if next_start.timestamp() > now.timestamp() {
            now.clone()
        } else {
            // The day's last instant.
            next_start
                .checked_sub(jiff::SignedDuration::from_millis(1))
                .unwrap_or_else(|_| next_start.clone())
        };
        let cut = moment.timestamp().as_millisecond();
        let last_started = tried(rows)
            .find(|e| e.started_at_ms <= cut)
            .and_then(|e| Timestamp::from_millisecond(e.started_at_ms).ok());
        return matches!(plan.due(last_started, &moment), Due::Now { missed: true });
    }
    plan.schedule
        .slot_on(date, now.time_zone())
        .is_some_and(|slot| {
            let slot = slot.timestamp();
            slot.as_millisecond() >= plan.set_at_ms
                && now.timestamp().duration_since(slot) > CATCH_UP_AFTER
        })
}

/// The backups that were tried (a cancelled one was stopped by someone, not tried out).
fn tried(rows: &[HistoryEntry]) -> impl Iterator<Item = &HistoryEntry> {
    rows.iter()
        .filter(|e| e.error_code != Some(Code::Cancelled))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kluis_core::plan::ClockTime;

    fn at(text: &str) -> Zoned {
        format!("{text}[Europe/Amsterdam]").parse().unwrap()
    }

    fn entry(started: &str, stage: Stage, code: Option<Code>) -> HistoryEntry {
        let ms = at(started).timestamp().as_millisecond();
        HistoryEntry {
            id: format!("{ms}"),
            profile: kluis_core::KlantKey::profile("k"),
            transport: "loopback".into(),
            started_at_ms: ms,
            finished_at_ms: Some(ms + 60_000),
            stage,
            bytes: None,
            sha256: None,
            path: None,
            failed_stage: None,
            error_code: code,
            error_message: None,
            removed: None,
            last_check: None,
            encrypted: None,
        }
    }

    fn daily(set: &str) -> Plan {
        let schedule = Schedule::Daily {
            at: ClockTime::parse("02:00").unwrap(),
        };
        Plan::new(schedule, at(set).timestamp()).unwrap()
    }

    /// A daily plan's strip: saved, failed, cancelled-then-nothing (missed), a day the
    /// computer was off (missed), days before the plan existed (free), and today before its
    /// slot has passed long enough to count (free).
    #[test]
    fn strip_tells_saved_failed_missed_and_free() {
        let now = at("2026-11-23T02:10");
        let plan = daily("2026-11-18T12:00");
        let rows = vec![
            // newest first
            entry("2026-11-21T02:00", Stage::Failed, Some(Code::Cancelled)),
            entry("2026-11-20T02:00", Stage::Failed, Some(Code::ServiceError)),
            entry("2026-11-19T02:05", Stage::Failed, Some(Code::Network)),
            entry("2026-11-19T02:00", Stage::Saved, None),
        ];
        let strip = day_strip(&rows, Some(&plan), &now);
        assert_eq!(strip.len(), STRIP_DAYS);
        let last6 = &strip[STRIP_DAYS - 6..];
        assert_eq!(
            last6,
            [
                DayMark::Free,   // 18th: the plan was set after that day's slot
                DayMark::Saved,  // 19th: a failure too, but one was saved
                DayMark::Failed, // 20th
                DayMark::Missed, // 21st: only a cancelled one
                DayMark::Missed, // 22nd: nothing at all
                DayMark::Free,   // 23rd: 02:00 passed only 10 minutes ago
            ],
            "{strip:?}"
        );
        assert!(strip[..STRIP_DAYS - 6].iter().all(|d| *d == DayMark::Free));
    }

    /// Today counts as missed once its slot is well past with nothing tried; a paused plan
    /// is never missed, nor a weekly plan's other days; "every 30 hours" is missed on each day
    /// that ends with it late.
    #[test]
    fn missed_follows_the_plan() {
        let now = at("2026-11-23T09:00");
        let rows = vec![entry("2026-11-20T02:00", Stage::Saved, None)];
        let plan = daily("2026-11-01T00:00");
        let strip = day_strip(&rows, Some(&plan), &now);
        assert_eq!(
            strip[STRIP_DAYS - 3..],
            [DayMark::Missed, DayMark::Missed, DayMark::Missed]
        );
        let paused = Plan {
            paused: true,
            ..plan
        };
        let strip = day_strip(&rows, Some(&paused), &now);
        assert!(!strip.contains(&DayMark::Missed), "{strip:?}");
        // A weekly plan (Mondays; 2026-11-23 is one) set on the 1st and saved only on Friday
        // the 20th: each Monday is missed, the other days are free.
        let weekly = Plan::new(
            Schedule::Weekly {
                day: kluis_core::plan::Day::Monday,
                at: ClockTime::parse("02:00").unwrap(),
            },
            at("2026-11-01T00:00").timestamp(),
        )
        .unwrap();
        let strip = day_strip(&rows, Some(&weekly), &now);
        let missed: Vec<usize> = (0..STRIP_DAYS)
            .filter(|i| strip[*i] == DayMark::Missed)
            .collect();
        assert_eq!(missed, [8, 15, 22, 29], "{strip:?}");
        // Every 30 hours after a backup on the 20th at 02:00: due the 21st at 08:00, so the
        // 21st, 22nd and 23rd end late (today: late already at 09:00).
        let every = Plan::new(
            Schedule::Every { hours: 30 },
            at("2026-11-19T00:00").timestamp(),
        )
        .unwrap();
        let strip = day_strip(&rows, Some(&every), &now);
        assert_eq!(
            strip[STRIP_DAYS - 5..],
            [
                DayMark::Free,
                DayMark::Saved,
                DayMark::Missed,
                DayMark::Missed,
                DayMark::Missed
            ],
            "{strip:?}"
        );
    }
}
