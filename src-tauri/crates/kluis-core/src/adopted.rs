//! Backups another computer made, taken over with their copies (`kluis recover adopt`): the
//! lost computer's catalog on a copy target names each backup and its copy there, and this
//! computer records them so that its dashboard, retention and reports go on where that one
//! stopped — without a copy made twice.
//!
//! An adopted backup is recorded as saved, by transport `adopted`, with no file on this
//! computer (its `path` is empty: nothing here to keep, verify or delete), and its copy on the
//! target as made, with the length and SHA-256 the catalog names. A backup recorded already
//! keeps its record; only a copy not recorded yet is added.

use rusqlite::{params, OptionalExtension};
use uuid::Uuid;

use crate::error::Result;
use crate::history::{Durability, History};
use crate::klant_key::KlantKey;
use crate::stage::Stage;

/// The transport an adopted backup is recorded with.
pub const ADOPTED: &str = "adopted";

/// One backup of another computer and its copy on one target, as its catalog names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdoptedCopy {
    pub job: Uuid,
    /// The klant's key here (the profile it was adopted into).
    pub klant: KlantKey,
    /// When the backup was saved (Unix milliseconds).
    pub saved_ms: i64,
    /// The copy target's id here, and the copy's location on it as the history records it.
    pub target: String,
    pub location: String,
    /// The copy's length and SHA-256 as it is on the target (the encrypted file's, for an
    /// encrypted backup: the plain stream's are not known here).
    pub bytes: u64,
    pub sha256: String,
    pub encrypted: bool,
    pub locked_until_ms: Option<i64>,
}

/// What recording an adopted copy did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adopted {
    /// The copy is new here (its backup too, or adopted before from another target).
    New,
    /// Recorded already.
    Known,
    /// Its backup's id is another backup's here (this computer's own, or another klant's):
    /// nothing is recorded.
    Refused,
}

impl History {
    /// Records `adopted` (see the module's text).
    pub fn adopt_copy(&self, adopted: &AdoptedCopy) -> Result<Adopted> {
        let job = adopted.job.to_string();
        let (plain_bytes, plain_sha256) = match adopted.encrypted {
            true => (None, None),
            false => (Some(adopted.bytes as i64), Some(adopted.sha256.as_str())),
        };
        let mut done = Adopted::Known;
        self.write(Durability::Durable, |tx| {
            let there: Option<(KlantKey, String)> = tx
                .query_row(
                    "SELECT profile, transport FROM jobs WHERE id = ?1",
                    params![job],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            if there.is_some_and(|(klant, transport)| klant != adopted.klant || transport != ADOPTED) {
                done = Adopted::Refused;
                return Ok(());
            }
            let new_job = tx.execute(
                "INSERT OR IGNORE INTO jobs (id, profile, transport, started_at_ms, finished_at_ms, stage, bytes, sha256, path) \
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, NULL)",
                params![job, adopted.klant, ADOPTED, adopted.saved_ms, Stage::Saved.as_str(), plain_bytes, plain_sha256],
            )?;
            if new_job == 1 {
                tx.execute(
                    "INSERT INTO transitions VALUES (?1, ?2, ?3)",
                    params![job, adopted.saved_ms, Stage::Saved.as_str()],
                )?;
                if adopted.encrypted {
                    tx.execute(
                        "INSERT OR IGNORE INTO encrypted (job_id, bytes, sha256) VALUES (?1, ?2, ?3)",
                        params![job, adopted.bytes as i64, adopted.sha256],
                    )?;
                }
            }
            let added = tx.execute(
                "INSERT OR IGNORE INTO copies (job_id, target, made, location, bytes, sha256, at_ms, locked_until_ms) \
                 VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6, ?7)",
                params![job, adopted.target, adopted.location, adopted.bytes as i64, adopted.sha256, adopted.saved_ms, adopted.locked_until_ms],
            )? == 1;
            if added {
                done = Adopted::New;
            }
            Ok(())
        })?;
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(job: Uuid, encrypted: bool) -> AdoptedCopy {
        AdoptedCopy {
            job,
            klant: KlantKey::profile("p-bakker"),
            saved_ms: 1_700_000_000_000,
            target: "t-nas".into(),
            location: "/nas/Bakker/Bakker 2023-11-14.zip".into(),
            bytes: 1234,
            sha256: "ab".repeat(32),
            encrypted,
            locked_until_ms: Some(1_800_000_000_000),
        }
    }

    /// An adopted backup counts as the klant's saved backup, has no file here (nothing for
    /// retention or verification to touch), and its copy is made on its target; adopting it
    /// again adds nothing.
    #[test]
    fn an_adopted_backup_is_saved_with_its_copy_and_no_file_here() {
        let history = History::in_memory().unwrap();
        let job = Uuid::new_v4();
        assert_eq!(history.adopt_copy(&copy(job, false)).unwrap(), Adopted::New);
        assert_eq!(
            history.adopt_copy(&copy(job, false)).unwrap(),
            Adopted::Known,
            "once"
        );
        let klant = KlantKey::profile("p-bakker");
        let rows = history.list(Some(&klant), 10).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (
                rows[0].stage,
                rows[0].transport.as_str(),
                rows[0].path.as_deref()
            ),
            (Stage::Saved, ADOPTED, None)
        );
        assert_eq!(rows[0].bytes, Some(1234));
        assert!(
            history.kept(Some(&klant)).unwrap().is_empty(),
            "no file of it here to keep or delete"
        );
        let made = history.made_copies(Some(&klant)).unwrap();
        assert_eq!(made.len(), 1, "its copy counts for the target's rule");
        assert_eq!(
            made[0].1.location.as_deref(),
            Some("/nas/Bakker/Bakker 2023-11-14.zip")
        );
        assert_eq!(made[0].1.locked_until_ms, Some(1_800_000_000_000));
    }

    /// A catalog naming a backup id this history has for another klant, or for a backup of
    /// this computer's own, records nothing: neither backup gains the other's copy.
    #[test]
    fn an_id_that_is_another_backups_here_is_refused() {
        let history = History::in_memory().unwrap();
        let job = Uuid::new_v4();
        history.adopt_copy(&copy(job, false)).unwrap();
        let mut other_klant = copy(job, false);
        other_klant.klant = KlantKey::profile("p-visser");
        other_klant.target = "t-cloud".into();
        assert_eq!(history.adopt_copy(&other_klant).unwrap(), Adopted::Refused);
        let own = Uuid::new_v4();
        history
            .start(own, &KlantKey::profile("p-bakker"), "relay")
            .unwrap();
        assert_eq!(
            history.adopt_copy(&copy(own, false)).unwrap(),
            Adopted::Refused
        );
        assert!(history.copies_of(&own.to_string()).unwrap().is_empty());
        assert_eq!(history.copies_of(&job.to_string()).unwrap().len(), 1);
    }

    /// An encrypted backup's copy is the encrypted file: its length and SHA-256 are recorded as
    /// the encrypted file's, not as the plain stream's.
    #[test]
    fn an_adopted_encrypted_backup_keeps_the_copy_as_the_encrypted_file() {
        let history = History::in_memory().unwrap();
        history.adopt_copy(&copy(Uuid::new_v4(), true)).unwrap();
        let row = &history.list(None, 1).unwrap()[0];
        assert_eq!((row.bytes, row.sha256.as_deref()), (None, None));
        let encrypted = row.encrypted.as_ref().expect("recorded as encrypted");
        assert_eq!(
            (encrypted.bytes, encrypted.sha256.as_str()),
            (1234, "ab".repeat(32).as_str())
        );
    }
}
