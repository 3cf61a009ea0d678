//! Recovery on a new computer, for the app and `kluis recover` alike: every klant's backups
//! found on a copy target — from the catalogs and records the lost computer (or computers)
//! wrote there, opened with the recovery kit's key (kluis-recovery) — one restored
//! ([`restore`]: checked first against the SHA-256 its catalog or record names, opened with
//! the passphrase sealed in it), and this computer made to carry on for the lost one
//! ([`adopt`]).
//!
//! Listing ([`read_listing`]) reads each computer's newest catalog (older ones only where a
//! newer one does not open) and only the records of copies no catalog names: with catalogs
//! there, one request for the target's listing and one per computer. What the front ends
//! print or show comes back as words ([`OnTarget::other_kit`], the listing's problems, the
//! notes of a restore or adoption): nothing here prints.

pub mod adopt;
pub mod restore;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kluis_copies::{CopyTarget, Opened};
use kluis_core::{Error, Result};
use kluis_recovery::found::{self, Present, Stored};
use kluis_recovery::{layout, sealed, Backup, Listing, RecoveryKey};

/// Largest record read (a record is some hundred bytes; thousands of planted large ones must
/// not fill the memory).
pub(crate) const MAX_RECORD: u64 = 64 * 1024;

/// What recovery read on a target: its listing, and the size of every object there; and when
/// no catalog opened with the key given but one of another key is there, what to do.
pub struct OnTarget {
    pub listing: Listing,
    pub sizes: HashMap<String, u64>,
    pub other_kit: Option<String>,
}

impl OnTarget {
    /// Whether the target holds `backup`'s copy (a catalog may name one removed since).
    pub fn holds(&self, backup: &Backup) -> bool {
        self.sizes.contains_key(&backup.copy.location)
    }

    /// The klanten the listing names.
    pub fn klanten(&self) -> usize {
        (self.listing.backups.iter())
            .filter_map(|b| b.klant.as_ref().map(|k| k.key.as_str()))
            .collect::<HashSet<_>>()
            .len()
    }
}

/// Everything on `target` (its secret given) that `key` opens, read once, off the async
/// threads (an SFTP server's requests block on a runtime of their own).
pub async fn read_target(target: &CopyTarget, key: &Arc<RecoveryKey>) -> Result<OnTarget> {
    read_target_before(target, key, None).await
}

/// [`read_target`], each computer's newest catalog written before `before_ms` (when given)
/// taken instead of its newest: going back past a catalog that is not trusted.
pub async fn read_target_before(
    target: &CopyTarget,
    key: &Arc<RecoveryKey>,
    before_ms: Option<i64>,
) -> Result<OnTarget> {
    let (target, key) = (target.clone(), key.clone());
    tokio::task::spawn_blocking(move || {
        read_listing(&Opened::open(&target, None)?, &key, before_ms)
    })
    .await
    .map_err(|e| {
        Error::Io(format!(
            "Reading the copy target stopped unexpectedly ({e})."
        ))
    })?
}

/// The listing of `opened` (see the module's text). An object that cannot be read, or is not
/// what it should be, is said in the listing's problems and left out: one planted object does
/// not stop the recovery of the rest. Only documents that are used are kept in memory.
pub fn read_listing(
    opened: &Opened,
    key: &RecoveryKey,
    before_ms: Option<i64>,
) -> Result<OnTarget> {
    let objects = opened.list("")?;
    let mut listing = Listing::default();
    let chosen = found::newest_catalogs(
        objects.iter().map(|(location, _)| location.as_str()),
        |location| (opened.get(location, sealed::MAX_SEALED)).map_err(|e| e.to_string()),
        key,
        before_ms,
        &mut listing,
    );
    // The records of copies no catalog names.
    let named: HashSet<&str> = (chosen.iter())
        .flat_map(|c| c.klanten.iter().flat_map(|k| k.copies.iter()))
        .map(|c| c.location.as_str())
        .collect();
    let wanted: Vec<&String> = (objects.iter())
        .map(|(location, _)| location)
        .filter(|location| {
            layout::copy_of_record(location).is_some_and(|copy| !named.contains(copy.as_str()))
        })
        .collect();
    // Each record opened as it is read, on the thread that read it: only what it says is kept.
    let open = |location: &String, read: Result<Option<Vec<u8>>>| -> Option<Opened1> {
        let bytes = match read {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return None, // (gone since it was listed)
            Err(e) => return Some(Err(Some(format!("{location} is not read: {e}")))),
        };
        let stored = Stored {
            location: location.clone(),
            bytes,
        };
        Some(found::record_in(&stored, key))
    };
    let mut records = HashMap::new();
    for opened_record in fetch_all(opened, &wanted, open).into_iter().flatten() {
        match opened_record {
            Ok((copy, record)) => {
                records.insert(copy, record);
            }
            Err(None) => listing.met_other_key(),
            Err(Some(why)) => listing.problems.push(why),
        }
    }
    let present = (objects.iter())
        .map(|(location, bytes)| Present {
            location: location.clone(),
            bytes: *bytes,
        })
        .collect();
    let listing = found::list(chosen, records, present, listing);
    let other_kit = (listing.met_other_key_yet() && listing.catalogs.is_empty()).then(|| {
        let theirs = (opened.get(layout::OFFICE_KEY, 4096).ok().flatten())
            .and_then(|text| kluis_recovery::OfficeKey::parse(&String::from_utf8_lossy(&text)).ok())
            .map_or(String::new(), |office| {
                format!(" The target's {} names {}:", layout::OFFICE_KEY, office.fingerprint())
            });
        format!(
            "No catalog here opens with the key given (its office key fingerprint is {}).{theirs} use the recovery kit whose page shows that fingerprint (a newer or older kit of this office).",
            key.office_key().fingerprint()
        )
    });
    Ok(OnTarget {
        listing,
        sizes: objects.into_iter().collect(),
        other_kit,
    })
}

/// The recovery key in `file` — the key file `recovery-kit --key-file` wrote, or the kit's page
/// (its `AGE-SECRET-KEY-1…` line or its 24 words are found in it) — read up to 64 KiB.
/// Blocking.
pub fn key_in_file(file: &std::path::Path) -> Result<RecoveryKey> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut bytes))
        .map_err(|e| Error::io(format!("read the key file {}", file.display()), e))?;
    let text = kluis_core::Secret::new(String::from_utf8_lossy(&bytes).into_owned());
    RecoveryKey::parse(text.expose())
}

/// What the listing was made from, in words: each computer's catalog and its date, or that
/// it was rebuilt from the copies' own records.
pub fn made_from(listing: &Listing) -> String {
    match listing.catalogs.len() {
        0 => "rebuilt from the copies' own records (no catalog could be read)".into(),
        _ => {
            let each: Vec<String> = (listing.catalogs.iter())
                .map(|(pc, number, ms)| format!("{}'s catalog {number} of {}", pc.name, date(*ms)))
                .collect();
            format!("from {}", each.join(", "))
        }
    }
}

/// A moment as recovery says it (UTC: the lost computer's zone is not known here).
pub fn date(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// `text` as it may be shown: without control characters, nor the invisible ones that turn
/// text around or hide in it (a name in a catalog or on the target cannot move the cursor over
/// what the user is asked to check, nor pass for another name).
pub fn shown(text: &str) -> String {
    let invisible = |c: &char| matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{061C}');
    text.chars()
        .filter(|c| !c.is_control() && !invisible(c))
        .collect()
}

/// How many records are read at once: each is a round trip to the target, and ten thousand
/// of them one after another (every catalog gone) took minutes on S3 and SFTP.
const RECORDS_AT_ONCE: usize = 16;

/// A record opened: the copy it is beside and what it says; else why not (none: sealed to
/// another key).
type Opened1 = std::result::Result<(String, kluis_recovery::CopyRecord), Option<String>>;

/// The records at `locations` read [`RECORDS_AT_ONCE`] at a time and each given to `open` on
/// the thread that read it, in their order; blocking (the threads run on this thread's
/// runtime, as the target's requests need).
fn fetch_all<T: Send>(
    opened: &Opened,
    locations: &[&String],
    open: impl Fn(&String, Result<Option<Vec<u8>>>) -> T + Sync,
) -> Vec<T> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let runtime = tokio::runtime::Handle::try_current().ok();
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<T>>> = locations.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..RECORDS_AT_ONCE.min(locations.len()) {
            scope.spawn(|| {
                let _on_runtime = runtime.as_ref().map(|r| r.enter());
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(location) = locations.get(i) else {
                        break;
                    };
                    let got = open(location, opened.get(location, MAX_RECORD));
                    *done[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(got);
                }
            });
        }
    });
    (done.into_iter())
        .filter_map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}
