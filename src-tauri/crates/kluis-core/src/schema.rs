//! The history's tables, made (and an older history's brought up to date) when it opens: the
//! jobs and what belongs to each ([`crate::history`]), its copies off this computer
//! ([`crate::copies`]) and its restore tests ([`crate::restore_tests`]) and the office's backups made by other PCs
//! ([`crate::office_backups`]). A leaf: those modules
//! use the tables, this one imports none of them.

/// Makes every table that is missing and adds the columns an older history lacks.
pub(crate) fn create(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.execute_batch(HISTORY)?;
    conn.execute_batch(COPIES)?;
    conn.execute_batch(RESTORE_TESTS)?;
    conn.execute_batch(OFFICE_BACKUPS)?;
    // Columns added after their tables were first made.
    add_column(conn, "copies", "version", "TEXT")?;
    add_column(conn, "restore_tests", "target", "TEXT")
}

const HISTORY: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    profile TEXT NOT NULL,
    transport TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    finished_at_ms INTEGER,
    stage TEXT NOT NULL,
    bytes INTEGER,
    sha256 TEXT,
    path TEXT,
    failed_stage TEXT,
    error_code TEXT,
    error_message TEXT
);
CREATE TABLE IF NOT EXISTS transitions (
    job_id TEXT NOT NULL REFERENCES jobs(id),
    at_ms INTEGER NOT NULL,
    stage TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_started ON jobs(started_at_ms);
CREATE INDEX IF NOT EXISTS jobs_profile_started ON jobs(profile, started_at_ms);
CREATE TABLE IF NOT EXISTS journal (
    job_id TEXT PRIMARY KEY REFERENCES jobs(id),
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS removals (
    job_id TEXT PRIMARY KEY REFERENCES jobs(id),
    at_ms INTEGER NOT NULL,
    rule TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS encrypted (
    job_id TEXT PRIMARY KEY REFERENCES jobs(id),
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL
);
-- Klanten backed up without a saved profile (ad_hoc.rs): their backups' key, and who
-- they are.
CREATE TABLE IF NOT EXISTS ad_hoc (
    key TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    service TEXT NOT NULL,
    username TEXT NOT NULL,
    folder TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checks (
    job_id TEXT PRIMARY KEY REFERENCES jobs(id),
    at_ms INTEGER NOT NULL,
    finding TEXT NOT NULL,
    detail TEXT
);
";

const COPIES: &str = "
CREATE TABLE IF NOT EXISTS copies (
    job_id TEXT NOT NULL REFERENCES jobs(id),
    target TEXT NOT NULL,
    made INTEGER NOT NULL,
    location TEXT,
    bytes INTEGER,
    sha256 TEXT,
    at_ms INTEGER NOT NULL,
    locked_until_ms INTEGER,
    error_code TEXT,
    error_message TEXT,
    PRIMARY KEY (job_id, target)
);
CREATE TABLE IF NOT EXISTS copy_removals (
    job_id TEXT NOT NULL,
    target TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    rule TEXT NOT NULL,
    PRIMARY KEY (job_id, target)
);
CREATE TABLE IF NOT EXISTS copy_uploads (
    job_id TEXT NOT NULL,
    target TEXT NOT NULL,
    location TEXT NOT NULL,
    upload_id TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (job_id, target)
);
CREATE TABLE IF NOT EXISTS copy_checks (
    job_id TEXT NOT NULL,
    target TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    finding TEXT NOT NULL,
    detail TEXT,
    PRIMARY KEY (job_id, target)
);
";

const RESTORE_TESTS: &str = "
CREATE TABLE IF NOT EXISTS restore_tests (
    job_id TEXT NOT NULL REFERENCES jobs(id),
    at_ms INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    entries INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    took_ms INTEGER NOT NULL,
    detail TEXT,
    target TEXT
);
CREATE INDEX IF NOT EXISTS restore_tests_by_job ON restore_tests (job_id, at_ms);
";

const OFFICE_BACKUPS: &str = "
CREATE TABLE IF NOT EXISTS office_backups (
    profile TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    by_pc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS office_backups_by_profile ON office_backups (profile, at_ms);
-- The newest of each klant's own backups the office hub was told of (the rest are told when
-- the hub is back).
CREATE TABLE IF NOT EXISTS office_told (
    profile TEXT PRIMARY KEY,
    at_ms INTEGER NOT NULL
);
";

/// Adds column `column` (of SQL type `kind`) to `table` when an older history lacks it (its
/// rows get NULL there). Names are the code's own constants, never input.
fn add_column(
    conn: &rusqlite::Connection,
    table: &str,
    column: &str,
    kind: &str,
) -> rusqlite::Result<()> {
    let has = conn
        .prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")?
        .exists(rusqlite::params![table, column])?;
    if !has {
        conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
    }
    Ok(())
}
