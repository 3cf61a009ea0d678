//! The history's record of a klant's backups made by another PC of the office (the office
//! hub said so when this PC asked for the klant's turn): when, and by which PC. A plan counts
//! from them as from its own backups, and the klant's standing says them — the backup is the
//! office's, though its file, copies and restore tests stay with the PC that made it, so
//! nothing here is a [`crate::HistoryEntry`]. And the other way: the newest of a klant's own
//! backups the hub was told of, so that one made while the hub was away is told when it is
//! back.

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use crate::error::Result;
use crate::history::{db_error, Durability, History};
use crate::klant_key::KlantKey;

/// A backup of a klant another PC of the office made.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OfficeBackup {
    /// When it was made (ms since the epoch, by this PC's clock: the hub says how long ago).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub at_ms: i64,
    /// The PC that made it, as the office knows it.
    pub by: String,
}

impl History {
    /// Records that PC `by` backed `klant` up at `at_ms`.
    pub fn backed_up_elsewhere(&self, klant: &KlantKey, backup: &OfficeBackup) -> Result<()> {
        self.write(Durability::Light, |tx| {
            tx.execute(
                "INSERT INTO office_backups (profile, at_ms, by_pc) VALUES (?1, ?2, ?3)",
                params![klant, backup.at_ms, backup.by],
            )
        })?;
        Ok(())
    }

    /// Records that the office hub was told of `klant`'s own backup of `at_ms` (kept only when
    /// newer than the one it was told of before).
    pub fn told_office(&self, klant: &KlantKey, at_ms: i64) -> Result<()> {
        self.write(Durability::Light, |tx| {
            tx.execute(
                "INSERT INTO office_told (profile, at_ms) VALUES (?1, ?2)
                 ON CONFLICT (profile) DO UPDATE SET at_ms = MAX(at_ms, excluded.at_ms)",
                params![klant, at_ms],
            )
        })?;
        Ok(())
    }

    /// When the newest of `klant`'s own backups the office hub was told of was made.
    pub fn told_office_at(&self, klant: &KlantKey) -> Result<Option<i64>> {
        let conn = self.conn.lock().unwrap();
        conn.query_row(
            "SELECT at_ms FROM office_told WHERE profile = ?1",
            params![klant],
            |row| row.get(0),
        )
        .optional()
        .map_err(db_error)
    }

    /// The newest backup of `klant` another PC made, if any.
    pub fn last_backed_up_elsewhere(&self, klant: &KlantKey) -> Result<Option<OfficeBackup>> {
        let conn = self.conn.lock().unwrap();
        conn.query_row(
            "SELECT at_ms, by_pc FROM office_backups WHERE profile = ?1 \
             ORDER BY at_ms DESC, rowid DESC LIMIT 1",
            params![klant],
            |row| {
                Ok(OfficeBackup {
                    at_ms: row.get(0)?,
                    by: row.get(1)?,
                })
            },
        )
        .optional()
        .map_err(db_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newest of a klant's backups elsewhere is read back, another klant's apart; a
    /// history opened again (an older one, brought up to date) keeps them; of the klant's own
    /// backups the hub was told of, the newest is kept.
    #[test]
    fn backups_elsewhere_are_kept_per_klant() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.sqlite3");
        let history = History::open(&db).unwrap();
        let (a, b) = (KlantKey::profile("a"), KlantKey::profile("b"));
        assert_eq!(history.last_backed_up_elsewhere(&a).unwrap(), None);
        for (at_ms, by) in [(2_000, "BALIE"), (3_000, "RECEPTIE"), (1_000, "BALIE")] {
            let backup = OfficeBackup {
                at_ms,
                by: by.into(),
            };
            history.backed_up_elsewhere(&a, &backup).unwrap();
        }
        drop(history);
        let history = History::open(&db).unwrap();
        let newest = history.last_backed_up_elsewhere(&a).unwrap().unwrap();
        assert_eq!((newest.at_ms, newest.by.as_str()), (3_000, "RECEPTIE"));
        assert_eq!(history.last_backed_up_elsewhere(&b).unwrap(), None);
        // What the hub was told of: the newest only, per klant.
        assert_eq!(history.told_office_at(&a).unwrap(), None);
        for at_ms in [5_000, 7_000, 6_000] {
            history.told_office(&a, at_ms).unwrap();
        }
        assert_eq!(history.told_office_at(&a).unwrap(), Some(7_000));
        assert_eq!(history.told_office_at(&b).unwrap(), None);
    }
}
