//! The journal: what a restarted Kluis needs to finish a job that a stopped one began.
//!
//! A job writes its [`Journal`] (service, where to save, how its callback can be collected, and
//! later the part file of its download) to the history database *before* it sends the POST,
//! and the row goes when the job reaches `saved` or `failed`. A job that is still journalled
//! and whose process is gone is *unfinished*: `kluis resume` and the app at start pick it up.
//!
//! Which process runs a job is decided by a [`Claim`] (see [`crate::claims`]).
//!
//! The journal holds no secret: no credential, token, callback id or download URL (a resumed
//! job asks its transport for the callback again and redeems the id again).

use rusqlite::params;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::callback::Reattach;
use crate::claims::Claim;
use crate::download::{Destination, PartialDownload};
use crate::encryption::EncryptionSetting;
use crate::error::{Error, Result};
use crate::history::{
    db_error, entry_from_row, job_columns, job_tables, Durability, History, HistoryEntry,
    JOB_COLUMNS,
};
use crate::stage::Stage;

/// The program that started a job, and so the one that finishes it after a restart: `kluis
/// resume` leaves the app's jobs to the app (unless told to take them), and the app leaves the
/// CLI's to `kluis resume`. Two programs sharing one history then never take each other's
/// backups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    Cli,
    App,
}

/// A job's resumable state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    /// Who started the job; `None` in journals written before owners were recorded, which
    /// only a resume that takes every owner's jobs picks up.
    #[serde(default)]
    pub owner: Option<Owner>,
    /// The service the job was started against; a resume with another one is refused.
    pub base_url: String,
    pub destination: Destination,
    /// Unix milliseconds after which the service is no longer waited for.
    pub callback_deadline_ms: i64,
    /// How another process collects the callback (the same [`Reattach`] the transport's
    /// registration gave); `None` when the callback's URL died with the process (loopback,
    /// tunnel). Read under its earlier name `callback` too, so older journals still resume.
    #[serde(alias = "callback")]
    pub reattach: Option<Reattach>,
    /// Set once the download has begun and can be continued.
    pub download: Option<PartialDownload>,
    /// How the job encrypts its file: the recipient, or that a passphrase (kept in the keyring
    /// or given again, never here) is needed. Whoever finishes the job encrypts it the same way
    /// or refuses to; `None` for a plain job (and in journals written before this was kept).
    #[serde(default)]
    pub encryption: Option<EncryptionSetting>,
}

/// A job in the history that has not ended.
#[derive(Debug, Clone)]
pub struct UnfinishedJob {
    pub entry: HistoryEntry,
    /// `None` for a job that stopped before it journalled (nothing was sent to the service).
    pub journal: Option<Journal>,
}

impl UnfinishedJob {
    pub fn id(&self) -> Uuid {
        Uuid::parse_str(&self.entry.id).unwrap_or_default()
    }

    pub fn stage(&self) -> Stage {
        self.entry.reached()
    }
}

/// The unfinished jobs of one service, sorted by what can be done about them.
#[derive(Debug, Default)]
pub struct Sweep {
    /// Can be finished now: journalled with a collectable callback, run by no other process.
    pub resumable: Vec<UnfinishedJob>,
    /// Were ended now as failed (`not_resumable`), with the reason.
    pub ended: Vec<(Uuid, Error)>,
    /// Still run by another process.
    pub running_elsewhere: usize,
    /// Journalled against another service (left for a resume with its settings).
    pub other_service: usize,
    /// Started by another program (left to it).
    pub other_owner: usize,
}

impl History {
    /// Claims job `id` for this process; `None` when another process (or task) runs it.
    pub fn claim(&self, id: Uuid) -> Result<Option<Claim>> {
        self.claims.take(id)
    }

    /// Removes an ended job's lock file.
    pub(crate) fn forget_claim(&self, id: Uuid) {
        self.claims.forget(id)
    }

    /// Writes (or rewrites) job `id`'s journal, durably: a restart resumes from it, and must
    /// find it so as not to ask the service twice.
    pub fn write_journal(&self, id: Uuid, journal: &Journal) -> Result<()> {
        self.put_journal(id, journal, Durability::Durable)
    }

    /// Rewrites job `id`'s journal with where its download stands, as a light write: the part
    /// file's bytes are not synced either until the download ends, so a power cut costs the
    /// download's restart whichever way this went.
    pub fn checkpoint_journal(&self, id: Uuid, journal: &Journal) -> Result<()> {
        self.put_journal(id, journal, Durability::Light)
    }

    fn put_journal(&self, id: Uuid, journal: &Journal, durability: Durability) -> Result<()> {
        self.write(durability, journaling(id, journal))?;
        Ok(())
    }

    /// Job `id`'s journal, if it has one.
    pub fn journal(&self, id: Uuid) -> Result<Option<Journal>> {
        use rusqlite::OptionalExtension;
        let body: Option<String> = self
            .conn
            .lock()
            .unwrap()
            .query_row(
                "SELECT body FROM journal WHERE job_id = ?1",
                params![id.to_string()],
                |row| row.get(0),
            )
            .optional()
            .map_err(db_error)?;
        Ok(body.and_then(|b| serde_json::from_str::<Journal>(&b).ok()))
    }

    /// Jobs that have not reached `saved` or `failed`, oldest first — whether another process
    /// still runs them is for [`History::claim`] to say.
    pub fn unfinished(&self) -> Result<Vec<UnfinishedJob>> {
        let conn = self.conn.lock().unwrap();
        let mut statement = conn
            .prepare(concat!(
                "SELECT ",
                job_columns!(),
                ", journal.body FROM ",
                job_tables!(),
                " LEFT JOIN journal ON journal.job_id = jobs.id
                 WHERE stage NOT IN ('saved', 'failed') ORDER BY started_at_ms, jobs.rowid"
            ))
            .map_err(db_error)?;
        let rows = statement
            .query_map([], |row| {
                let body: Option<String> = row.get(JOB_COLUMNS)?;
                Ok(UnfinishedJob {
                    entry: entry_from_row(row)?,
                    journal: body.and_then(|b| serde_json::from_str::<Journal>(&b).ok()),
                })
            })
            .map_err(db_error)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db_error)
    }

    /// Looks at every unfinished job of the service at `base_url` that `owner` started (`None`:
    /// every program's): ends those that can never finish (never sent, or their callback
    /// address died with their process) and returns the rest. Jobs another process still runs,
    /// and jobs of another owner, are left alone.
    pub fn sweep(&self, base_url: &str, owner: Option<Owner>) -> Result<Sweep> {
        let mut sweep = Sweep::default();
        for job in self.unfinished()? {
            let id = job.id();
            if self.claim(id)?.is_none() {
                sweep.running_elsewhere += 1;
                continue;
            }
            let reason = match &job.journal {
                None => Some("Kluis stopped before it asked the service for this backup, so nothing was started. Start a new backup.".to_string()),
                Some(journal) if owner.is_some() && journal.owner != owner => {
                    sweep.other_owner += 1;
                    None
                }
                Some(journal) if journal.base_url != base_url => {
                    sweep.other_service += 1;
                    None
                }
                Some(Journal { reattach: None, .. }) => Some(format!(
                    "Kluis stopped while this backup waited, and its callback address ({}) ended with it, so the service's answer cannot be collected. Start a new backup; to let backups survive a restart, use a relay.",
                    job.entry.transport
                )),
                Some(_) => {
                    sweep.resumable.push(job);
                    continue;
                }
            };
            if let Some(reason) = reason {
                let error = Error::NotResumable(reason);
                self.abandon(id, &error)?;
                sweep.ended.push((id, error));
            }
        }
        Ok(sweep)
    }

    /// Ends an unfinished job as failed with `error` (cancelled by the user, or not
    /// resumable), at the stage it had reached, and removes what it left on disk.
    pub fn abandon(&self, id: Uuid, error: &Error) -> Result<()> {
        let Some(entry) = self.get(id)? else {
            return Ok(());
        };
        let stage = entry.reached();
        if stage.is_final() {
            return Ok(());
        }
        if let Some(part) = self.journal(id)?.and_then(|j| j.download) {
            let _ = std::fs::remove_file(part.part);
        }
        self.failed(id, stage, error)?;
        self.forget_claim(id);
        Ok(())
    }
}

/// The change that writes (or rewrites) job `id`'s journal — only while the job has not ended:
/// a write made on the blocking pool may come after a cancel already ended the job (and
/// removed its journal), and must not leave a journal behind it.
pub(crate) fn journaling(
    id: Uuid,
    journal: &Journal,
) -> impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<usize> + Send + 'static {
    let body = serde_json::to_string(journal).expect("the journal serialises");
    move |tx| {
        tx.execute(
            "INSERT INTO journal (job_id, body)
             SELECT ?1, ?2 WHERE EXISTS
                 (SELECT 1 FROM jobs WHERE id = ?1 AND stage NOT IN ('saved', 'failed'))
             ON CONFLICT (job_id) DO UPDATE SET body = excluded.body",
            params![id.to_string(), body],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KlantKey;

    fn journal() -> Journal {
        Journal {
            owner: Some(Owner::Cli),
            base_url: "https://service.example/".into(),
            destination: Destination::Folder("/tmp".into()),
            callback_deadline_ms: 1,
            reattach: Some(Reattach::Relay {
                url: "https://relay.example/".into(),
                inbox: "abc".into(),
            }),
            download: None,
            encryption: None,
        }
    }

    /// A journal written before the field was named `reattach` (as `callback`) still reads,
    /// so a job an older Kluis left is resumed, not ended.
    #[test]
    fn older_journals_still_read() {
        let written = serde_json::to_string(&journal()).unwrap();
        let older = written.replace("\"reattach\"", "\"callback\"");
        assert_ne!(older, written);
        assert_eq!(serde_json::from_str::<Journal>(&older).unwrap(), journal());
    }

    /// A journal written once the job has ended — a cancel that ended it before the blocking
    /// pool made the journal's write — is not kept; one of a running job is.
    #[test]
    fn no_journal_is_kept_for_an_ended_job() {
        let history = History::in_memory().unwrap();
        let (running, ended) = (Uuid::new_v4(), Uuid::new_v4());
        for id in [running, ended] {
            history.start(id, &KlantKey::profile("p"), "relay").unwrap();
        }
        history.abandon(ended, &Error::Cancelled).unwrap();
        for id in [running, ended] {
            history.write_journal(id, &journal()).unwrap();
        }
        assert_eq!(history.journal(running).unwrap(), Some(journal()));
        assert_eq!(history.journal(ended).unwrap(), None, "none after the end");
    }

    /// A journalled job is unfinished until its final stage, which removes the journal.
    #[test]
    fn journal_lives_until_the_job_ends() {
        let history = History::in_memory().unwrap();
        let id = Uuid::new_v4();
        history.start(id, &KlantKey::profile("p"), "relay").unwrap();
        history.write_journal(id, &journal()).unwrap();
        history.transition(id, Stage::Accepted).unwrap();
        let unfinished = history.unfinished().unwrap();
        assert_eq!(unfinished.len(), 1);
        assert_eq!(unfinished[0].journal, Some(journal()));
        assert_eq!(unfinished[0].stage(), Stage::Accepted);
        history.abandon(id, &Error::Cancelled).unwrap();
        assert!(history.unfinished().unwrap().is_empty());
        assert_eq!(
            history.journal(id).unwrap(),
            None,
            "the journal went with the job"
        );
        let entry = history.get(id).unwrap().unwrap();
        assert_eq!(
            entry.failed_stage.map(crate::stage::Stage::as_str),
            Some("accepted")
        );
        assert_eq!(
            entry.error_code.map(crate::error::Code::as_str),
            Some("cancelled")
        );
    }

    /// The sweep ends jobs that can never finish, keeps resumable ones, leaves other services'
    /// and claimed ones alone.
    #[test]
    fn sweep_sorts_unfinished_jobs() {
        let history = History::in_memory().unwrap();
        let base = "https://service.example/";
        let add = |journal: Option<Journal>| {
            let id = Uuid::new_v4();
            history.start(id, &KlantKey::profile("p"), "x").unwrap();
            if let Some(journal) = journal {
                history.write_journal(id, &journal).unwrap();
            }
            id
        };
        let never_sent = add(None);
        let loopback = add(Some(Journal {
            reattach: None,
            ..journal()
        }));
        let relay = add(Some(journal()));
        let other = add(Some(Journal {
            base_url: "https://other.example/".into(),
            ..journal()
        }));
        let busy = add(Some(journal()));
        let finished = add(Some(journal()));
        history.transition(finished, Stage::Saved).unwrap();
        let _claim = history.claim(busy).unwrap().unwrap();

        let sweep = history.sweep(base, Some(Owner::Cli)).unwrap();
        let ended: Vec<Uuid> = sweep.ended.iter().map(|(id, _)| *id).collect();
        assert_eq!(ended, vec![never_sent, loopback]);
        assert!(sweep.ended.iter().all(|(_, e)| e.code() == "not_resumable"));
        let resumable: Vec<Uuid> = sweep.resumable.iter().map(UnfinishedJob::id).collect();
        assert_eq!(resumable, vec![relay]);
        assert_eq!((sweep.running_elsewhere, sweep.other_service), (1, 1));
        assert_eq!(
            history.get(other).unwrap().unwrap().stage,
            "requested",
            "left alone"
        );
        assert_eq!(
            history
                .get(loopback)
                .unwrap()
                .unwrap()
                .error_code
                .map(crate::error::Code::as_str),
            Some("not_resumable")
        );
    }

    /// A claim excludes a second claimant, through the lock file as well as in memory, and
    /// is released on drop.
    #[test]
    fn one_claimant_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.sqlite3");
        let first = History::open(&db).unwrap();
        let second = History::open(&db).unwrap();
        let id = Uuid::new_v4();
        let claim = first.claim(id).unwrap().expect("free at first");
        assert!(
            second.claim(id).unwrap().is_none(),
            "held by the other handle"
        );
        drop(claim);
        assert!(second.claim(id).unwrap().is_some(), "free once released");

        let memory = History::in_memory().unwrap();
        let claim = memory.claim(id).unwrap().expect("free at first");
        assert!(memory.claim(id).unwrap().is_none());
        drop(claim);
        assert!(memory.claim(id).unwrap().is_some());
    }
}
