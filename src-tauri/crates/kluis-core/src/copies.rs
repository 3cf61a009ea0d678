//! The history's record of each backup's copies off this computer (kluis-copies makes them):
//! per backup and copy target, where the copy is, its length and SHA-256 as the target
//! confirmed them, until when the target keeps it locked — or why the last try failed.
//!
//! A copy that was made stays recorded as made: a later failure to copy the same backup to the
//! same target (a retry that found the target gone) never overwrites the proof that it once
//! was. What is *pending* is every kept backup without a made copy on a target
//! ([`History::copies_missing`]). Verification records what it last found of a made copy
//! ([`History::copy_checked`]): a copy found missing or changed no longer counts as there.

use rusqlite::params;
use serde::Serialize;
use uuid::Uuid;

/// The file at a folder copy target's root that marks it as Kluis's target (kluis-copies'
/// `folder`), never a copy: recovery passes it by.
pub const TARGET_MARK: &str = ".kluis-target";

use crate::clock::now_ms;
use crate::error::{Code, Error, Result};
use crate::finding::Finding;
use crate::history::{db_error, Check, Durability, History, HistoryEntry, Removal};
use crate::klant_key::KlantKey;

/// One backup's copy on one target.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CopyRecord {
    /// The backup (its job's id).
    pub job_id: String,
    /// The copy target's id.
    pub target: String,
    /// Made (with where, length and SHA-256) or failed (with why).
    pub made: bool,
    /// Where the copy is on the target (a path, an object key).
    pub location: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub bytes: Option<u64>,
    pub sha256: Option<String>,
    /// When it was made, or when the last try failed (Unix milliseconds).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub at_ms: i64,
    /// The target keeps the copy locked (no deletion) until then.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub locked_until_ms: Option<i64>,
    /// The target's version of the object, where it keeps versions (S3 with Object Lock): the
    /// one a retention rule deletes.
    pub version: Option<String>,
    pub error_code: Option<Code>,
    pub error_message: Option<String>,
    /// What the last verification found of the copy.
    pub last_check: Option<Check>,
    /// The copy was deleted by its target's retention rule: when, and which rule.
    pub removed: Option<Removal>,
}

impl CopyRecord {
    /// Made, not removed by a rule, and not found missing, changed or unreadable since.
    pub fn holds(&self) -> bool {
        let found_lost = (self.last_check.as_ref()).is_some_and(|c| c.finding.is_problem());
        self.made && self.removed.is_none() && !found_lost
    }
}

/// A copy a target confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeCopy {
    pub location: String,
    pub bytes: u64,
    pub sha256: String,
    pub locked_until_ms: Option<i64>,
    /// The target's version of the object, where it keeps versions.
    pub version: Option<String>,
}

/// An upload in parts begun and not finished (S3 multipart): where, and the target's id for
/// it, so that a copy interrupted by a crash or kill -9 goes on from the parts the target
/// already holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedUpload {
    pub location: String,
    pub upload_id: String,
}

const SELECT_COPIES: &str = "SELECT copies.job_id, copies.target, made, location, bytes, \
     sha256, copies.at_ms, locked_until_ms, error_code, error_message, copy_checks.at_ms, \
     copy_checks.finding, copy_checks.detail, copy_removals.at_ms, copy_removals.rule, \
     copies.version \
     FROM copies LEFT JOIN copy_checks \
     ON copy_checks.job_id = copies.job_id AND copy_checks.target = copies.target \
     LEFT JOIN copy_removals \
     ON copy_removals.job_id = copies.job_id AND copy_removals.target = copies.target";

fn record_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<CopyRecord> {
    Ok(CopyRecord {
        job_id: row.get(0)?,
        target: row.get(1)?,
        made: row.get(2)?,
        location: row.get(3)?,
        bytes: row.get::<_, Option<i64>>(4)?.map(|b| b as u64),
        sha256: row.get(5)?,
        at_ms: row.get(6)?,
        locked_until_ms: row.get(7)?,
        version: row.get(15)?,
        // A code this version does not know reads as a service error: still a failure.
        error_code: (row.get::<_, Option<String>>(8)?)
            .map(|c| Code::parse(&c).unwrap_or(Code::ServiceError)),
        error_message: row.get(9)?,
        last_check: match row.get::<_, Option<i64>>(10)? {
            // A finding this version does not know reads as unreadable: a problem to look at.
            Some(at_ms) => Some(Check {
                at_ms,
                finding: Finding::parse(&row.get::<_, String>(11)?).unwrap_or(Finding::Unreadable),
                detail: row.get(12)?,
            }),
            None => None,
        },
        removed: match row.get::<_, Option<i64>>(13)? {
            Some(at_ms) => Some(Removal {
                at_ms,
                rule: row.get(14)?,
            }),
            None => None,
        },
    })
}

impl History {
    /// Backup `job`'s copy on `target` was made and confirmed (durable: it is the proof).
    pub fn copy_made(&self, job: Uuid, target: &str, copy: &MadeCopy) -> Result<()> {
        self.write(Durability::Durable, |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO copies (job_id, target, made, location, bytes, sha256, at_ms, locked_until_ms, error_code, error_message, version) \
                 VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6, ?7, NULL, NULL, ?8)",
                params![job.to_string(), target, copy.location, copy.bytes as i64, copy.sha256, now_ms(), copy.locked_until_ms, copy.version],
            )?;
            tx.execute(
                "DELETE FROM copy_uploads WHERE job_id = ?1 AND target = ?2",
                params![job.to_string(), target],
            )?;
            // A new copy: what verification found of an earlier one no longer holds.
            tx.execute(
                "DELETE FROM copy_checks WHERE job_id = ?1 AND target = ?2",
                params![job.to_string(), target],
            )
        })?;
        Ok(())
    }

    /// Copying backup `job` to `target` failed with `error` (a copy made before stays recorded
    /// as made).
    pub fn copy_failed(&self, job: Uuid, target: &str, error: &Error) -> Result<()> {
        self.write(Durability::Light, |tx| {
            tx.execute(
                "INSERT INTO copies (job_id, target, made, at_ms, error_code, error_message) VALUES (?1, ?2, 0, ?3, ?4, ?5) \
                 ON CONFLICT (job_id, target) DO UPDATE SET at_ms = excluded.at_ms, error_code = excluded.error_code, error_message = excluded.error_message WHERE made = 0",
                params![job.to_string(), target, now_ms(), error.code().as_str(), error.to_string()],
            )
        })?;
        Ok(())
    }

    /// Every copy recorded of backup `job`, by target.
    pub fn copies_of(&self, job: &str) -> Result<Vec<CopyRecord>> {
        let conn = self.conn.lock().unwrap();
        let mut statement = conn
            .prepare(&format!(
                "{SELECT_COPIES} WHERE copies.job_id = ?1 ORDER BY copies.target"
            ))
            .map_err(db_error)?;
        let rows = statement
            .query_map(params![job], record_from_row)
            .map_err(db_error)?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(db_error)
    }

    /// What verification found of backup `job`'s copy on `target`.
    pub fn copy_checked(&self, job: &str, target: &str, check: &Check) -> Result<()> {
        self.write(Durability::Light, |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO copy_checks (job_id, target, at_ms, finding, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![job, target, check.at_ms, check.finding.as_str(), check.detail],
            )
        })?;
        Ok(())
    }

    /// The made copies still on their targets (not removed by a rule) of every saved backup
    /// (only `klant`'s when given) — also of one this computer no longer keeps: a target may
    /// keep copies longer than this computer keeps its files — each with the backup it copies,
    /// oldest backup first: what verification checks and a target's rule chooses from.
    pub fn made_copies(&self, klant: Option<&KlantKey>) -> Result<Vec<(HistoryEntry, CopyRecord)>> {
        let saved = self.entries_where(
            "(?1 IS NULL OR profile = ?1) AND stage = 'saved' \
             AND jobs.id IN (SELECT job_id FROM copies WHERE made = 1) \
             ORDER BY started_at_ms, jobs.rowid",
            params![klant],
        )?;
        // Their records in one query (not one per backup: a dashboard of hundreds of klanten
        // asks this for each).
        let mut records: std::collections::HashMap<String, Vec<CopyRecord>> = Default::default();
        {
            let conn = self.conn.lock().unwrap();
            let mut statement = conn
                .prepare(&format!(
                    "{SELECT_COPIES} WHERE copies.made = 1 AND copies.job_id IN \
                     (SELECT id FROM jobs WHERE (?1 IS NULL OR profile = ?1) AND stage = 'saved') \
                     ORDER BY copies.target"
                ))
                .map_err(db_error)?;
            let rows = statement
                .query_map(params![klant], record_from_row)
                .map_err(db_error)?;
            for record in rows {
                let record = record.map_err(db_error)?;
                if record.removed.is_none() {
                    records
                        .entry(record.job_id.clone())
                        .or_default()
                        .push(record);
                }
            }
        }
        let mut made = Vec::new();
        for entry in saved {
            for record in records.remove(&entry.id).unwrap_or_default() {
                made.push((entry.clone(), record));
            }
        }
        Ok(made)
    }

    /// An upload in parts of backup `job` to `target` began: remembered (durably) until the
    /// copy is made or given up, so that a restarted copy goes on with it.
    pub fn copy_upload_started(
        &self,
        job: Uuid,
        target: &str,
        upload: &UnfinishedUpload,
    ) -> Result<()> {
        self.write(Durability::Durable, |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO copy_uploads (job_id, target, location, upload_id, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![job.to_string(), target, upload.location, upload.upload_id, now_ms()],
            )
        })?;
        Ok(())
    }

    /// The upload in parts of backup `job` to `target` left unfinished, if any.
    pub fn copy_upload(&self, job: Uuid, target: &str) -> Result<Option<UnfinishedUpload>> {
        let conn = self.conn.lock().unwrap();
        let found = conn.query_row(
            "SELECT location, upload_id FROM copy_uploads WHERE job_id = ?1 AND target = ?2",
            params![job.to_string(), target],
            |row| {
                Ok(UnfinishedUpload {
                    location: row.get(0)?,
                    upload_id: row.get(1)?,
                })
            },
        );
        match found {
            Ok(upload) => Ok(Some(upload)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(db_error(e)),
        }
    }

    /// The upload in parts of backup `job` to `target` is over (given up, or the target no
    /// longer knows it).
    pub fn copy_upload_ended(&self, job: Uuid, target: &str) -> Result<()> {
        self.write(Durability::Light, |tx| {
            tx.execute(
                "DELETE FROM copy_uploads WHERE job_id = ?1 AND target = ?2",
                params![job.to_string(), target],
            )
        })?;
        Ok(())
    }

    /// The target now keeps backup `job`'s copy locked until `until_ms` (a renewed lock).
    pub fn copy_lock_renewed(&self, job: &str, target: &str, until_ms: i64) -> Result<()> {
        self.write(Durability::Durable, |tx| {
            tx.execute(
                "UPDATE copies SET locked_until_ms = ?3 WHERE job_id = ?1 AND target = ?2",
                params![job, target, until_ms],
            )
        })?;
        Ok(())
    }

    /// Backup `job`'s copy on `target` was deleted under `rule` (its target's) — durably, as
    /// it happened.
    pub fn copy_removed(&self, job: &str, target: &str, rule: &str) -> Result<()> {
        self.write(Durability::Durable, |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO copy_removals (job_id, target, at_ms, rule) VALUES (?1, ?2, ?3, ?4)",
                params![job, target, now_ms(), rule],
            )
        })?;
        Ok(())
    }

    /// The kept backups (only `klant`'s when given) with no copy on `target` that holds (none
    /// made, or the one made found missing or changed since), newest first: the most recent
    /// backup is the one a second copy protects most.
    pub fn copies_missing(
        &self,
        klant: Option<&KlantKey>,
        target: &str,
    ) -> Result<Vec<HistoryEntry>> {
        let made: std::collections::HashSet<String> = {
            let conn = self.conn.lock().unwrap();
            let mut statement = conn
                .prepare(
                    "SELECT copies.job_id FROM copies LEFT JOIN copy_checks \
                     ON copy_checks.job_id = copies.job_id AND copy_checks.target = copies.target \
                     WHERE copies.target = ?1 AND made = 1 \
                     AND (coalesce(copy_checks.finding, 'intact') = 'intact' \
                     OR copies.job_id IN (SELECT job_id FROM copy_removals WHERE target = ?1))",
                )
                .map_err(db_error)?;
            let rows = statement
                .query_map(params![target], |row| row.get(0))
                .map_err(db_error)?;
            rows.collect::<std::result::Result<_, _>>()
                .map_err(db_error)?
        };
        let mut missing: Vec<HistoryEntry> = (self.kept(klant)?.into_iter())
            .filter(|entry| !made.contains(&entry.id))
            .collect();
        missing.reverse();
        Ok(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::download::Saved;

    fn saved_backup(history: &History, dir: &std::path::Path, name: &str) -> Uuid {
        let id = Uuid::new_v4();
        let path = dir.join(name);
        std::fs::write(&path, name).unwrap();
        history
            .start(id, &KlantKey::profile("klant"), "relay")
            .unwrap();
        let saved = Saved {
            path,
            bytes: name.len() as u64,
            sha256: "ab".repeat(32),
            encrypted: None,
        };
        history.saved(id, &saved).unwrap();
        id
    }

    fn made(location: &str) -> MadeCopy {
        MadeCopy {
            location: location.into(),
            bytes: 1,
            sha256: "ab".repeat(32),
            locked_until_ms: None,
            version: None,
        }
    }

    /// A history made before copies had versions opens with the column added: its copies
    /// read as they were (no version), and a new copy keeps its version.
    #[test]
    fn an_older_history_gets_the_version_column() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.sqlite3");
        let job = {
            let history = History::open(&db).unwrap();
            let job = saved_backup(&history, dir.path(), "a.zip");
            history.copy_made(job, "nas", &made("/nas/a.zip")).unwrap();
            job
        };
        let old = rusqlite::Connection::open(&db).unwrap();
        old.execute_batch("ALTER TABLE copies DROP COLUMN version")
            .unwrap();
        drop(old);

        let history = History::open(&db).unwrap();
        let record = history.copies_of(&job.to_string()).unwrap().remove(0);
        assert!(record.made && record.version.is_none(), "{record:?}");
        let versioned = MadeCopy {
            version: Some("v2".into()),
            ..made("s3://b/a.zip")
        };
        history.copy_made(job, "bucket", &versioned).unwrap();
        let records = history.copies_of(&job.to_string()).unwrap();
        assert_eq!(records[0].version.as_deref(), Some("v2"), "{records:?}");
    }

    /// An upload in parts is remembered (where, and the server's id for it) until the copy is
    /// made or the upload is given up.
    #[test]
    fn an_upload_in_parts_is_remembered_until_the_copy_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let job = saved_backup(&history, dir.path(), "a.zip");
        let upload = UnfinishedUpload {
            location: "s3://b/k/a.zip".into(),
            upload_id: "up-1".into(),
        };
        assert_eq!(history.copy_upload(job, "bucket").unwrap(), None);
        history.copy_upload_started(job, "bucket", &upload).unwrap();
        assert_eq!(
            history.copy_upload(job, "bucket").unwrap(),
            Some(upload.clone())
        );
        assert_eq!(
            history.copy_upload(job, "other").unwrap(),
            None,
            "per target"
        );
        history
            .copy_made(job, "bucket", &made("s3://b/k/a.zip"))
            .unwrap();
        assert_eq!(
            history.copy_upload(job, "bucket").unwrap(),
            None,
            "made: over"
        );
        history.copy_upload_started(job, "other", &upload).unwrap();
        history.copy_upload_ended(job, "other").unwrap();
        assert_eq!(
            history.copy_upload(job, "other").unwrap(),
            None,
            "given up: over"
        );
    }

    /// A kept backup is missing on a target until a copy is made there; a later failure on
    /// that target never undoes the proof, and each target counts on its own.
    #[test]
    fn a_made_copy_stays_made() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let (old, new) = (
            saved_backup(&history, dir.path(), "old.zip"),
            saved_backup(&history, dir.path(), "new.zip"),
        );
        let missing = |target| -> Vec<String> {
            (history.copies_missing(None, target).unwrap().into_iter())
                .map(|e| e.id)
                .collect()
        };
        assert_eq!(
            missing("nas"),
            [new.to_string(), old.to_string()],
            "newest first"
        );

        let gone = Error::Io("The folder is not there.".into());
        history.copy_failed(new, "nas", &gone).unwrap();
        assert_eq!(missing("nas").len(), 2, "a failed copy is still missing");
        history
            .copy_made(new, "nas", &made("/nas/new.zip"))
            .unwrap();
        history.copy_failed(new, "nas", &gone).unwrap();
        assert_eq!(missing("nas"), [old.to_string()]);
        let records = history.copies_of(&new.to_string()).unwrap();
        assert!(records[0].made, "{records:?}");
        assert_eq!(records[0].location.as_deref(), Some("/nas/new.zip"));
        assert_eq!(records[0].error_code, None);
        assert_eq!(missing("usb").len(), 2, "another target has its own copies");
    }
}
