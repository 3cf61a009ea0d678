//! The backup history: one SQLite row per job and one per stage transition, with timestamps.
//! It holds what a user needs to trust a backup (when, size, SHA-256, where) and never a
//! secret: no api_key, password, token, webhook id or download URL is ever written here.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::Serialize;
use uuid::Uuid;

use crate::clock::now_ms;
use crate::download::Saved;
use crate::error::{Code, Error, Result};
use crate::klant_key::KlantKey;
use crate::stage::Stage;

/// One past or running backup.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    pub id: String,
    /// Whose backup it is.
    pub profile: KlantKey,
    pub transport: String,
    /// Unix milliseconds.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub started_at_ms: i64,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub finished_at_ms: Option<i64>,
    /// The last stage reached (`saved`, `failed`, or a stage still under way).
    pub stage: Stage,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub bytes: Option<u64>,
    pub sha256: Option<String>,
    pub path: Option<String>,
    /// For failures: the stage that failed, the error code and message.
    pub failed_stage: Option<Stage>,
    pub error_code: Option<Code>,
    pub error_message: Option<String>,
    /// The saved file was deleted by a retention rule (see [`crate::retention`]).
    pub removed: Option<Removal>,
    /// What the last verification found (see [`crate::verify`]).
    pub last_check: Option<Check>,
    /// For an encrypted backup: the encrypted file's length and SHA-256 (`bytes` and `sha256`
    /// are the plain stream's).
    pub encrypted: Option<crate::download::EncryptedFile>,
}

/// A saved file that a retention rule deleted: when, and which rule.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Removal {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub at_ms: i64,
    /// The rule, in words (e.g. "keep the last 3").
    pub rule: String,
}

/// The last verification of a saved file: when, what it found and, for a problem, what.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub at_ms: i64,
    pub finding: crate::finding::Finding,
    pub detail: Option<String>,
}

impl HistoryEntry {
    /// The stage this job reached.
    pub fn reached(&self) -> Stage {
        self.stage
    }

    /// The length and SHA-256 of the file as it is on disk — the encrypted file's for an
    /// encrypted backup — when the history has them.
    pub fn on_disk(&self) -> Option<(u64, &str)> {
        match (&self.encrypted, self.bytes, &self.sha256) {
            (Some(encrypted), _, _) => Some((encrypted.bytes, &encrypted.sha256)),
            (None, Some(bytes), Some(sha256)) => Some((bytes, sha256)),
            _ => None,
        }
    }
}

/// The history store. Cheap calls (one small transaction each), made directly from async code.
pub struct History {
    /// Shared with the blocking pool, where a job's durable writes wait ([`crate::durable`]).
    pub(crate) conn: Arc<Mutex<Connection>>,
    /// Where jobs are claimed by the process that runs them (see [`crate::journal`]).
    pub(crate) claims: crate::claims::Claims,
}

/// The columns [`entry_from_row`] reads, in its order, from [`job_tables!`].
macro_rules! job_columns {
    () => {
        "jobs.id, jobs.profile, jobs.transport, jobs.started_at_ms, jobs.finished_at_ms,
        jobs.stage, jobs.bytes, jobs.sha256, jobs.path, jobs.failed_stage, jobs.error_code,
        jobs.error_message, removals.at_ms, removals.rule, checks.at_ms,
        checks.finding, checks.detail, encrypted.bytes, encrypted.sha256"
    };
}
pub(crate) use job_columns;

/// A job with its removal, its last check and its encrypted file (each one row at most: all
/// are keyed by job).
macro_rules! job_tables {
    () => {
        "jobs LEFT JOIN removals ON removals.job_id = jobs.id
        LEFT JOIN checks ON checks.job_id = jobs.id
        LEFT JOIN encrypted ON encrypted.job_id = jobs.id"
    };
}
pub(crate) use job_tables;

/// How many columns [`job_columns!`] names: a query's own columns come after them.
pub(crate) const JOB_COLUMNS: usize = 19;

const SELECT_JOBS: &str = concat!("SELECT ", job_columns!(), " FROM ", job_tables!());

pub(crate) fn entry_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<HistoryEntry> {
    Ok(HistoryEntry {
        id: row.get(0)?,
        profile: row.get(1)?,
        transport: row.get(2)?,
        started_at_ms: row.get(3)?,
        finished_at_ms: row.get(4)?,
        // Names this version does not know (a newer Kluis wrote the row) read as the least
        // advanced stage and no code, so nothing is taken for finished on a guess.
        stage: Stage::parse(&row.get::<_, String>(5)?).unwrap_or(Stage::Requested),
        bytes: row.get::<_, Option<i64>>(6)?.map(|b| b as u64),
        sha256: row.get(7)?,
        path: row.get(8)?,
        failed_stage: row
            .get::<_, Option<String>>(9)?
            .and_then(|s| Stage::parse(&s)),
        error_code: row
            .get::<_, Option<String>>(10)?
            .and_then(|c| Code::parse(&c)),
        error_message: row.get(11)?,
        removed: match row.get::<_, Option<i64>>(12)? {
            Some(at_ms) => Some(Removal {
                at_ms,
                rule: row.get(13)?,
            }),
            None => None,
        },
        last_check: match row.get::<_, Option<i64>>(14)? {
            // A finding this version does not know reads as unreadable: a problem to look at,
            // never as intact on a guess.
            Some(at_ms) => Some(Check {
                at_ms,
                finding: crate::finding::Finding::parse(&row.get::<_, String>(15)?)
                    .unwrap_or(crate::finding::Finding::Unreadable),
                detail: row.get(16)?,
            }),
            None => None,
        },
        encrypted: match row.get::<_, Option<i64>>(17)? {
            Some(bytes) => Some(crate::download::EncryptedFile {
                bytes: bytes as u64,
                sha256: row.get(18)?,
            }),
            None => None,
        },
    })
}

/// How sure a write must be to outlive a power cut. In WAL mode SQLite keeps the database
/// whole either way; what differs is whether the write is on disk when it returns.
///
/// A backup records about ten writes (its start, each stage, its end). Syncing each cost
/// 9 fsyncs per klant, on the async thread that also carries the other downloads of a
/// batch. So only the writes something later relies on are durable — the journal before the
/// backup is asked for (a restart resumes from it, and must not ask twice), and the end
/// (saved with its digest and path, or failed with its reason), which also makes every light
/// write before it durable (one WAL, synced as a whole). A power cut can take the stages a
/// running job passed since, which is what a crash at that moment would have left anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    Durable,
    Light,
}

/// [`History::write`] on `conn` (locked by the caller).
pub(crate) fn write_on<T>(
    conn: &mut Connection,
    durability: Durability,
    change: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
) -> Result<T> {
    if durability == Durability::Light {
        return transact(conn, change);
    }
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(db_error)?;
    let outcome = transact(conn, change);
    // Back to light whatever happened, or every later write would pay for a sync.
    let light = conn.pragma_update(None, "synchronous", "NORMAL");
    let outcome = outcome?;
    light.map_err(db_error)?;
    Ok(outcome)
}

/// The change that records job `id` reaching `stage`, with `also` in the same transaction; a
/// final stage also ends the job's journal.
pub(crate) fn reaching(
    id: Uuid,
    stage: Stage,
    also: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<usize>,
) -> impl FnOnce(&Transaction<'_>) -> rusqlite::Result<()> {
    let now = now_ms();
    move |tx| {
        if stage.is_final() {
            tx.execute(
                "DELETE FROM journal WHERE job_id = ?1",
                params![id.to_string()],
            )?;
        }
        tx.execute(
            "UPDATE jobs SET stage = ?2 WHERE id = ?1",
            params![id.to_string(), stage.as_str()],
        )?;
        tx.execute(
            "INSERT INTO transitions VALUES (?1, ?2, ?3)",
            params![id.to_string(), now, stage.as_str()],
        )?;
        also(tx)?;
        Ok(())
    }
}

/// The change that records job `id` as saved: its stage, size, digest and path.
pub(crate) fn saving(
    id: Uuid,
    saved: Saved,
) -> impl FnOnce(&Transaction<'_>) -> rusqlite::Result<()> + Send + 'static {
    reaching(id, Stage::Saved, move |tx| {
        if let Some(encrypted) = &saved.encrypted {
            tx.execute(
                "INSERT OR REPLACE INTO encrypted (job_id, bytes, sha256) VALUES (?1, ?2, ?3)",
                params![id.to_string(), encrypted.bytes as i64, encrypted.sha256],
            )?;
        }
        tx.execute(
            "UPDATE jobs SET finished_at_ms = ?2, bytes = ?3, sha256 = ?4, path = ?5 WHERE id = ?1",
            params![
                id.to_string(),
                now_ms(),
                saved.bytes as i64,
                saved.sha256,
                saved.path.to_string_lossy()
            ],
        )
    })
}

fn transact<T>(
    conn: &mut Connection,
    change: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
) -> Result<T> {
    let tx = conn.transaction().map_err(db_error)?;
    let outcome = change(&tx).map_err(db_error)?;
    tx.commit().map_err(db_error)?;
    Ok(outcome)
}

pub(crate) fn db_error(e: rusqlite::Error) -> Error {
    Error::Io(format!("The backup history could not be read or written ({e}). Check that the data folder is writable."))
}

impl History {
    /// Opens (creating if needed) the store at `path`: an owner-only file in an owner-only
    /// folder when Kluis creates them (a file an older version left readable is tightened).
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            kluis_private::files::create_dir_all(dir)
                .map_err(|e| Error::io(format!("create {}", dir.display()), e))?;
        }
        kluis_private::files::prepare_file(path)
            .map_err(|e| Error::io(format!("create {}", path.display()), e))?;
        let claims = crate::claims::Claims::beside(path);
        // Shared: the app, `kluis run-due` and each command open it, sometimes at once.
        let conn = kluis_private::database::open_shared(path).map_err(db_error)?;
        Self::setup(conn, claims)
    }

    /// The platform's local data folder, e.g. `~/.local/share/kluis/history.sqlite3` on Linux,
    /// `%LOCALAPPDATA%\Kluis\kluis\data\history.sqlite3` on Windows (the history records
    /// this computer's files: it does not roam with the user).
    pub fn default_path() -> Result<PathBuf> {
        directories::ProjectDirs::from("nl", "Kluis", "kluis")
            .map(|dirs| dirs.data_local_dir().join("history.sqlite3"))
            .ok_or_else(|| Error::Config("No home folder was found for the backup history. Set KLUIS_HISTORY_DB to a file path.".into()))
    }

    pub fn in_memory() -> Result<Self> {
        Self::setup(
            Connection::open_in_memory().map_err(db_error)?,
            crate::claims::Claims::in_memory(),
        )
    }

    fn setup(mut conn: Connection, claims: crate::claims::Claims) -> Result<Self> {
        // One immediate transaction: two processes upgrading an older history at once take
        // turns (the busy timeout), so neither adds a column the other just added.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db_error)?;
        crate::schema::create(&tx).map_err(db_error)?;
        tx.commit().map_err(db_error)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            claims,
        })
    }

    /// Records a new job in stage `requested`.
    pub fn start(&self, id: Uuid, profile: &KlantKey, transport: &str) -> Result<()> {
        let now = now_ms();
        self.write(Durability::Light, |tx| {
            tx.execute(
                "INSERT INTO jobs (id, profile, transport, started_at_ms, stage) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id.to_string(), profile, transport, now, Stage::Requested.as_str()],
            )?;
            tx.execute(
                "INSERT INTO transitions VALUES (?1, ?2, ?3)",
                params![id.to_string(), now, Stage::Requested.as_str()],
            )?;
            Ok(())
        })
    }

    /// Records that job `id` reached `stage`; a final stage also ends its journal.
    pub fn transition(&self, id: Uuid, stage: Stage) -> Result<()> {
        self.reach(id, stage, |_| Ok(0))
    }

    /// Job `id` ended with `saved`: its stage, size, digest and path in one durable write.
    pub fn saved(&self, id: Uuid, saved: &Saved) -> Result<()> {
        self.write(Durability::Durable, saving(id, saved.clone()))
    }

    /// Job `id` failed at stage `at` with `error`, in one durable write.
    pub fn failed(&self, id: Uuid, at: Stage, error: &Error) -> Result<()> {
        self.reach(id, Stage::Failed, |tx| {
            tx.execute(
                "UPDATE jobs SET finished_at_ms = ?2, failed_stage = ?3, error_code = ?4, error_message = ?5 WHERE id = ?1",
                params![id.to_string(), now_ms(), at.as_str(), error.code().as_str(), error.to_string()],
            )
        })
    }

    /// Job `id` reached `stage`, with `also` in the same transaction. A final stage is made
    /// durable and ends the job's journal; the stages on the way are light writes.
    fn reach(
        &self,
        id: Uuid,
        stage: Stage,
        also: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<usize>,
    ) -> Result<()> {
        let durability = match stage.is_final() {
            true => Durability::Durable,
            false => Durability::Light,
        };
        self.write(durability, reaching(id, stage, also))
    }

    /// The saved file of job `id` was moved (the user chose where to keep it).
    pub fn relocate(&self, id: Uuid, path: &Path) -> Result<()> {
        self.write(Durability::Durable, |tx| {
            tx.execute(
                "UPDATE jobs SET path = ?2 WHERE id = ?1",
                params![id.to_string(), path.to_string_lossy()],
            )?;
            Ok(())
        })
    }

    /// Runs `change` as one transaction with `durability` (see [`Durability`]).
    pub(crate) fn write<T>(
        &self,
        durability: Durability,
        change: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        write_on(&mut self.conn.lock().unwrap(), durability, change)
    }

    /// Newest first; only `profile`'s when given.
    pub fn list(&self, profile: Option<&KlantKey>, limit: usize) -> Result<Vec<HistoryEntry>> {
        self.entries(&format!("{SELECT_JOBS} WHERE (?1 IS NULL OR profile = ?1) ORDER BY started_at_ms DESC, jobs.rowid DESC LIMIT ?2"), params![profile, limit as i64])
    }

    pub fn get(&self, id: Uuid) -> Result<Option<HistoryEntry>> {
        let conn = self.conn.lock().unwrap();
        conn.query_row(
            &format!("{SELECT_JOBS} WHERE id = ?1"),
            params![id.to_string()],
            entry_from_row,
        )
        .optional()
        .map_err(db_error)
    }

    /// Every backup started in `[from_ms, to_ms)` (only `profile`'s when given), by profile
    /// and then oldest first: what a report for that period lists.
    pub fn between(
        &self,
        from_ms: i64,
        to_ms: i64,
        profile: Option<&KlantKey>,
    ) -> Result<Vec<HistoryEntry>> {
        self.entries(&format!("{SELECT_JOBS} WHERE started_at_ms >= ?1 AND started_at_ms < ?2 AND (?3 IS NULL OR profile = ?3) ORDER BY profile, started_at_ms, jobs.rowid"), params![from_ms, to_ms, profile])
    }

    /// Every saved backup whose file Kluis still keeps (not removed by a rule), oldest first;
    /// only `profile`'s when given. What verification reads and retention chooses from.
    pub fn kept(&self, profile: Option<&KlantKey>) -> Result<Vec<HistoryEntry>> {
        self.entries(&format!("{SELECT_JOBS} WHERE (?1 IS NULL OR profile = ?1) AND stage = 'saved' AND jobs.path IS NOT NULL AND removals.job_id IS NULL ORDER BY started_at_ms, jobs.rowid"), params![profile])
    }

    /// The newest saved backup recorded at `path`, if any: what `kluis decrypt` checks a
    /// restored file against.
    pub fn by_path(&self, path: &str) -> Result<Option<HistoryEntry>> {
        let conn = self.conn.lock().unwrap();
        conn.query_row(
            &format!("{SELECT_JOBS} WHERE jobs.path = ?1 AND jobs.stage = 'saved' ORDER BY jobs.started_at_ms DESC LIMIT 1"),
            params![path],
            entry_from_row,
        )
        .optional()
        .map_err(db_error)
    }

    /// Records what verifying job `id`'s file found (replacing the check before it).
    pub fn checked(&self, id: &str, check: &Check) -> Result<()> {
        self.write(Durability::Light, |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO checks (job_id, at_ms, finding, detail) VALUES (?1, ?2, ?3, ?4)",
                params![id, check.at_ms, check.finding.as_str(), check.detail],
            )?;
            Ok(())
        })
    }

    /// Records that job `id`'s file was deleted under `rule` — durably, as it happened.
    pub fn removed(&self, id: &str, rule: &str) -> Result<()> {
        self.write(Durability::Durable, |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO removals (job_id, at_ms, rule) VALUES (?1, ?2, ?3)",
                params![id, now_ms(), rule],
            )?;
            Ok(())
        })
    }

    /// The jobs `sql` (a [`SELECT_JOBS`] query) selects with `params`.
    /// The jobs (with their removal, check and encrypted file) that `condition` selects.
    pub(crate) fn entries_where(
        &self,
        condition: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<HistoryEntry>> {
        self.entries(&format!("{SELECT_JOBS} WHERE {condition}"), params)
    }

    fn entries(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<HistoryEntry>> {
        let conn = self.conn.lock().unwrap();
        let mut statement = conn.prepare(sql).map_err(db_error)?;
        let rows = statement
            .query_map(params, entry_from_row)
            .map_err(db_error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db_error)
    }

    /// The stages job `id` went through, in order.
    pub fn transitions(&self, id: Uuid) -> Result<Vec<String>> {
        let conn = self.conn.lock().unwrap();
        let mut statement = conn
            .prepare("SELECT stage FROM transitions WHERE job_id = ?1 ORDER BY at_ms, rowid")
            .map_err(db_error)?;
        let rows = statement
            .query_map(params![id.to_string()], |row| row.get(0))
            .map_err(db_error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db_error)
    }
}

/// `2026-11-22 15:50:00 UTC` for unix milliseconds.
pub fn format_utc(ms: i64) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_else(|| ms.to_string())
}

/// For tests across the crate: `content` written at `path` and recorded as a saved backup of
/// "klant", as a real save records it.
#[cfg(test)]
pub(crate) fn saved_for_test(history: &History, path: &Path, content: &[u8]) -> HistoryEntry {
    use sha2::{Digest, Sha256};
    std::fs::write(path, content).unwrap();
    let id = Uuid::new_v4();
    history
        .start(id, &KlantKey::profile("klant"), "loopback")
        .unwrap();
    let saved = Saved {
        path: path.to_path_buf(),
        bytes: content.len() as u64,
        sha256: hex::encode(Sha256::digest(content)),
        encrypted: None,
    };
    history.saved(id, &saved).unwrap();
    history.get(id).unwrap().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row with names this version does not know (written by a newer Kluis, or edited by
    /// hand) reads as the least advanced stage and no code — not as finished, not as an error.
    #[test]
    fn unknown_names_read_safely() {
        let history = History::in_memory().unwrap();
        let id = Uuid::new_v4();
        history
            .start(id, &KlantKey::profile("klant"), "relay")
            .unwrap();
        history
            .conn
            .lock()
            .unwrap()
            .execute(
                "UPDATE jobs SET stage = 'archived', failed_stage = 'x', error_code = 'quota' WHERE id = ?1",
                params![id.to_string()],
            )
            .unwrap();
        let entry = history.get(id).unwrap().unwrap();
        assert_eq!(entry.stage, Stage::Requested);
        assert_eq!((entry.failed_stage, entry.error_code), (None, None));
    }

    fn synchronous(history: &History) -> i64 {
        let conn = history.conn.lock().unwrap();
        conn.query_row("PRAGMA synchronous", [], |row| row.get(0))
            .unwrap()
    }

    /// A job's end is one write: when its details cannot be recorded, the job is not shown as
    /// saved without a path (it was two writes, and the first one stood). And a durable write
    /// that fails still leaves the connection light for the writes after it.
    #[test]
    fn the_end_is_one_write() {
        let history = History::in_memory().unwrap();
        let id = Uuid::new_v4();
        history
            .start(id, &KlantKey::profile("klant"), "relay")
            .unwrap();
        history.transition(id, Stage::Downloading).unwrap();
        history
            .conn
            .lock()
            .unwrap()
            .execute_batch(
                "CREATE TRIGGER no_path BEFORE UPDATE OF path ON jobs
                 BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
            )
            .unwrap();
        let saved = Saved {
            path: "/backups/klant.zip".into(),
            bytes: 3,
            sha256: "ab".repeat(32),
            encrypted: None,
        };
        assert!(history.saved(id, &saved).is_err());
        let entry = history.get(id).unwrap().unwrap();
        assert_eq!(
            entry.stage,
            Stage::Downloading,
            "not saved without its path"
        );
        assert_eq!(
            synchronous(&history),
            1,
            "NORMAL again after a failed durable write"
        );
    }
}
