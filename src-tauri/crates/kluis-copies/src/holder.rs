//! A copy target's copies as a retention rule sees them (kluis-core's `CopyHolder`): each copy
//! looked at where it is and, when it is exactly as made, deleted through what was looked at —
//! a folder's file through its opened folder, an S3 object by its version. A copy its target
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

use crate::s3::Bucket;
use crate::{on_runtime, CopyTarget, Place};

/// The holder of `target`'s copies of `klant`'s backups.
pub fn for_target(
    history: &History,
    target: &CopyTarget,
    klant: &KlantKey,
) -> Result<Box<dyn CopyHolder>> {
    match &target.place {
        Place::Folder { .. } => Ok(Box::new(LocalFiles)),
        Place::S3(place) => Ok(Box::new(S3Copies {
            bucket: Arc::new(Bucket::new(&target.name, place, target.secret.as_ref())?),
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

struct S3Copies {
    bucket: Arc<Bucket>,
    records: HashMap<String, CopyRecord>,
}

impl CopyHolder for S3Copies {
    fn examine(&self, copy: &HistoryEntry) -> Examination {
        let Some(record) = self.records.get(&copy.id) else {
            let check = crate::check::found(
                Finding::Unreadable,
                Some("The history holds no record of this copy.".into()),
            );
            return Examination::found(check);
        };
        let check = match on_runtime(self.bucket.check(record, false)) {
            Ok(check) => check,
            Err(e) => crate::check::found(Finding::Unreadable, Some(e.to_string())),
        };
        if check.finding != Finding::Intact {
            return Examination::found(check);
        }
        let (bucket, location, version) = (
            self.bucket.clone(),
            record.location.clone(),
            record.version.clone(),
        );
        Examination::deletable(check, move || {
            let location = location.unwrap_or_default();
            on_runtime(bucket.delete(&location, version.as_deref()))
                .and_then(|deleted| deleted)
                .map_err(|e| std::io::Error::other(e.to_string()))
        })
    }
}

/// Locks again, for the place's days from now, each made copy of `klant`'s backups on
/// `target` whose lock has less than half of that left, except those in `leaving` (a rule
/// removes them once their lock ends). How many were locked again.
pub fn renew_locks(
    history: &History,
    target: &CopyTarget,
    klant: &KlantKey,
    leaving: &[String],
) -> Result<usize> {
    let Place::S3(place) = &target.place else {
        return Ok(0);
    };
    let Some(lock) = place.lock else {
        return Ok(0);
    };
    let bucket = Bucket::new(&target.name, place, target.secret.as_ref())?;
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
