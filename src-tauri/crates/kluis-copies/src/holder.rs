//! A copy target's copies as a retention rule sees them (kluis-core's `CopyHolder`): each copy
//! looked at where it is and, when it is exactly as made, deleted through what was looked at —
//! a folder's file through its opened folder, an S3 object by its version, an SFTP file by
//! its path. A copy its target
//! keeps locked is never asked to be deleted (kluis-core leaves it until the lock has ended).
//!
//! [`renew_locks`]: a copy a rule keeps (or every copy, on a target without a rule) stays
//! locked: when less than half of its lock is left, it is locked again for the place's days.

use std::collections::HashMap;
use std::sync::Arc;

use kluis_core::copies::CopyRecord;
use kluis_core::retention::{CopyHolder, Examination, LocalFiles};
use kluis_core::verify::Finding;
use kluis_core::{History, HistoryEntry, KlantKey, Result};

use crate::{on_runtime, CopyTarget, Opened, Place};

/// The holder of `target`'s copies of `klant`'s backups, reached through `opened`.
pub fn for_target(
    history: &History,
    target: &CopyTarget,
    opened: &Arc<Opened>,
    klant: &KlantKey,
) -> Result<Box<dyn CopyHolder>> {
    match opened.as_ref() {
        Opened::Folder { .. } => Ok(Box::new(LocalFiles)),
        Opened::Bucket(_) | Opened::Sftp(_) => Ok(Box::new(RemoteCopies {
            opened: opened.clone(),
            records: records_on(history, target, Some(klant))?,
        })),
    }
}

/// Each made copy on `target` (of `klant`'s backups, when given), by backup id.
fn records_on(
    history: &History,
    target: &CopyTarget,
    klant: Option<&KlantKey>,
) -> Result<HashMap<String, CopyRecord>> {
    Ok((history.made_copies(klant)?.into_iter())
        .filter(|(_, record)| record.target == target.id)
        .map(|(entry, record)| (entry.id, record))
        .collect())
}

/// Copies on a bucket or server, known by what the history recorded of them.
struct RemoteCopies {
    opened: Arc<Opened>,
    records: HashMap<String, CopyRecord>,
}

impl CopyHolder for RemoteCopies {
    fn examine(&self, copy: &HistoryEntry) -> Examination {
        let Some(record) = self.records.get(&copy.id) else {
            let check = crate::checked::found(
                Finding::Unreadable,
                Some("The history holds no record of this copy.".into()),
            );
            return Examination::found(check);
        };
        let check = self.opened.check(record, false);
        if check.finding != Finding::Intact {
            return Examination::found(check);
        }
        let (opened, record) = (self.opened.clone(), record.clone());
        Examination::deletable(check, move || {
            (opened.delete(&record)).map_err(|e| std::io::Error::other(e.to_string()))
        })
    }
}

/// Locks again, for the place's days from now, each made copy of `klant`'s backups on
/// `target` whose lock has less than half of that left, except those in `leaving` (a rule
/// removes them once their lock ends). How many were locked again.
pub fn renew_locks(
    history: &History,
    target: &CopyTarget,
    opened: &Opened,
    klant: &KlantKey,
    leaving: &[String],
) -> Result<usize> {
    let (Place::S3(place), Opened::Bucket(bucket)) = (&target.place, opened) else {
        return Ok(0);
    };
    let Some(lock) = place.lock else {
        return Ok(0);
    };
    let now = kluis_core::clock::now_ms();
    let days_ms = i64::from(lock.days) * 86_400_000;
    let mut renewed = 0;
    for (id, record) in records_on(history, target, Some(klant))? {
        let left = record.locked_until_ms.unwrap_or(0) - now;
        if leaving.contains(&id) || left >= days_ms / 2 {
            continue;
        }
        let Some(location) = &record.location else {
            continue;
        };
        let until = now + days_ms;
        on_runtime(bucket.lock_until(location, record.version.as_deref(), until))??;
        history.copy_lock_renewed(&id, &target.id, until)?;
        renewed += 1;
    }
    Ok(renewed)
}
