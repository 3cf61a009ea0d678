//! A klant's standing, read from its plan and the history: the last verified backup, the last
//! failure since, when the next one is due and whether it is overdue. `kluis status` prints it;
//! the app's plans ask [`last_started`] when a plan is due.

use jiff::{Timestamp, Zoned};
use kluis_core::plan::Due;
use kluis_core::{Code, History, HistoryEntry, KlantKey, Stage};
use serde::Serialize;

use kluis_copies::CopyTarget;

use crate::days::{day_strip, DayMark};
use crate::store::{Profile, ProfileStore};

/// How many of a klant's newest history rows are read: enough to find the last success
/// behind a run of failures (a month of hourly attempts is more than anyone lets happen).
const ROWS_READ: usize = 1000;

/// One klant's standing.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct KlantStatus {
    pub profile_id: String,
    pub name: String,
    pub plan: Option<kluis_core::plan::Plan>,
    /// When the last verified backup was saved (ms since the epoch).
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub last_success_ms: Option<i64>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub last_success_bytes: Option<u64>,
    pub last_success_path: Option<String>,
    /// The newest failure after the last success (cancelled ones are not failures).
    pub last_error: Option<LastError>,
    /// A backup of this klant is under way (or was left unfinished).
    pub running: bool,
    /// When the plan runs next (ms since the epoch; now when due), or none.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub next_due_ms: Option<i64>,
    /// The plan had a slot more than a little while ago with no verified backup since.
    pub overdue: bool,
    /// The last [`crate::days::STRIP_DAYS`] local days, oldest first (the dashboard's strip).
    pub days: Vec<DayMark>,
    /// Kept backups whose last verification found them missing, changed or unreadable.
    pub damaged: u32,
    /// The last verified backup's copies off this computer (none: no copy target is set, or
    /// no backup yet).
    pub copies: Option<Copies>,
    /// The klant's last restore test failed: what did not restore.
    pub restore_test_failed: Option<String>,
    /// The klant's monthly restore test has not run for more than [`RESTORE_TEST_LATE_MS`]
    /// (its backups are encrypted, or none was saved since): run *Test restore*.
    pub restore_test_overdue: bool,
    /// Another PC of the office backed the klant up after this PC's last verified backup
    /// (the office hub said so): when, and which PC.
    pub office_backup: Option<kluis_core::office_backups::OfficeBackup>,
}

/// How long past its month a klant's restore test may be before the dashboard asks for one
/// (a klant backed up weekly gets it with its next backup after the month).
pub const RESTORE_TEST_LATE_MS: i64 = kluis_core::restore_tests::MONTH_MS + 5 * 24 * 60 * 60 * 1000;

/// How many of the copy targets hold a backup, and why the last try to one that does not
/// failed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Copies {
    pub made: u32,
    pub wanted: u32,
    /// "NAS: the folder … is not there …", for a target without its copy.
    pub last_error: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct LastError {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub at_ms: i64,
    pub code: Code,
    pub message: String,
}

/// When `klant`'s latest backup started (any outcome), or another PC of the office backed it
/// up if that is later: what a plan counts from.
pub fn last_started(history: &History, klant: &KlantKey) -> Option<Timestamp> {
    let here = (history.list(Some(klant), 1).ok()?.into_iter().next()).map(|e| e.started_at_ms);
    let elsewhere = history
        .last_backed_up_elsewhere(klant)
        .ok()?
        .map(|b| b.at_ms);
    Timestamp::from_millisecond(here.max(elsewhere)?).ok()
}

/// What `profile`'s plan says at `now`, counted from its last backup's start ([`Due::Never`]
/// without a plan): the one due-computation of the app's plans and `kluis run-due`.
pub fn plan_due(profile: &Profile, history: &History, now: &Zoned) -> Due {
    match &profile.plan {
        Some(plan) => plan.due(last_started(history, &profile.key()), now),
        None => Due::Never,
    }
}

/// Every klant's standing at `now`, in the store's order: the app's dashboard, `kluis status`
/// and the daily report.
pub fn klant_statuses(
    profiles: &ProfileStore,
    history: &History,
    now: &Zoned,
) -> kluis_core::Result<Vec<KlantStatus>> {
    let targets = profiles.settings().copy_targets;
    (profiles.list().iter())
        .map(|p| klant_status(p, history, &p.copy_targets(&targets), now))
        .collect()
}

/// `profile`'s standing at `now`, its copies counted on `targets` (those it is copied to).
pub fn klant_status(
    profile: &Profile,
    history: &History,
    targets: &[CopyTarget],
    now: &Zoned,
) -> kluis_core::Result<KlantStatus> {
    let rows = history.list(Some(&profile.key()), ROWS_READ)?;
    let success = rows.iter().find(|e| e.stage == Stage::Saved);
    let newer_than_success =
        |e: &&HistoryEntry| success.is_none_or(|s| e.started_at_ms > s.started_at_ms);
    let last_error = rows
        .iter()
        .filter(newer_than_success)
        .find(|e| e.stage == Stage::Failed && e.error_code != Some(Code::Cancelled))
        .map(|e| LastError {
            at_ms: e.finished_at_ms.unwrap_or(e.started_at_ms),
            code: e.error_code.unwrap_or(Code::ServiceError),
            message: e.error_message.clone().unwrap_or_default(),
        });
    let last_test = history.last_restore_test(&profile.key())?;
    let now_ms = now.timestamp().as_millisecond();
    // Late: tested longer ago than the month and its grace, or never while a kept backup is.
    let oldest_kept = (rows.iter())
        .filter(|e| e.stage == Stage::Saved && e.removed.is_none())
        .map(|e| e.started_at_ms)
        .min();
    let restore_test_overdue = profile.restore_test_monthly
        && match &last_test {
            Some(test) => now_ms - test.at_ms > RESTORE_TEST_LATE_MS,
            None => oldest_kept.is_some_and(|at| now_ms - at > RESTORE_TEST_LATE_MS),
        };
    // Another PC of the office's backup, when newer than this PC's last verified one: the
    // plan counts from it as from its own (see `crate::office`).
    let elsewhere = history
        .last_backed_up_elsewhere(&profile.key())?
        .filter(|b| success.is_none_or(|s| b.at_ms > s.started_at_ms));
    let later = |here: Option<&HistoryEntry>| {
        let at = here
            .map(|e| e.started_at_ms)
            .max(elsewhere.as_ref().map(|b| b.at_ms))?;
        Timestamp::from_millisecond(at).ok()
    };
    let (next_due_ms, overdue) = match &profile.plan {
        None => (None, false),
        Some(plan) => {
            let next = plan.due(later(rows.first()), now).next_ms(now);
            // Overdue counts from the last *verified* backup: tries that failed do not count.
            let overdue = matches!(plan.due(later(success), now), Due::Now { missed: true });
            (next, overdue)
        }
    };
    Ok(KlantStatus {
        profile_id: profile.id.clone(),
        name: profile.name.clone(),
        plan: profile.plan.clone(),
        last_success_ms: success.map(|s| s.finished_at_ms.unwrap_or(s.started_at_ms)),
        last_success_bytes: success.and_then(|s| s.bytes),
        last_success_path: success.and_then(|s| s.path.clone()),
        last_error,
        running: rows.first().is_some_and(|e| !e.stage.is_final()),
        next_due_ms,
        overdue,
        days: day_strip(&rows, profile.plan.as_ref(), now),
        damaged: (rows.iter())
            .filter(|e| e.stage == Stage::Saved && e.removed.is_none())
            .filter(|e| {
                e.last_check
                    .as_ref()
                    .is_some_and(|c| c.finding.is_problem())
            })
            .count() as u32,
        copies: match success {
            Some(success) if !targets.is_empty() => Some(copies_of(history, success, targets)?),
            _ => None,
        },
        restore_test_failed: last_test
            .as_ref()
            .filter(|t| !t.passed)
            .map(|t| t.detail.clone().unwrap_or_default()),
        restore_test_overdue,
        office_backup: elsewhere,
    })
}

/// How many of `targets` hold `backup`'s copy, and why one that does not failed last.
fn copies_of(
    history: &History,
    backup: &HistoryEntry,
    targets: &[CopyTarget],
) -> kluis_core::Result<Copies> {
    let records = history.copies_of(&backup.id)?;
    let record = |target: &CopyTarget| records.iter().find(|r| r.target == target.id);
    let made = (targets.iter())
        .filter(|t| record(t).is_some_and(|r| r.holds()))
        .count();
    // Why one does not hold it: the last try failed, or verification found the copy gone.
    let last_error = (targets.iter())
        .filter_map(|t| {
            let record = record(t).filter(|r| !r.holds())?;
            let why = match &record.last_check {
                Some(check) if record.made => {
                    let detail = check.detail.as_deref().unwrap_or_default();
                    format!("{} {detail}", check.finding.as_str())
                        .trim()
                        .to_string()
                }
                _ => record.error_message.clone()?,
            };
            // The copy's own message may name its target already ("Copy target \"NAS\": …").
            let named = format!("Copy target \"{}\": ", t.name);
            let why = why.strip_prefix(&named).unwrap_or(&why);
            Some(format!("{}: {why}", t.name))
        })
        .next();
    Ok(Copies {
        made: made as u32,
        wanted: targets.len() as u32,
        last_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kluis_core::download::Saved;
    use kluis_core::restore_tests::RestoreTestRecord;

    /// Never tested: late only once its kept backup is older than the month and its grace; a
    /// failed test is flagged with what did not restore; a passed one clears both, until it
    /// is itself late; a klant with the monthly test off is never late.
    #[test]
    fn a_failed_or_late_restore_test_is_flagged() {
        let history = History::in_memory().unwrap();
        let mut profile = Profile::new("Bakker", "https://h/webservice_v2", "u");
        let id = uuid::Uuid::new_v4();
        history.start(id, &profile.key(), "relay").unwrap();
        let saved = Saved {
            path: "/backups/Bakker/a.zip".into(),
            bytes: 10,
            sha256: "0".repeat(64),
            encrypted: None,
        };
        history.saved(id, &saved).unwrap();
        let status = |profile: &Profile, days: i64| {
            let now = Zoned::now()
                .checked_add(jiff::Span::new().hours(24 * days))
                .unwrap();
            klant_status(profile, &history, &[], &now).unwrap()
        };
        assert!(
            !status(&profile, 30).restore_test_overdue,
            "within the grace"
        );
        assert!(
            status(&profile, 40).restore_test_overdue,
            "never tested, backup kept 40 days"
        );
        let now = kluis_core::clock::now_ms();
        // A later test (not one of the same round, which a failure would stand for).
        let test = |passed: bool| RestoreTestRecord {
            job: id.to_string(),
            at_ms: now + passed as i64,
            passed,
            entries: 1,
            bytes: 10,
            took_ms: 1,
            detail: (!passed).then(|| "a.csv: invalid checksum".into()),
            target: None,
        };
        history.restore_tested(&test(false)).unwrap();
        let failed = status(&profile, 0);
        assert_eq!(
            failed.restore_test_failed.as_deref(),
            Some("a.csv: invalid checksum")
        );
        history.restore_tested(&test(true)).unwrap();
        let passed = status(&profile, 0);
        assert!(passed.restore_test_failed.is_none() && !passed.restore_test_overdue);
        assert!(
            status(&profile, 40).restore_test_overdue,
            "late again after the month"
        );
        profile.restore_test_monthly = false;
        assert!(
            !status(&profile, 40).restore_test_overdue,
            "off: never late"
        );
    }
}
