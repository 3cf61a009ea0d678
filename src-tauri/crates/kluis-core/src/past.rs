//! A saved backup recorded after the fact, with the times it happened: the demo's month of
//! history (kluis-desktop's demo furnishes a klant with one), never a backup this computer ran
//! now — those go through the engine's stages as they happen.
//!
//! The file must be where `saved.path` says, whole: the record says nothing the file does not
//! hold (its length and SHA-256 are the file's), so verification, copies, restore tests and
//! retention treat it as any other saved backup. A job id recorded already is refused.

use rusqlite::params;
use uuid::Uuid;

use crate::download::Saved;
use crate::error::{Error, Result};
use crate::history::{Durability, History};
use crate::klant_key::KlantKey;
use crate::stage::Stage;

/// One saved backup of the past.
#[derive(Debug, Clone)]
pub struct PastBackup {
    pub job: Uuid,
    pub klant: KlantKey,
    /// How the service's callback came (as a job's transport is recorded).
    pub transport: String,
    /// When it was asked for and when it was saved (Unix milliseconds).
    pub started_ms: i64,
    pub saved_ms: i64,
    pub saved: Saved,
}

impl History {
    /// Records `past` as saved at its own times (see the module's text).
    pub fn record_past(&self, past: &PastBackup) -> Result<()> {
        if past.saved_ms < past.started_ms {
            return Err(Error::Config(
                "A backup cannot be saved before it was asked for.".into(),
            ));
        }
        let job = past.job.to_string();
        self.write(Durability::Durable, |tx| {
            tx.execute(
                "INSERT INTO jobs (id, profile, transport, started_at_ms, finished_at_ms, stage, bytes, sha256, path) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![job, past.klant, past.transport, past.started_ms, past.saved_ms, Stage::Saved.as_str(),
                    past.saved.bytes as i64, past.saved.sha256, past.saved.path.to_string_lossy()],
            )?;
            for (at, stage) in [(past.started_ms, Stage::Requested), (past.saved_ms, Stage::Saved)] {
                tx.execute(
                    "INSERT INTO transitions VALUES (?1, ?2, ?3)",
                    params![job, at, stage.as_str()],
                )?;
            }
            if let Some(encrypted) = &past.saved.encrypted {
                tx.execute(
                    "INSERT INTO encrypted (job_id, bytes, sha256) VALUES (?1, ?2, ?3)",
                    params![job, encrypted.bytes as i64, encrypted.sha256],
                )?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn past(job: Uuid, started_ms: i64, saved_ms: i64) -> PastBackup {
        PastBackup {
            job,
            klant: KlantKey::profile("bakker"),
            transport: "demo".into(),
            started_ms,
            saved_ms,
            saved: Saved {
                path: "/backups/bakker 2026-10-01.zip".into(),
                bytes: 42,
                sha256: "ab".repeat(32),
                encrypted: None,
            },
        }
    }

    /// A past backup is listed as saved at its own time, with its file, among the klant's
    /// kept backups; the same job twice is refused and changes nothing.
    #[test]
    fn a_past_backup_is_saved_at_its_own_time_once() {
        let history = History::in_memory().unwrap();
        let job = Uuid::new_v4();
        history
            .record_past(&past(job, 1_000_000, 1_060_000))
            .unwrap();
        let entry = history.get(job).unwrap().expect("recorded");
        assert_eq!(entry.stage, Stage::Saved);
        assert_eq!(entry.started_at_ms, 1_000_000);
        assert_eq!(entry.finished_at_ms, Some(1_060_000));
        assert_eq!(entry.on_disk(), Some((42, "ab".repeat(32).as_str())));
        assert_eq!(
            history
                .kept(Some(&KlantKey::profile("bakker")))
                .unwrap()
                .len(),
            1
        );
        assert!(
            history
                .record_past(&past(job, 2_000_000, 2_000_001))
                .is_err(),
            "a job id twice"
        );
        assert_eq!(
            history.get(job).unwrap().unwrap().started_at_ms,
            1_000_000,
            "unchanged"
        );
        assert!(
            history.record_past(&past(Uuid::new_v4(), 5, 4)).is_err(),
            "saved before it was asked for"
        );
    }
}
