//! The history's record of restore tests (kluis-restore runs them): per backup tested, when,
//! whether every entry restored, how many entries and bytes, how long it took and what failed
//! — what the auditor report's *last restore test* and the klant's standing read, and what
//! tells when the next monthly one is due.

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use crate::error::Result;
use crate::history::{db_error, Durability, History};
use crate::klant_key::KlantKey;

/// A restore test as recorded.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoreTestRecord {
    /// The backup tested (its job id).
    pub job: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub at_ms: i64,
    pub passed: bool,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub entries: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub took_ms: u64,
    /// What failed (entries and why), or why the test could not run.
    pub detail: Option<String>,
    /// The copy target (its id) whose copy of the backup was fetched and tested; none for the
    /// file saved on this computer.
    pub target: Option<String>,
}

/// A month, as the monthly restore test counts it (as monthly verification does).
pub const MONTH_MS: i64 = 30 * 24 * 60 * 60 * 1000;

impl History {
    /// Records a restore test of backup `record.job`.
    pub fn restore_tested(&self, record: &RestoreTestRecord) -> Result<()> {
        self.write(Durability::Light, |tx| {
            tx.execute(
                "INSERT INTO restore_tests (job_id, at_ms, passed, entries, bytes, took_ms, detail, target) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    record.job,
                    record.at_ms,
                    record.passed,
                    record.entries as i64,
                    record.bytes as i64,
                    record.took_ms as i64,
                    record.detail,
                    record.target
                ],
            )
        })?;
        Ok(())
    }

    /// The newest restore test of any backup of `klant` — of its newest round (the saved file
    /// and its copies, tested at one time), a failed one first: one failure stands for the
    /// round.
    pub fn last_restore_test(&self, klant: &KlantKey) -> Result<Option<RestoreTestRecord>> {
        let conn = self.conn.lock().unwrap();
        conn.query_row(
            "SELECT r.job_id, r.at_ms, r.passed, r.entries, r.bytes, r.took_ms, r.detail, r.target \
             FROM restore_tests r JOIN jobs ON jobs.id = r.job_id \
             WHERE jobs.profile = ?1 ORDER BY r.at_ms DESC, r.passed ASC, r.rowid DESC LIMIT 1",
            params![klant],
            record,
        )
        .optional()
        .map_err(db_error)
    }

    /// The newest restore test of backup `job` (of its newest round, a failed one first).
    pub fn restore_test_of(&self, job: &str) -> Result<Option<RestoreTestRecord>> {
        let conn = self.conn.lock().unwrap();
        conn.query_row(
            "SELECT job_id, at_ms, passed, entries, bytes, took_ms, detail, target \
             FROM restore_tests WHERE job_id = ?1 ORDER BY at_ms DESC, passed ASC, rowid DESC LIMIT 1",
            params![job],
            record,
        )
        .optional()
        .map_err(db_error)
    }

    /// Whether `klant` is due for its monthly restore test at `now_ms`: it keeps a backup, and
    /// none of its backups was tested in the last month.
    pub fn restore_test_due(&self, klant: &KlantKey, now_ms: i64) -> Result<bool> {
        if self.kept(Some(klant))?.is_empty() {
            return Ok(false);
        }
        Ok(match self.last_restore_test(klant)? {
            Some(last) => now_ms - last.at_ms >= MONTH_MS,
            None => true,
        })
    }
}

/// A row of `restore_tests` (its eight columns in order).
fn record(row: &rusqlite::Row) -> rusqlite::Result<RestoreTestRecord> {
    Ok(RestoreTestRecord {
        job: row.get(0)?,
        at_ms: row.get(1)?,
        passed: row.get(2)?,
        entries: row.get::<_, i64>(3)? as u64,
        bytes: row.get::<_, i64>(4)? as u64,
        took_ms: row.get::<_, i64>(5)? as u64,
        detail: row.get(6)?,
        target: row.get(7)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::download::Saved;

    fn saved(history: &History, klant: &KlantKey) -> String {
        let id = uuid::Uuid::new_v4();
        history.start(id, klant, "relay").unwrap();
        let saved = Saved {
            path: std::path::PathBuf::from(format!("/backups/{id}.zip")),
            bytes: 10,
            sha256: "0".repeat(64),
            encrypted: None,
        };
        history.saved(id, &saved).unwrap();
        id.to_string()
    }

    /// A klant with a backup is due until a test is recorded, then again after a month; the
    /// newest record is the one read back; another klant's tests do not count.
    #[test]
    fn a_restore_test_is_due_monthly_and_the_last_is_read_back() {
        let history = History::in_memory().unwrap();
        let (bakker, jansen) = (KlantKey::profile("bakker"), KlantKey::profile("jansen"));
        assert!(
            !history.restore_test_due(&bakker, 0).unwrap(),
            "nothing to test"
        );
        let job = saved(&history, &bakker);
        saved(&history, &jansen);
        let now = crate::clock::now_ms();
        assert!(history.restore_test_due(&bakker, now).unwrap());
        let record = |at_ms, passed| RestoreTestRecord {
            job: job.clone(),
            at_ms,
            passed,
            entries: 3,
            bytes: 30,
            took_ms: 5,
            detail: (!passed).then(|| "a.csv: CRC-32".into()),
            target: None,
        };
        history.restore_tested(&record(now - 1000, false)).unwrap();
        history.restore_tested(&record(now, true)).unwrap();
        assert_eq!(
            history.last_restore_test(&bakker).unwrap(),
            Some(record(now, true))
        );
        assert!(!history.restore_test_due(&bakker, now).unwrap());
        assert!(history.restore_test_due(&bakker, now + MONTH_MS).unwrap());
        assert!(
            history.restore_test_due(&jansen, now).unwrap(),
            "jansen's own"
        );
        assert_eq!(history.last_restore_test(&jansen).unwrap(), None);

        // A round: the saved file passed, its copy on a target failed — at one time. The
        // failure stands for the round, whichever was recorded first.
        let later = now + 10;
        let copy = RestoreTestRecord {
            target: Some("nas".into()),
            ..record(later, false)
        };
        history.restore_tested(&copy).unwrap();
        history.restore_tested(&record(later, true)).unwrap();
        assert_eq!(
            history.last_restore_test(&bakker).unwrap(),
            Some(copy.clone())
        );
        assert_eq!(history.restore_test_of(&job).unwrap(), Some(copy));
    }

    /// A history from before copies were restore-tested (no `target` column) gets the column
    /// when it opens, its tests kept.
    #[test]
    fn an_older_history_gets_the_target_column() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.sqlite3");
        let klant = KlantKey::profile("bakker");
        let job = {
            let history = History::open(&db).unwrap();
            let job = saved(&history, &klant);
            let test = RestoreTestRecord {
                job: job.clone(),
                at_ms: 1,
                passed: true,
                entries: 1,
                bytes: 1,
                took_ms: 1,
                detail: None,
                target: None,
            };
            history.restore_tested(&test).unwrap();
            job
        };
        let old = rusqlite::Connection::open(&db).unwrap();
        old.execute_batch("ALTER TABLE restore_tests DROP COLUMN target")
            .unwrap();
        drop(old);
        let history = History::open(&db).unwrap();
        let kept = history.restore_test_of(&job).unwrap().expect("kept");
        assert!(kept.passed && kept.target.is_none(), "{kept:?}");
    }
}
