//! kluis-copies: a second copy of each saved backup off this computer, so that a dead disk, a
//! stolen laptop or ransomware on this PC does not take every klant's backups with it (the
//! "1" of 3-2-1).
//!
//! Parts and data flow:
//! - [`target`]: [`CopyTarget`], a place the office set once (the settings hold it; a secret
//!   it needs lives in the keyring), and where its copies go ([`Place`]).
//! - [`folder`]: copies into a folder (a share, a USB disk): written whole, read back, proven.
//! - [`s3`]: copies to S3-compatible object storage, in parts resumable after a crash, each
//!   request's SHA-256 checked by the server, with Object Lock where the bucket has it.
//! - [`sftp`]: copies to a folder on an SFTP server known by its pinned host key, resumable,
//!   read back in full.
//! - [`opened`]: a target made ready once per run (a bucket's client, an SFTP server logged
//!   in to), through which copies are made, checked and deleted; [`objects`]: the small
//!   objects beside them (recovery's catalogs and records), written new, read, listed.
//! - [`holder`]: a target's copies as a retention rule sees them (looked at, deleted — never
//!   a locked one), and locks renewed while a rule keeps a copy.
//! - [`check`]: verification of the copies made ([`check_copies`]): there and whole, or read
//!   back in full; a copy found missing or changed is pending again. (`checked`: what a
//!   look at a copy found, a leaf every target's code shares.)
//! - This file: [`copy_missing`] copies every kept backup of a klant (or of every klant) that
//!   a target does not hold yet, newest first, and records each copy — or why it failed — in
//!   the history (kluis-core's `copies`). A copy that failed is simply still missing: the
//!   klant's next backup, or `kluis copy --pending`, tries it again. A target that is away
//!   (it cannot be opened, its folder is not there) is tried with the newest copy only.
//!
//! Copying and checking are blocking calls made from a blocking thread of the tokio runtime
//! (`copy_missing_in_background`, or the front end's own `spawn_blocking`): a folder is
//! written with the standard library, and an S3 or SFTP request runs on that runtime
//! (`block_on`).
//!
//! The local backup is saved (and counts as saved) before any copy is tried; a copy never
//! changes it, and a failed copy leaves nothing on the target under the backup's name.

pub mod check;
mod checked;
pub mod folder;
pub mod holder;
pub mod objects;
pub mod opened;
pub mod s3;
pub mod sftp;
pub mod target;

use std::sync::Arc;

use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::{Error, History, HistoryEntry, KlantKey, Result};
use uuid::Uuid;

pub use check::{check_copies, CopyChecked};
pub use opened::Opened;
pub use target::{CopyTarget, Place};

/// One copy tried: of which backup, to which target, and how it went.
#[derive(Debug)]
pub struct Copied {
    pub entry: HistoryEntry,
    pub target: CopyTarget,
    /// Where the copy is, or why it could not be made.
    pub outcome: Result<String>,
}

/// Copies each kept backup (only `klant`'s when given) that a target in `targets` does not
/// hold yet, newest first, target by target, recording each in the history. Uploads draw on
/// `pace`, the process's upload budget (the download limit's rate), when given. Blocking: it
/// reads and writes whole files.
pub fn copy_missing(
    history: &History,
    klant: Option<&KlantKey>,
    targets: &[CopyTarget],
    pace: Option<&Arc<Bandwidth>>,
) -> Result<Vec<Copied>> {
    let mut copied = Vec::new();
    for target in targets {
        let missing = history.copies_missing(klant, &target.id)?;
        if missing.is_empty() {
            continue;
        }
        // Opened once for all its copies (an SFTP server is connected to only when needed).
        let opened = Opened::open(target, pace);
        // A target that is away (cannot be opened, a folder not there) is tried with the
        // newest copy only: the others would fail the same way, each told as a failure (an
        // unplugged disk made one alert per backup it lacked). They stay missing, and the
        // next run tries them.
        let away = away(target, &opened);
        for entry in missing {
            let outcome = copy_one(history, &entry, target, &opened);
            copied.push(Copied {
                entry,
                target: target.clone(),
                outcome,
            });
            if away {
                break;
            }
        }
    }
    Ok(copied)
}

/// [`copy_missing`] on a blocking thread.
pub async fn copy_missing_in_background(
    history: Arc<History>,
    klant: Option<KlantKey>,
    targets: Vec<CopyTarget>,
    pace: Option<Arc<Bandwidth>>,
) -> Result<Vec<Copied>> {
    tokio::task::spawn_blocking(move || {
        copy_missing(&history, klant.as_ref(), &targets, pace.as_ref())
    })
    .await
    .map_err(|e| Error::Io(format!("Copying the backups stopped unexpectedly ({e}).")))?
}

/// Whether `target` (as `opened`) can take no copy now as a whole: it could not be opened, or
/// its folder is not there (the copy's own failure says why).
fn away(target: &CopyTarget, opened: &Result<Opened>) -> bool {
    match (opened, &target.place) {
        (Err(_), _) => true,
        (Ok(_), Place::Folder { path }) => {
            folder::away(&target.name, std::path::Path::new(path)).is_some()
        }
        (Ok(_), _) => false,
    }
}

/// Copies `entry` to `target` (as `opened`) and records the outcome.
fn copy_one(
    history: &History,
    entry: &HistoryEntry,
    target: &CopyTarget,
    opened: &Result<Opened>,
) -> Result<String> {
    let job = job_of(entry)?;
    let made = match opened {
        Ok(opened) => opened.copy(history, &target.id, entry),
        Err(e) => Err(opened::again(e)),
    };
    match made {
        Ok(made) => {
            history.copy_made(job, &target.id, &made)?;
            Ok(made.location)
        }
        Err(e) => {
            history.copy_failed(job, &target.id, &e)?;
            Err(e)
        }
    }
}

/// The job id of `entry`.
pub(crate) fn job_of(entry: &HistoryEntry) -> Result<Uuid> {
    Uuid::parse_str(&entry.id).map_err(|_| {
        Error::Io(format!(
            "The history holds a backup with a bad id ({}).",
            entry.id
        ))
    })
}

/// Runs `work` to its end on the tokio runtime this blocking thread belongs to.
pub(crate) fn on_runtime<T>(work: impl std::future::Future<Output = T>) -> Result<T> {
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
        Error::Io("Copying to object storage needs Kluis's runtime (an internal error).".into())
    })?;
    Ok(runtime.block_on(work))
}

/// `target`'s own retention rule applied to `klant`'s copies on it (see kluis-core's
/// `prune_copies`), when it has one that removes anything, and — on a bucket with Object
/// Lock — the locks of the copies it keeps renewed; on a blocking thread.
pub async fn prune_target(
    history: Arc<History>,
    target: &CopyTarget,
    klant: &KlantKey,
) -> Option<Result<kluis_core::retention::Pruned>> {
    let rule = target.keep.clone().filter(|r| !r.keeps_everything());
    let locks = matches!(&target.place, Place::S3(place) if place.lock.is_some());
    if rule.is_none() && !locks {
        return None;
    }
    let (target, klant) = (target.clone(), klant.clone());
    let pruned = tokio::task::spawn_blocking(move || {
        let zone = jiff::tz::TimeZone::system();
        let mode = kluis_core::retention::Mode::Delete;
        // One client (one connection) for the rule and the locks.
        let opened = Arc::new(Opened::open(&target, None)?);
        let holder = holder::for_target(&history, &target, &opened, &klant)?;
        let mut pruned = match rule {
            Some(rule) => kluis_core::retention::prune_copies(
                &history,
                &target.id,
                holder.as_ref(),
                &klant,
                &rule,
                &zone,
                mode,
            )?,
            None => kluis_core::retention::Pruned::default(),
        };
        let leaving: Vec<String> = pruned.locked.iter().map(|(e, _)| e.id.clone()).collect();
        pruned.renewed = holder::renew_locks(&history, &target, &opened, &klant, &leaving)?;
        Ok(pruned)
    });
    Some(pruned.await.unwrap_or_else(|e| {
        Err(Error::Io(format!(
            "Applying the copy target's rule stopped unexpectedly ({e})."
        )))
    }))
}

/// "Test": whether `target` can be written now (a small file or object written, read back,
/// removed).
pub async fn test(target: &CopyTarget) -> Result<()> {
    let target = target.clone();
    tokio::task::spawn_blocking(move || Opened::open(&target, None)?.test())
        .await
        .map_err(|e| Error::Io(format!("The test stopped unexpectedly ({e}).")))?
}
