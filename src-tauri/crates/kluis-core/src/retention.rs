//! Retention: which of a profile's saved backups a rule keeps ([`Retention::select`], pure,
//! what a preview shows), and deleting the others ([`prune`]).
//!
//! Deleting is the one thing Kluis does to files it did not just write, so it is narrow:
//! - only files the history says Kluis saved for this profile and still keeps;
//! - only a file that is still exactly as saved (its length and SHA-256 read again just
//!   before) — a changed, moved or unreadable file is left alone and reported — and deleted
//!   through the folder it was read in (`examine`), so a swapped folder cannot redirect it;
//! - never the newest backup that verifies, whatever the rule says;
//! - never a path that a backup being kept also records (a file saved twice to one name);
//! - each deletion recorded in the history, durably, as it happens.
//!
//! The rule is the usual grandfather-father-son one: keep the last N, and the newest backup
//! of each of the last N days, ISO weeks and months that have one (in local time). A backup
//! any part of the rule keeps is kept.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::clock::now_ms;
use crate::error::Result;
use crate::examine::Examined;
use crate::history::{Check, History, HistoryEntry};
use crate::klant_key::KlantKey;
use crate::verify::Finding;

/// A profile's retention rule. Nothing set (or only zeros): every backup is kept.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retention {
    /// The newest N backups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_last: Option<u32>,
    /// The newest backup of each of the last N days that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_daily: Option<u32>,
    /// The newest backup of each of the last N ISO weeks that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_weekly: Option<u32>,
    /// The newest backup of each of the last N months that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_monthly: Option<u32>,
}

/// What a rule does with a profile's kept backups (each list newest first).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub keep: Vec<HistoryEntry>,
    pub remove: Vec<HistoryEntry>,
}

impl Retention {
    fn parts(&self) -> [(u32, &'static str); 4] {
        [
            (self.keep_last.unwrap_or(0), "last"),
            (self.keep_daily.unwrap_or(0), "daily"),
            (self.keep_weekly.unwrap_or(0), "weekly"),
            (self.keep_monthly.unwrap_or(0), "monthly"),
        ]
    }

    /// Keeps every backup: nothing is set.
    pub fn keeps_everything(&self) -> bool {
        self.parts().iter().all(|(n, _)| *n == 0)
    }

    /// The rule in words, as the history records it: "keep the last 3, 7 daily, 4 weekly".
    pub fn describe(&self) -> String {
        let parts: Vec<String> = (self.parts().into_iter())
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| match what {
                "last" => format!("the last {n}"),
                _ => format!("{n} {what}"),
            })
            .collect();
        match parts.is_empty() {
            true => "keep every backup".into(),
            false => format!("keep {}", parts.join(", ")),
        }
    }

    /// Splits `kept` (a profile's kept backups, in any order) into what this rule keeps and
    /// what it would remove, with days, weeks and months in `zone`. The newest backup is
    /// always kept; [`prune`] also keeps the newest one that verifies.
    pub fn select(&self, mut kept: Vec<HistoryEntry>, zone: &TimeZone) -> Selection {
        if self.keeps_everything() {
            kept.sort_by_key(|e| std::cmp::Reverse(saved_at(e)));
            return Selection {
                keep: kept,
                remove: Vec::new(),
            };
        }
        kept.sort_by_key(|e| std::cmp::Reverse(saved_at(e)));
        let mut keep = vec![false; kept.len()];
        if let Some(newest) = keep.first_mut() {
            *newest = true;
        }
        for flag in keep.iter_mut().take(self.keep_last.unwrap_or(0) as usize) {
            *flag = true;
        }
        let periods: [(u32, PeriodOf); 3] = [
            (self.keep_daily.unwrap_or(0), |t| {
                (t.year(), t.day_of_year())
            }),
            (self.keep_weekly.unwrap_or(0), |t| {
                let week = t.date().iso_week_date();
                (week.year(), week.week() as i16)
            }),
            (self.keep_monthly.unwrap_or(0), |t| {
                (t.year(), t.month() as i16)
            }),
        ];
        for (count, period_of) in periods {
            let mut seen = HashSet::new();
            for (index, entry) in kept.iter().enumerate() {
                if seen.len() >= count as usize {
                    break;
                }
                let local = saved_at(entry).to_zoned(zone.clone());
                // Newest first: the first backup met in a period is that period's newest.
                if seen.insert(period_of(&local)) {
                    keep[index] = true;
                }
            }
        }
        let mut selection = Selection::default();
        for (entry, keep) in kept.into_iter().zip(keep) {
            match keep {
                true => selection.keep.push(entry),
                false => selection.remove.push(entry),
            }
        }
        selection
    }
}

/// The period (day, ISO week or month) a local time falls in, as (year, number).
type PeriodOf = fn(&jiff::Zoned) -> (i16, i16);

/// When a backup was saved (its start when the end is not recorded).
fn saved_at(entry: &HistoryEntry) -> Timestamp {
    let ms = entry.finished_at_ms.unwrap_or(entry.started_at_ms);
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Whether [`prune`] deletes or only says what it would delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    DryRun,
    Delete,
}

/// What [`prune`] did (or, dry, would do).
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    /// Deleted (dry: would be deleted), with the rule recorded.
    pub removed: Vec<HistoryEntry>,
    /// Left alone although the rule would remove them, with why: not as saved, or shared.
    pub spared: Vec<(HistoryEntry, Check)>,
    /// How many backups the rule keeps.
    pub kept: usize,
    /// Copies the rule would remove that their target keeps locked (Object Lock) until the
    /// time given (ms): removed by a later pruning, once the lock has ended.
    pub locked: Vec<(HistoryEntry, i64)>,
    /// Copies kept whose lock was renewed (it had less than half its time left).
    pub renewed: usize,
}

/// Applies `rule` to `profile`'s kept backups (see the module's rules); days in `zone`.
/// Blocking (it reads files): call it from a blocking thread.
pub fn prune(
    history: &History,
    profile: &KlantKey,
    rule: &Retention,
    zone: &TimeZone,
    mode: Mode,
) -> Result<Pruned> {
    let kept = history.kept(Some(profile))?;
    prune_files(kept, rule, zone, mode, &Ledger::Backups(history))
}

/// Applies `rule` (a copy target's own) to klant `profile`'s copies on copy target `target`,
/// by the same rules as [`prune`]: only copies Kluis made and recorded, each still exactly as
/// made, never the newest copy that verifies; each deletion recorded. Blocking.
pub fn prune_copies(
    history: &History,
    target: &str,
    holder: &dyn CopyHolder,
    profile: &KlantKey,
    rule: &Retention,
    zone: &TimeZone,
    mode: Mode,
) -> Result<Pruned> {
    // Each copy as a backup at its place on the target (its length and SHA-256 are the
    // backup's as it is on disk, encrypted or not).
    let mut locks = HashMap::new();
    let copies = (history.made_copies(Some(profile))?.into_iter())
        .filter(|(_, record)| record.target == target)
        .map(|(entry, record)| {
            if let Some(until) = record.locked_until_ms {
                locks.insert(entry.id.clone(), until);
            }
            HistoryEntry {
                path: record.location,
                removed: None,
                last_check: record.last_check,
                ..entry
            }
        })
        .collect();
    let ledger = Ledger::Copies {
        history,
        target,
        holder,
        locks,
    };
    prune_files(copies, rule, zone, mode, &ledger)
}

/// A copy target's side of [`prune_copies`]: each copy looked at where it is (its place in
/// the entry's `path`, as the history recorded it) and, when it is the copy made, how to
/// delete it. kluis-copies implements it for each kind of target.
pub trait CopyHolder {
    fn examine(&self, copy: &HistoryEntry) -> Examination;
}

/// Copies in a folder, looked at and deleted as this computer's own backups are (see
/// `examine`: through the opened folder, never by a path swapped meanwhile).
pub struct LocalFiles;

impl CopyHolder for LocalFiles {
    fn examine(&self, copy: &HistoryEntry) -> Examination {
        Examined::of(copy).into()
    }
}

/// A backup or copy looked at: what was found and, when it is exactly as made, how to delete
/// that very file or object.
pub struct Examination {
    pub check: Check,
    delete: Option<Deletion>,
}

type Deletion = Box<dyn FnOnce() -> std::io::Result<()> + Send>;

impl Examination {
    /// Found as made: `delete` removes it.
    pub fn deletable(
        check: Check,
        delete: impl FnOnce() -> std::io::Result<()> + Send + 'static,
    ) -> Self {
        Examination {
            check,
            delete: Some(Box::new(delete)),
        }
    }

    /// Found, and not to be deleted (not as made, or not there).
    pub fn found(check: Check) -> Self {
        Examination {
            check,
            delete: None,
        }
    }

    fn delete(self) -> std::io::Result<()> {
        match self.delete {
            Some(delete) => delete(),
            None => Err(std::io::Error::other("it is not the backup saved")),
        }
    }
}

impl From<Examined> for Examination {
    fn from(examined: Examined) -> Self {
        let check = examined.check.clone();
        match examined.deletable() {
            true => Examination::deletable(check, move || examined.delete()),
            false => Examination::found(check),
        }
    }
}

/// Where [`prune_files`] records what it found and deleted: the backups' own rows, or their
/// copies' on one target.
enum Ledger<'a> {
    Backups(&'a History),
    Copies {
        history: &'a History,
        target: &'a str,
        holder: &'a dyn CopyHolder,
        /// Copies the target keeps locked (Object Lock), until when (ms).
        locks: HashMap<String, i64>,
    },
}

impl Ledger<'_> {
    fn examine(&self, entry: &HistoryEntry) -> Examination {
        match self {
            Ledger::Backups(_) => Examined::of(entry).into(),
            Ledger::Copies { holder, .. } => holder.examine(entry),
        }
    }

    /// Until when the target refuses to delete `id`'s copy, while it does.
    fn locked_until(&self, id: &str) -> Option<i64> {
        match self {
            Ledger::Backups(_) => None,
            Ledger::Copies { locks, .. } => {
                locks.get(id).copied().filter(|&until| until > now_ms())
            }
        }
    }

    fn checked(&self, id: &str, check: &Check) -> Result<()> {
        match self {
            Ledger::Backups(history) => history.checked(id, check),
            Ledger::Copies {
                history, target, ..
            } => history.copy_checked(id, target, check),
        }
    }

    fn removed(&self, id: &str, rule: &str) -> Result<()> {
        match self {
            Ledger::Backups(history) => history.removed(id, rule),
            Ledger::Copies {
                history, target, ..
            } => history.copy_removed(id, target, rule),
        }
    }
}

/// [`prune`] of `kept` (each a file at its `path`), recording in `ledger`.
fn prune_files(
    kept: Vec<HistoryEntry>,
    rule: &Retention,
    zone: &TimeZone,
    mode: Mode,
    ledger: &Ledger<'_>,
) -> Result<Pruned> {
    if rule.keeps_everything() {
        return Ok(Pruned {
            kept: kept.len(),
            ..Pruned::default()
        });
    }
    let mut selection = rule.select(kept, zone);
    // The newest backup that verifies is kept whatever the rule says: when the newest ones
    // are damaged or gone, the last good one may be one the rule would remove.
    let mut newest_first: Vec<&HistoryEntry> =
        selection.keep.iter().chain(&selection.remove).collect();
    newest_first.sort_by_key(|e| std::cmp::Reverse(saved_at(e)));
    let mut checks = Vec::new();
    let mut last_good = None;
    for entry in newest_first {
        let check = ledger.examine(entry).check;
        let intact = check.finding == Finding::Intact;
        checks.push((entry.id.clone(), check));
        if intact {
            last_good = Some(entry.id.clone());
            break;
        }
    }
    if let Some(index) = (selection.remove.iter()).position(|e| Some(&e.id) == last_good.as_ref()) {
        let last_good = selection.remove.remove(index);
        selection.keep.push(last_good);
    }
    for (id, check) in &checks {
        ledger.checked(id, check)?;
    }
    let kept_paths: HashSet<PathBuf> = (selection.keep.iter())
        .filter_map(|e| e.path.as_deref())
        .map(same_file_key)
        .collect();
    let words = rule.describe();
    let mut pruned = Pruned {
        kept: selection.keep.len(),
        ..Pruned::default()
    };
    for entry in selection.remove {
        // Those looked at above are all found not as saved (the search stops at the first
        // that is); the others are opened and checked now, and deleted through that opening.
        let examined = match checks.iter().find(|(id, _)| *id == entry.id) {
            Some((_, check)) => Examination::found(check.clone()),
            None => {
                let examined = ledger.examine(&entry);
                ledger.checked(&entry.id, &examined.check)?;
                examined
            }
        };
        let Some(path) = entry.path.as_deref() else {
            continue;
        };
        if examined.check.finding != Finding::Intact {
            pruned.spared.push((entry, examined.check));
            continue;
        }
        if kept_paths.contains(&same_file_key(path)) {
            let check = Check {
                detail: Some("A backup that is kept is recorded at the same place.".into()),
                ..examined.check
            };
            pruned.spared.push((entry, check));
            continue;
        }
        if let Some(until) = ledger.locked_until(&entry.id) {
            // Object Lock: the target refuses until then, whoever asks; removed after.
            pruned.locked.push((entry, until));
            continue;
        }
        if mode == Mode::Delete {
            let check = examined.check.clone();
            match examined.delete() {
                Ok(()) => ledger.removed(&entry.id, &words)?,
                Err(e) => {
                    let check = Check {
                        finding: Finding::Unreadable,
                        detail: Some(format!("It could not be deleted: {e}.")),
                        ..check
                    };
                    pruned.spared.push((entry, check));
                    continue;
                }
            }
        }
        pruned.removed.push(entry);
    }
    Ok(pruned)
}

/// [`prune`] with `rule` in the computer's time zone, on a blocking thread: what front ends
/// call after a verified save (`Mode::Delete`) or for a preview with checks (`Mode::DryRun`).
pub async fn prune_in_background(
    history: std::sync::Arc<History>,
    profile: KlantKey,
    rule: Retention,
    mode: Mode,
) -> Result<Pruned> {
    tokio::task::spawn_blocking(move || prune(&history, &profile, &rule, &TimeZone::system(), mode))
        .await
        .map_err(|e| {
            crate::Error::Io(format!(
                "Applying the retention rule stopped unexpectedly ({e})."
            ))
        })?
}

/// A path as one file is known by, whichever way it was written (`a/../b`, a linked
/// folder); as written when it cannot be resolved.
fn same_file_key(path: &str) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path))
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use jiff::{SignedDuration, Zoned};

    use super::*;

    fn amsterdam() -> TimeZone {
        TimeZone::get("Europe/Amsterdam").unwrap()
    }

    /// `rule` applied to the test klant's backups, in Amsterdam.
    fn prune_klant(history: &History, rule: &Retention, mode: Mode) -> Pruned {
        prune(
            history,
            &KlantKey::profile("klant"),
            rule,
            &amsterdam(),
            mode,
        )
        .unwrap()
    }

    /// A backup of "klant" saved at `at` in `dir`: the file written, the job recorded with
    /// that time, as a real save records it.
    fn save(history: &History, dir: &Path, at: &Zoned, content: &[u8]) -> HistoryEntry {
        let name = at.strftime("klant %Y-%m-%d %H%M.zip").to_string();
        save_as(history, &dir.join(name), at, content)
    }

    fn save_as(history: &History, path: &Path, at: &Zoned, content: &[u8]) -> HistoryEntry {
        let id: uuid::Uuid = crate::history::saved_for_test(history, path, content)
            .id
            .parse()
            .unwrap();
        let ms = at.timestamp().as_millisecond();
        history
            .conn
            .lock()
            .unwrap()
            .execute(
                "UPDATE jobs SET started_at_ms = ?2 - 60000, finished_at_ms = ?2 WHERE id = ?1",
                rusqlite::params![id.to_string(), ms],
            )
            .unwrap();
        history.get(id).unwrap().unwrap()
    }

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = (std::fs::read_dir(dir).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn keep_last(n: u32) -> Retention {
        Retention {
            keep_last: Some(n),
            ..Retention::default()
        }
    }

    /// "Keep the last 2" deletes the three older backups — each deletion in the history with
    /// its rule — and nothing else in the folder: not a foreign file, not a file named like a
    /// backup that Kluis did not record, not a subfolder.
    #[test]
    fn keeps_the_last_and_spares_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let first: Zoned = "2026-03-01T02:00[Europe/Amsterdam]".parse().unwrap();
        let saved: Vec<HistoryEntry> = (0..5)
            .map(|day| {
                let at = first
                    .checked_add(SignedDuration::from_hours(24 * day))
                    .unwrap();
                save(
                    &history,
                    dir.path(),
                    &at,
                    format!("backup {day}").as_bytes(),
                )
            })
            .collect();
        std::fs::write(dir.path().join("notities.txt"), "mine").unwrap();
        std::fs::write(dir.path().join("klant 2026-02-01 0200.zip"), "not Kluis's").unwrap();
        std::fs::create_dir(dir.path().join("oud")).unwrap();

        let pruned = prune_klant(&history, &keep_last(2), Mode::Delete);
        assert_eq!((pruned.removed.len(), pruned.kept), (3, 2));
        assert_eq!(
            files_in(dir.path()),
            [
                "klant 2026-02-01 0200.zip",
                "klant 2026-03-04 0200.zip",
                "klant 2026-03-05 0200.zip",
                "notities.txt",
                "oud"
            ]
        );
        let oldest = history.get(saved[0].id.parse().unwrap()).unwrap().unwrap();
        assert_eq!(
            oldest.removed.map(|r| r.rule),
            Some("keep the last 2".into()),
            "the history says which rule removed it"
        );
        assert_eq!(
            history
                .kept(Some(&KlantKey::profile("klant")))
                .unwrap()
                .len(),
            2
        );
        assert!(history
            .get(saved[4].id.parse().unwrap())
            .unwrap()
            .unwrap()
            .removed
            .is_none());
    }

    /// A wall clock that moves with tokio's paused test time.
    struct TestClock {
        base: Zoned,
        at: tokio::time::Instant,
    }

    impl TestClock {
        fn now(&self) -> Zoned {
            let elapsed = SignedDuration::try_from(self.at.elapsed()).unwrap();
            self.base.checked_add(elapsed).unwrap()
        }
    }

    /// Grandfather-father-son over 100 days of nightly backups (and a second one on some
    /// afternoons), pruned after each save as a plan does: what is left is the newest backup of
    /// each of the last 7 days, 4 ISO weeks and 3 months — worked out by hand below.
    #[tokio::test(start_paused = true)]
    async fn grandfather_father_son_over_a_hundred_days() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let clock = TestClock {
            base: "2026-01-01T02:00[Europe/Amsterdam]".parse().unwrap(),
            at: tokio::time::Instant::now(),
        };
        let rule = Retention {
            keep_daily: Some(7),
            keep_weekly: Some(4),
            keep_monthly: Some(3),
            ..Retention::default()
        };
        for day in 0..100 {
            save(
                &history,
                dir.path(),
                &clock.now(),
                format!("{day}").as_bytes(),
            );
            prune_klant(&history, &rule, Mode::Delete);
            if day % 10 == 3 {
                tokio::time::advance(Duration::from_secs(12 * 3600)).await;
                save(&history, dir.path(), &clock.now(), b"afternoon");
                prune_klant(&history, &rule, Mode::Delete);
                tokio::time::advance(Duration::from_secs(12 * 3600)).await;
            } else {
                tokio::time::advance(Duration::from_secs(24 * 3600)).await;
            }
        }
        // The last night is Friday 10 April. Days: 4–10 April. ISO weeks: 6–12 April (the
        // 10th), 30 March–5 April (the 5th), 23–29 March (the 29th), 16–22 March (the 22nd).
        // Months: April (the 10th), March (the 31st), February (the 28th). Day 93 (4 April)
        // had an afternoon backup too, the newest of its day. The clock moves in whole days of
        // 24 hours, so from 29 March (summer time) the backups carry 03:00 in their names.
        assert_eq!(
            files_in(dir.path()),
            [
                "klant 2026-02-28 0200.zip",
                "klant 2026-03-22 0200.zip",
                "klant 2026-03-29 0300.zip",
                "klant 2026-03-31 0300.zip",
                "klant 2026-04-04 1500.zip",
                "klant 2026-04-05 0300.zip",
                "klant 2026-04-06 0300.zip",
                "klant 2026-04-07 0300.zip",
                "klant 2026-04-08 0300.zip",
                "klant 2026-04-09 0300.zip",
                "klant 2026-04-10 0300.zip",
            ]
        );
        assert_eq!(
            history
                .kept(Some(&KlantKey::profile("klant")))
                .unwrap()
                .len(),
            11
        );
    }

    /// Only files still as saved are deleted: the two newest backups were changed since, so
    /// the newest one that verifies (the third) is kept although "keep the last 1" does not
    /// reach it, the changed one the rule would remove is left and reported, and only the
    /// oldest, intact, is deleted. A missing one is reported, not recorded as removed.
    #[test]
    fn never_deletes_a_changed_file_nor_the_last_good_one() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let first: Zoned = "2026-03-01T02:00[Europe/Amsterdam]".parse().unwrap();
        let at = |day: i64| {
            first
                .checked_add(SignedDuration::from_hours(24 * day))
                .unwrap()
        };
        let gone = save(&history, dir.path(), &at(0), b"zero");
        let oldest = save(&history, dir.path(), &at(1), b"one");
        let good = save(&history, dir.path(), &at(2), b"two");
        let changed = save(&history, dir.path(), &at(3), b"three");
        let newest = save(&history, dir.path(), &at(4), b"four");
        std::fs::remove_file(gone.path.as_deref().unwrap()).unwrap();
        for entry in [&changed, &newest] {
            std::fs::write(entry.path.as_deref().unwrap(), b"edited").unwrap();
        }

        let pruned = prune_klant(&history, &keep_last(1), Mode::Delete);
        let ids = |entries: Vec<&HistoryEntry>| -> Vec<String> {
            entries.into_iter().map(|e| e.id.clone()).collect()
        };
        assert_eq!(ids(pruned.removed.iter().collect()), ids(vec![&oldest]));
        let spared: Vec<(String, Finding)> = (pruned.spared.iter())
            .map(|(e, c)| (e.id.clone(), c.finding))
            .collect();
        assert_eq!(
            spared,
            [
                (changed.id.clone(), Finding::Changed),
                (gone.id.clone(), Finding::Missing)
            ]
        );
        assert!(
            Path::new(good.path.as_deref().unwrap()).exists(),
            "the last good one"
        );
        assert!(
            Path::new(changed.path.as_deref().unwrap()).exists(),
            "a changed file"
        );
        assert!(!Path::new(oldest.path.as_deref().unwrap()).exists());
        let gone = history.get(gone.id.parse().unwrap()).unwrap().unwrap();
        assert!(gone.removed.is_none(), "not recorded as removed on a guess");
        assert_eq!(gone.last_check.map(|c| c.finding), Some(Finding::Missing));
    }

    /// The newest backup that verifies is the one kept, also when the rule would remove it
    /// and keeps an older intact one: "keep the last 1, 2 monthly" keeps the changed newest
    /// (12 March) and 20 February; 10 March, the newest intact, is kept too, not deleted.
    #[test]
    fn the_newest_intact_backup_is_kept_even_beside_an_older_one() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let at = |text: &str| -> Zoned { format!("{text}[Europe/Amsterdam]").parse().unwrap() };
        save(&history, dir.path(), &at("2026-02-20T02:00"), b"feb");
        let newest_intact = save(&history, dir.path(), &at("2026-03-10T02:00"), b"mar 10");
        let newest = save(&history, dir.path(), &at("2026-03-12T02:00"), b"mar 12");
        std::fs::write(newest.path.as_deref().unwrap(), b"edited").unwrap();
        let rule = Retention {
            keep_last: Some(1),
            keep_monthly: Some(2),
            ..Retention::default()
        };
        let pruned = prune_klant(&history, &rule, Mode::Delete);
        assert!(pruned.removed.is_empty(), "{:?}", pruned.removed);
        assert!(
            Path::new(newest_intact.path.as_deref().unwrap()).exists(),
            "the last good one"
        );
        assert_eq!(pruned.kept, 3);
    }

    /// Two backups recorded at one path (the second saved over the first, same content): the
    /// older one's file is the newer one's, so it is not deleted.
    #[test]
    fn a_path_a_kept_backup_records_is_not_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let path = dir.path().join("klant.zip");
        let first: Zoned = "2026-03-01T02:00[Europe/Amsterdam]".parse().unwrap();
        let older = save_as(&history, &path, &first, b"same");
        let later = first.checked_add(SignedDuration::from_hours(24)).unwrap();
        save_as(
            &history,
            &dir.path().join(".").join("klant.zip"),
            &later,
            b"same",
        );

        let pruned = prune_klant(&history, &keep_last(1), Mode::Delete);
        assert!(pruned.removed.is_empty());
        assert_eq!(pruned.spared[0].0.id, older.id);
        assert!(path.exists());
    }

    /// A dry run names what would go and deletes nothing; the rule's words read as a person
    /// would say them, and an empty rule keeps everything.
    #[test]
    fn a_dry_run_deletes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let first: Zoned = "2026-03-01T02:00[Europe/Amsterdam]".parse().unwrap();
        for day in 0..4 {
            let at = first
                .checked_add(SignedDuration::from_hours(24 * day))
                .unwrap();
            save(&history, dir.path(), &at, b"x");
        }
        let pruned = prune_klant(&history, &keep_last(1), Mode::DryRun);
        assert_eq!(pruned.removed.len(), 3);
        assert_eq!(files_in(dir.path()).len(), 4);
        assert_eq!(
            history
                .kept(Some(&KlantKey::profile("klant")))
                .unwrap()
                .len(),
            4
        );

        let nothing = prune_klant(&history, &keep_last(0), Mode::Delete);
        assert_eq!((nothing.removed.len(), nothing.kept), (0, 4));
        let rule = Retention {
            keep_last: Some(3),
            keep_daily: Some(7),
            keep_monthly: Some(12),
            ..Retention::default()
        };
        assert_eq!(rule.describe(), "keep the last 3, 7 daily, 12 monthly");
        assert_eq!(Retention::default().describe(), "keep every backup");
    }
}
