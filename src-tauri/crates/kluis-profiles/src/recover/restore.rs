//! One backup found on a copy target restored into a folder: the copy chosen
//! ([`choose`]), what opens it ([`opener`]: the passphrase its catalog sealed, or an identity
//! given), and the restore itself ([`restore`]): fetched into an owner-only temporary file,
//! restored only when its bytes are the SHA-256 its catalog or record names, every safety of
//! kluis-restore kept. Progress is told per [`Stage`]; a stop asked for ends it between
//! writes (fetching) or entries (restoring), leaving no half-written file.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kluis_copies::Opened;
use kluis_core::encryption::DecryptKey;
use kluis_core::{Error, Result, Secret};
use kluis_recovery::{layout, sealed, Backup, CopyRecord, Encrypted, Proof, RecoveryKey};
use kluis_restore::{RestoreOptions, Restored};

use super::{OnTarget, MAX_RECORD};

/// How far a recovery restore is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The copy fetched from the target: bytes so far of its length.
    Fetching { done: u64, total: u64 },
    /// Its entries written into the folder: bytes so far of the total.
    Restoring { done: u64, total: u64 },
}

/// The backup of `klant` (its whole name, any case) to restore: the one named `name`, else its
/// newest the target holds. A copy whose size on the target is not its catalog's is refused
/// here already.
pub fn choose<'a>(on: &'a OnTarget, klant: &str, name: Option<&str>) -> Result<&'a Backup> {
    let wanted = klant.trim().to_lowercase();
    let of_klant: Vec<&Backup> = (on.listing.backups.iter())
        .filter(|b| (b.klant.as_ref()).is_some_and(|k| k.name.to_lowercase() == wanted))
        .collect();
    if of_klant.is_empty() {
        let mut there: Vec<&str> = (on.listing.backups.iter())
            .filter_map(|b| b.klant.as_ref().map(|k| k.name.as_str()))
            .collect();
        there.sort_unstable();
        there.dedup();
        let there = match there.is_empty() {
            true => "none of any klant the key opens (see `kluis recover list`)".to_string(),
            false => there.join(", "),
        };
        return Err(Error::Config(format!(
            "The target has no backup of \"{klant}\" (the klant's whole name, as listed): klanten there: {there}."
        )));
    }
    let chosen = match name {
        None => (of_klant.into_iter().find(|b| on.holds(b))).ok_or_else(|| {
            Error::Config(format!(
                "The catalogs name backups of \"{klant}\", but none of them is on the target any more."
            ))
        })?,
        Some(name) => {
            let named = (of_klant.into_iter())
                .find(|b| b.copy.name == name)
                .ok_or_else(|| {
                    Error::Config(format!(
                        "\"{klant}\" has no backup named \"{name}\" on the target."
                    ))
                })?;
            if !on.holds(named) {
                return Err(Error::Config(format!(
                    "The catalog names \"{name}\" of \"{klant}\", but it is not on the target any more: choose another."
                )));
            }
            named
        }
    };
    whole(on, chosen)
}

/// The backup found at `location` (as listed), when the target holds it whole.
pub fn choose_at<'a>(on: &'a OnTarget, location: &str) -> Result<&'a Backup> {
    let found = (on.listing.backups.iter())
        .find(|b| b.copy.location == location)
        .ok_or_else(|| {
            Error::Config(
                "That backup is not among those found on the target: look for the backups again."
                    .into(),
            )
        })?;
    if !on.holds(found) {
        return Err(Error::Config(format!(
            "The catalog names {location:?}, but it is not on the target any more: choose another."
        )));
    }
    if found.proof == Proof::Unverified {
        return Err(Error::Config(format!(
            "Nothing on the target says whose {location:?} is or what it holds: it is not restored by recovery."
        )));
    }
    whole(on, found)
}

/// `chosen`, unless the target holds it at another length than its catalog says.
fn whole<'a>(on: &OnTarget, chosen: &'a Backup) -> Result<&'a Backup> {
    let size = on.sizes[&chosen.copy.location];
    if chosen.proof != Proof::Unverified && size != chosen.copy.bytes {
        return Err(Error::BackupsDamaged(format!(
            "The copy {:?} on the target is {size} bytes, not the {} its catalog says: it was changed, and is not restored. Choose an earlier backup.",
            chosen.copy.location, chosen.copy.bytes
        )));
    }
    Ok(chosen)
}

/// What opens `backup`: none when it is not encrypted; the identity given (a backup
/// encrypted to a recipient); else the passphrase its catalog sealed.
pub fn opener(backup: &Backup, identity: Option<Secret>) -> Result<Option<DecryptKey>> {
    if !backup.copy.encrypted {
        return Ok(None);
    }
    if let Some(identity) = identity {
        return Ok(Some(DecryptKey::Identity(identity)));
    }
    match &backup.encrypted {
        Encrypted::Passphrase { passphrase } => {
            Ok(Some(DecryptKey::Passphrase(Secret::new(passphrase.clone()))))
        }
        Encrypted::Recipient { recipient } => Err(Error::Config(format!(
            "This backup is encrypted to {recipient}: the recovery kit does not open it, only that recipient's identity file does (whoever holds it restores it: kluis recover restore … --identity FILE)."
        ))),
        _ => Err(Error::Config(
            "This backup is encrypted, and its catalog does not say with what: the recovery kit does not open it (whoever holds its identity file restores it: kluis recover restore … --identity FILE).".into(),
        )),
    }
}

/// `backup` fetched from `opened` into a temporary file beside `to`, checked against the
/// SHA-256 its catalog and record name, opened with `opener` and restored into `to`; with
/// what is worth saying on the way (a record not read, or one that disagrees). Blocking.
#[allow(clippy::too_many_arguments)]
pub fn restore(
    opened: &Opened,
    key: &RecoveryKey,
    backup: &Backup,
    opener: Option<&DecryptKey>,
    to: &Path,
    mut options: RestoreOptions,
    stop: &Arc<AtomicBool>,
    progress: &mut (dyn FnMut(Stage) + Send),
) -> Result<(Restored, Vec<String>)> {
    let mut notes = Vec::new();
    let expected = expected_sha256(opened, key, backup, &mut notes)?;
    let scratch = to.parent().filter(|p| p.is_dir());
    let mut fetched = kluis_restore::restore_test::scratch_file(scratch)?;
    let total = backup.copy.bytes;
    let mut watched = Watched {
        into: fetched.as_file_mut(),
        done: 0,
        stop,
        tell: &mut |done| progress(Stage::Fetching { done, total }),
    };
    let got = opened.fetch_object(&backup.copy.location, total, &mut watched);
    if stop.load(Ordering::SeqCst) {
        return Err(Error::Cancelled);
    }
    let (bytes, sha256) = got?;
    if !expected.contains(&sha256) {
        return Err(Error::BackupsDamaged(format!(
            "The copy {:?} on the target is not the backup its catalog and record name ({bytes} bytes, another SHA-256): it was not restored. Choose an earlier backup.",
            backup.copy.location
        )));
    }
    let mut archive = kluis_restore::Backup::open(fetched.path(), opener)?;
    options.stop = Some(stop.clone());
    let tell = &mut |done, total| progress(Stage::Restoring { done, total });
    let restored = kluis_restore::restore(&mut archive, to, &options, tell)?;
    Ok((restored, notes))
}

/// A writer that tells how much went through it and refuses to go on once a stop is asked.
struct Watched<'a> {
    into: &'a mut (dyn Write + Send),
    done: u64,
    stop: &'a AtomicBool,
    tell: &'a mut (dyn FnMut(u64) + Send),
}

impl Write for Watched<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("stopped"));
        }
        let wrote = self.into.write(buf)?;
        self.done += wrote as u64;
        (self.tell)(self.done);
        Ok(wrote)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.into.flush()
    }
}

/// The SHA-256s the copy may have: its catalog's, and its own record's when it has one (they
/// disagree only where one was written after the copy: its bytes then decide, and the
/// difference is said). A copy neither names is not restored.
fn expected_sha256(
    opened: &Opened,
    key: &RecoveryKey,
    backup: &Backup,
    notes: &mut Vec<String>,
) -> Result<Vec<String>> {
    if backup.proof == Proof::Unverified {
        return Err(Error::Config(format!(
            "Nothing on the target says whose {} is or what it holds: it is not restored by recovery (copy it off the target by hand, and `kluis restore` it).",
            backup.copy.location
        )));
    }
    let mut expected = vec![backup.copy.sha256.clone()];
    let not_read = |why: &dyn std::fmt::Display| {
        format!(
            "the record beside {} is not read ({why}); the catalog's SHA-256 is checked.",
            backup.copy.location
        )
    };
    match opened.get(&layout::record(&backup.copy.location), MAX_RECORD) {
        Err(why) => notes.push(not_read(&why)),
        Ok(None) => {}
        Ok(Some(bytes)) => match sealed::open::<CopyRecord>(&bytes, key) {
            Ok(record) if record.copy.sha256 != backup.copy.sha256 => {
                notes.push(format!(
                    "the catalog and the copy's own record name different SHA-256s for {}: restored only if its bytes are one of them.",
                    backup.copy.location
                ));
                expected.push(record.copy.sha256);
            }
            Ok(_) => {}
            Err(why) => notes.push(not_read(&why)),
        },
    }
    Ok(expected)
}
