//! *Restore from a copy…* (the first screen of a Kluis with no klanten): the day this office's
//! computer is gone, its backups found on a copy target with the recovery kit, one restored
//! into a folder picked in the native dialog, or this computer made to carry on for the lost
//! one — kluis-profiles' `recover`, as `kluis recover` runs it.
//!
//! The kit's key comes pasted or typed (its `AGE-SECRET-KEY-1…` line or its 24 words), or read
//! by Rust from the kit's file picked in the native dialog (it then never passes through the
//! webview). It is kept in memory only, while the screen is open ([`Recovery::close`] forgets
//! it), never in the settings, the history or the keyring — until *Carry on*, which keeps only
//! what a kit made here keeps (the public half and the vouch key).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use kluis_copies::{CopyTarget, Opened};
use kluis_core::{Error, Secret};
use kluis_profiles::recover::adopt::{adopt, AdoptAsked};
use kluis_profiles::recover::restore::{choose_at, opener, restore, Stage};
use kluis_profiles::recover::{self, shown, OnTarget};
use kluis_recovery::{Backup, Encrypted, Proof, RecoveryKey};
use serde::Serialize;

use super::restores::RestoreSummary;
use super::shared::Shared;
use crate::error::{AppError, AppResult};

/// The most problems shown (a target of planted objects could name thousands).
const MOST_PROBLEMS: usize = 20;

/// See the module's text.
pub struct Recovery {
    shared: Arc<Shared>,
    /// What the last *Look for backups* read, with the target and key it used.
    reading: Mutex<Option<Arc<Reading>>>,
    /// Moved on by each *Look for backups* and by *Close*: a look that ends after either keeps
    /// nothing (the key is not brought back after Close, nor an older look over a newer one).
    looks: AtomicU64,
    /// The running restore's stop (set by *Cancel* and *Close*); none while none runs.
    stop: Mutex<Option<Arc<AtomicBool>>>,
}

struct Reading {
    target: CopyTarget,
    key: Arc<RecoveryKey>,
    on: OnTarget,
}

/// What *Look for backups* found on a copy target.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct FoundCopies {
    /// The copy target's name.
    pub target: String,
    /// The kit's fingerprint (as its page shows it).
    pub fingerprint: String,
    /// Every backup found, newest first.
    pub backups: Vec<FoundBackup>,
    /// The computers whose catalogs were read, with their catalog's date.
    pub computers: Vec<FoundComputer>,
    /// What the list was made from, in words (each catalog, or the copies' own records).
    pub made_from: String,
    /// What could not be read or did not check out (at most 20, then how many more).
    pub problems: Vec<String>,
    /// When only another kit's catalogs are there: which kit opens them.
    pub other_kit: Option<String>,
}

/// A computer whose catalog is on the target.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct FoundComputer {
    /// Its id (what *Carry on* names it by: two computers may have one name).
    pub id: String,
    pub name: String,
    #[ts(type = "number")]
    pub catalog_ms: i64,
    /// The computer that carries on for it, when one does.
    pub carried_on_by: Option<String>,
}

/// One backup found.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct FoundBackup {
    /// Its place on the target (what *Restore…* is asked for).
    pub location: String,
    /// Its klant, when a catalog or record says.
    pub klant: Option<String>,
    /// The computer that made it.
    pub computer: Option<String>,
    pub name: String,
    #[ts(type = "number")]
    pub bytes: u64,
    /// When it was saved (0: not known).
    #[ts(type = "number")]
    pub saved_ms: i64,
    pub encrypted: FoundEncryption,
    #[ts(type = "number | null")]
    pub locked_until_ms: Option<i64>,
    /// Its last restore test: when, and whether it passed.
    #[ts(type = "[number, boolean] | null")]
    pub restore_test: Option<(i64, bool)>,
    pub proof: FoundProof,
    /// Whether the target still holds it.
    pub on_target: bool,
}

/// How a backup found is encrypted, and whether the kit opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum FoundEncryption {
    No,
    /// With its klant's passphrase, sealed to the kit: the kit opens it.
    Passphrase,
    /// To a recipient: only its identity opens it (not the kit).
    Recipient,
    /// Encrypted, and nothing says with what.
    Unknown,
}

/// What vouches for a backup found (kluis-recovery's `Proof`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum FoundProof {
    CatalogAndRecord,
    Catalog,
    Record,
    /// Its catalog and its own record disagree.
    InDoubt,
    /// Nothing on the target says what it is: not restored by recovery.
    Unverified,
}

/// How far a restore from a copy is.
#[derive(Debug, Clone, Copy, Serialize, ts_rs::TS)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum RecoverProgress {
    Fetching {
        #[ts(type = "number")]
        done: u64,
        #[ts(type = "number")]
        total: u64,
    },
    Restoring {
        #[ts(type = "number")]
        done: u64,
        #[ts(type = "number")]
        total: u64,
    },
}

/// Where a restore from a copy tells its progress.
pub type RecoverSink = Arc<dyn Fn(RecoverProgress) + Send + Sync>;

/// What *Carry on for this office* did.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct CarriedOn {
    /// The computer carried on for.
    pub lost: String,
    /// Each klant taken over: its name, service address and username (to check), and how many
    /// of its copies are now in this computer's history.
    pub klanten: Vec<KlantTakenOver>,
    #[ts(type = "number")]
    pub added: u64,
    /// What is worth saying: a klant or copy not taken and why, a setting left out.
    pub notes: Vec<String>,
    /// Each copy target whose catalog could not be written now, with why.
    pub not_written: Vec<String>,
}

/// A klant taken over.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct KlantTakenOver {
    pub name: String,
    pub base_url: String,
    pub username: String,
    #[ts(type = "number")]
    pub copies: u64,
}

impl Recovery {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        Recovery {
            shared,
            reading: Mutex::new(None),
            looks: AtomicU64::new(0),
            stop: Mutex::new(None),
        }
    }

    /// *Look for backups*: what copy target `target_id` (in Settings, with its secret) holds
    /// that the kit's key opens — the key `pasted`, else read from the kit's file picked in the
    /// native dialog (`None` when that was cancelled).
    pub async fn find_copies(
        &self,
        target_id: &str,
        pasted: Option<String>,
    ) -> AppResult<Option<FoundCopies>> {
        let look = self.looks.fetch_add(1, Ordering::SeqCst) + 1;
        let key = match pasted.map(Secret::new) {
            Some(text) => RecoveryKey::parse(text.expose())?,
            None => match self.shared.dialogs().pick_recovery_key().await {
                Some(file) => key_in_file(file).await?,
                None => return Ok(None),
            },
        };
        let key = Arc::new(key);
        let targets = self.shared.copy_targets().await;
        let target = (targets.into_iter().find(|t| t.id == target_id)).ok_or_else(|| {
            AppError::NotFound("That copy target is no longer in Settings.".into())
        })?;
        let on = recover::read_target(&target, &key).await?;
        let found = found_copies(&target, &key, &on);
        let mut reading = self.reading.lock().unwrap_or_else(|e| e.into_inner());
        if self.looks.load(Ordering::SeqCst) != look {
            return Err(AppError::InvalidState(
                "Closed, or looked again meanwhile: what this look found is not kept.".into(),
            ));
        }
        *reading = Some(Arc::new(Reading { target, key, on }));
        Ok(Some(found))
    }

    /// *Restore…*: the backup found at `location` into a folder picked in the native dialog
    /// (`None` when it was cancelled) — fetched, checked against its catalog's SHA-256, opened
    /// with the passphrase sealed in it. Nothing in the folder is replaced.
    pub async fn restore_found(
        &self,
        location: &str,
        progress: RecoverSink,
    ) -> AppResult<Option<RestoreSummary>> {
        let look = self.looks.load(Ordering::SeqCst);
        let reading = self.reading()?;
        let chosen = choose_at(&reading.on, location)?.clone();
        let opener = opener(&chosen, None)?;
        let Some(folder) = self.shared.dialogs().pick_folder().await else {
            return Ok(None);
        };
        let stop = Arc::new(AtomicBool::new(false));
        {
            // (Closed, or looked again, while the folder dialog was open: not restored.)
            let _reading = self.reading.lock().unwrap_or_else(|e| e.into_inner());
            if self.looks.load(Ordering::SeqCst) != look {
                return Err(AppError::InvalidState(
                    "Closed, or looked again meanwhile: nothing is restored.".into(),
                ));
            }
            let mut running = self.stop.lock().unwrap_or_else(|e| e.into_inner());
            if running.is_some() {
                return Err(AppError::InvalidState(
                    "A restore from a copy runs already: wait for it, or cancel it.".into(),
                ));
            }
            *running = Some(stop.clone());
        }
        // (Whatever way this ends, the next restore may run.)
        let _slot = RunningRestore(&self.stop);
        let to = folder.clone();
        let restored = tokio::task::spawn_blocking(move || {
            let opened = Opened::open(&reading.target, None)?;
            let mut told = Told::default();
            let tell = &mut |stage| {
                if let Some(shown) = told.worth_telling(stage) {
                    progress(shown);
                }
            };
            let options = kluis_restore::RestoreOptions::default();
            let key = &reading.key;
            restore(
                &opened,
                key,
                &chosen,
                opener.as_ref(),
                &to,
                options,
                &stop,
                tell,
            )
        })
        .await
        .map_err(|e| Error::Io(format!("The restore stopped unexpectedly ({e}).")))?;
        let (restored, notes) = restored?;
        for note in notes {
            tracing::info!(note = ?note, "restore from a copy");
        }
        Ok(Some(RestoreSummary::of(&folder, restored)))
    }

    /// *Cancel*: the running restore stops before its next write or entry; what it wrote
    /// whole stays.
    pub fn cancel_restore(&self) {
        if let Some(stop) = &*self.stop.lock().unwrap_or_else(|e| e.into_inner()) {
            stop.store(true, Ordering::SeqCst);
        }
    }

    /// *Carry on for this office*: this computer carries on for `computer` (its id as found) — its klanten become profiles here (without passwords), their copies enter the
    /// history, this computer keeps the kit (replacing its own only when `replace_kit`) — and
    /// its catalogs are written at once.
    pub async fn carry_on(&self, computer: String, replace_kit: bool) -> AppResult<CarriedOn> {
        let reading = self.reading()?;
        let on = recover::read_target(&reading.target, &reading.key).await?;
        let asked = AdoptAsked {
            computer: Some(computer),
            replace_kit,
            ..AdoptAsked::default()
        };
        let shared = &self.shared;
        let secrets = shared.secrets_for(false);
        let adopted = adopt(
            on,
            &reading.target,
            reading.key.clone(),
            &shared.profiles,
            &shared.history,
            secrets,
            asked,
        )
        .await?;
        let not_written = shared.write_catalogs_now().await;
        Ok(CarriedOn {
            lost: shown(&adopted.lost.name),
            klanten: (adopted.taken.iter())
                .map(|(profile, copies)| KlantTakenOver {
                    name: shown(&profile.name),
                    base_url: shown(&profile.base_url),
                    username: shown(&profile.username),
                    copies: *copies as u64,
                })
                .collect(),
            added: adopted.added as u64,
            notes: adopted.notes,
            not_written,
        })
    }

    /// Leaving the screen: a restore that runs stops, and the key and what it read are
    /// forgotten (a look still under way keeps nothing).
    pub fn close(&self) {
        self.cancel_restore();
        let mut reading = self.reading.lock().unwrap_or_else(|e| e.into_inner());
        self.looks.fetch_add(1, Ordering::SeqCst);
        *reading = None;
    }

    fn reading(&self) -> AppResult<Arc<Reading>> {
        (self
            .reading
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone())
        .ok_or_else(|| {
            AppError::NotFound("Look for the backups on the copy target again first.".into())
        })
    }
}

/// The running restore's place, given back when it ends however it ends.
struct RunningRestore<'a>(&'a Mutex<Option<Arc<AtomicBool>>>);

impl Drop for RunningRestore<'_> {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// The recovery key in the kit's file (kluis-profiles' `recover::key_in_file`), off the async
/// threads.
pub(super) async fn key_in_file(file: PathBuf) -> AppResult<RecoveryKey> {
    let key = tokio::task::spawn_blocking(move || recover::key_in_file(&file))
        .await
        .map_err(|e| Error::Io(format!("Reading the key file stopped unexpectedly ({e}).")))?;
    Ok(key?)
}

/// What the page shows of `on`.
fn found_copies(target: &CopyTarget, key: &RecoveryKey, on: &OnTarget) -> FoundCopies {
    let listing = &on.listing;
    let mut problems: Vec<String> = listing
        .problems
        .iter()
        .take(MOST_PROBLEMS)
        .map(|p| shown(p))
        .collect();
    if listing.problems.len() > MOST_PROBLEMS {
        problems.push(format!(
            "… and {} more (kluis recover list shows them all).",
            listing.problems.len() - MOST_PROBLEMS
        ));
    }
    FoundCopies {
        target: target.name.clone(),
        fingerprint: key.office_key().fingerprint(),
        backups: listing
            .backups
            .iter()
            .map(|b| found_backup(b, on.holds(b)))
            .collect(),
        computers: (listing.catalogs.iter())
            .map(|(pc, _, ms)| FoundComputer {
                id: pc.id.clone(),
                name: shown(&pc.name),
                catalog_ms: *ms,
                carried_on_by: (listing.adopted.iter())
                    .find(|(lost, _, _)| lost == pc)
                    .map(|(_, by, _)| shown(&by.name)),
            })
            .collect(),
        made_from: shown(&recover::made_from(listing)),
        problems,
        other_kit: on.other_kit.clone(),
    }
}

fn found_backup(backup: &Backup, on_target: bool) -> FoundBackup {
    let copy = &backup.copy;
    FoundBackup {
        location: copy.location.clone(),
        klant: backup.klant.as_ref().map(|k| shown(&k.name)),
        computer: backup.pc.as_ref().map(|pc| shown(&pc.name)),
        name: shown(&copy.name),
        bytes: copy.bytes,
        saved_ms: copy.saved_ms.max(0),
        encrypted: match &backup.encrypted {
            _ if !copy.encrypted => FoundEncryption::No,
            Encrypted::Passphrase { .. } => FoundEncryption::Passphrase,
            Encrypted::Recipient { .. } => FoundEncryption::Recipient,
            Encrypted::Unknown | Encrypted::No => FoundEncryption::Unknown,
        },
        locked_until_ms: copy.locked_until_ms,
        restore_test: copy.restore_test.as_ref().map(|t| (t.at_ms, t.passed)),
        proof: match backup.proof {
            Proof::CatalogAndRecord => FoundProof::CatalogAndRecord,
            Proof::Catalog => FoundProof::Catalog,
            Proof::Record => FoundProof::Record,
            Proof::InDoubt => FoundProof::InDoubt,
            Proof::Unverified => FoundProof::Unverified,
        },
        on_target,
    }
}

/// The progress worth sending to the window: each whole percent of a stage, and its end
/// (a gigabyte fetched is thousands of writes).
#[derive(Default)]
struct Told {
    last: Option<(bool, u64)>,
}

impl Told {
    fn worth_telling(&mut self, stage: Stage) -> Option<RecoverProgress> {
        let (restoring, done, total, shown) = match stage {
            Stage::Fetching { done, total } => (
                false,
                done,
                total,
                RecoverProgress::Fetching { done, total },
            ),
            Stage::Restoring { done, total } => (
                true,
                done,
                total,
                RecoverProgress::Restoring { done, total },
            ),
        };
        let percent = (done.saturating_mul(100)).checked_div(total).unwrap_or(100);
        let now = (restoring, percent);
        (self.last != Some(now) || done == total).then(|| {
            self.last = Some(now);
            shown
        })
    }
}
