//! `kluis recover list|restore` (and `adopt`, in crate::adopt): on a new computer, every klant's backups found on a copy
//! target — from the catalogs and records the lost computer (or computers) wrote there, opened
//! with the recovery kit's key (kluis-recovery) — and one restored, checked first against the
//! SHA-256 its catalog or record names and opened with the passphrase sealed in it.
//!
//! Listing reads each computer's newest catalog (older ones only where a newer one does not
//! open) and only the records of copies no catalog names: with catalogs there, one request for
//! the target's listing and one per computer. Restoring
//! reads the chosen copy's own record too, and restores it only when the copy's bytes are what
//! the catalog or record says.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use kluis_copies::Opened;
use kluis_core::encryption::DecryptKey;
use kluis_core::{Error, Result, Secret};
use kluis_recovery::found::{self, Present, Stored};
use kluis_recovery::{layout, sealed, Backup, CopyRecord, Encrypted, Listing, Proof, RecoveryKey};

use crate::args::{Cli, RecoverCommand, RecoverFrom};
use crate::from_args::open_profiles;

/// Largest record read (a record is some hundred bytes).
const MAX_RECORD: u64 = 1024 * 1024;

pub async fn run(cli: &Cli, command: &RecoverCommand) -> Result<()> {
    match command {
        RecoverCommand::List { from, json } => {
            let json = *json;
            let (on_target, _, _) = load(cli, from).await?;
            let listing = &on_target.listing;
            for problem in &listing.problems {
                eprintln!("kluis: {problem}");
            }
            if let Some(hint) = &on_target.other_kit {
                eprintln!("kluis: {hint}");
            }
            for (lost, by, at) in &listing.adopted {
                eprintln!(
                    "kluis: {} carries on for {} since {}: their copies are listed under {}.",
                    by.name,
                    lost.name,
                    date(*at),
                    by.name
                );
            }
            if !json && !listing.backups.is_empty() {
                println!(
                    "{:<24} {:<12} {:<20} {:>10}  BACKUP  (PROOF)",
                    "KLANT", "COMPUTER", "SAVED", "SIZE"
                );
            }
            for backup in &listing.backups {
                let there = on_target.sizes.contains_key(&backup.copy.location);
                say(backup, there, json);
            }
            eprintln!(
                "kluis: {} backups of {} klanten on \"{}\"{}.",
                listing.backups.len(),
                klanten(listing),
                from.target,
                from_what(listing)
            );
            Ok(())
        }
        RecoverCommand::Restore {
            from,
            klant,
            backup,
            to,
            only,
            identity,
            overwrite,
        } => {
            let (on_target, target, key) = load(cli, from).await?;
            if let Some(hint) = &on_target.other_kit {
                eprintln!("kluis: {hint}");
            }
            let chosen = choose(&on_target, klant, backup.as_deref())?.clone();
            eprintln!(
                "kluis: restoring {} ({}, {}{}) into {}.",
                chosen.copy.name,
                date(chosen.copy.saved_ms),
                size_text(chosen.copy.bytes),
                (chosen.pc.as_ref()).map_or(String::new(), |pc| format!(", from {}", pc.name)),
                to.display()
            );
            let opener = opener(&chosen, identity.as_deref())?;
            let folder = to.clone();
            let options = kluis_restore::RestoreOptions {
                only: only.clone(),
                overwrite: *overwrite,
                ..Default::default()
            };
            let restored = tokio::task::spawn_blocking(move || {
                let opened = Opened::open(&target, None)?;
                restore(&opened, &key, &chosen, opener.as_ref(), &folder, options)
            })
            .await
            .map_err(|e| Error::Io(format!("The recovery stopped unexpectedly ({e}).")))??;
            crate::restore::said(&restored, to)
        }
        RecoverCommand::Adopt {
            from,
            computer,
            pc_name,
            replace_kit,
        } => {
            let adopt = crate::adopt::Adopt {
                from,
                computer: computer.as_deref(),
                pc_name: pc_name.clone(),
                replace_kit: *replace_kit,
            };
            crate::adopt::run(cli, adopt).await
        }
    }
}

/// The recovery key: from the file given, else `KLUIS_RECOVERY_KEY` (its text or 24 words).
fn recovery_key(from: &RecoverFrom) -> Result<RecoveryKey> {
    let text = match &from.recovery_key {
        Some(file) => {
            let bytes = read_small(file)?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        None => std::env::var("KLUIS_RECOVERY_KEY").map_err(|_| {
            Error::Config(
                "Give the recovery kit's key: --recovery-key FILE, or KLUIS_RECOVERY_KEY (its AGE-SECRET-KEY-1… line or its 24 words).".into(),
            )
        })?,
    };
    let text = Secret::new(text);
    RecoveryKey::parse(text.expose())
}

/// A small file read whole (a key file is some hundred bytes).
fn read_small(file: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut bytes))
        .map_err(|e| Error::io(format!("read the key file {}", file.display()), e))?;
    Ok(bytes)
}

/// Everything on the target `from` names, read with the kit's key (read once); the target and the key.
pub(crate) async fn load(
    cli: &Cli,
    from: &RecoverFrom,
) -> Result<(OnTarget, kluis_copies::CopyTarget, RecoveryKey)> {
    let key = recovery_key(from)?;
    let targets = open_profiles(cli.profiles_file.as_ref())?
        .settings()
        .copy_targets;
    let target = crate::copies::named_in(&targets, &from.target)?;
    let target = crate::copies::with_secrets(vec![target]).await?.remove(0);
    let reading = target.clone();
    let (listing, key) = tokio::task::spawn_blocking(move || {
        let opened = Opened::open(&reading, None)?;
        read_listing(&opened, &key).map(|on| (on, key))
    })
    .await
    .map_err(|e| {
        Error::Io(format!(
            "Reading the copy target stopped unexpectedly ({e})."
        ))
    })??;
    Ok((listing, target, key))
}

/// What recovery read on a target: its listing, and the size of every object there; and when
/// no catalog opened with the key given but one of another key is there, what to do.
pub struct OnTarget {
    pub listing: Listing,
    pub sizes: HashMap<String, u64>,
    pub other_kit: Option<String>,
}

/// The listing of `opened` (see the module's text). An object that cannot be read, or is not
/// what it should be, is said in the listing's problems and left out: one planted object does
/// not stop the recovery of the rest. Only documents that are used are kept in memory.
pub fn read_listing(opened: &Opened, key: &RecoveryKey) -> Result<OnTarget> {
    let objects = opened.list("")?;
    let mut listing = Listing::default();
    let chosen = found::newest_catalogs(
        objects.iter().map(|(location, _)| location.as_str()),
        |location| (opened.get(location, sealed::MAX_SEALED)).map_err(|e| e.to_string()),
        key,
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
    let mut records = HashMap::new();
    for (location, read) in wanted.iter().zip(fetch_all(opened, &wanted)) {
        let bytes = match read {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue, // (gone since it was listed)
            Err(e) => {
                listing
                    .problems
                    .push(format!("{location} is not read: {e}"));
                continue;
            }
        };
        let stored = Stored {
            location: (*location).clone(),
            bytes,
        };
        match found::record_in(&stored, key) {
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

/// How many records are read at once: each is a round trip to the target, and ten thousand
/// of them one after another (every catalog gone) took minutes on S3 and SFTP.
const RECORDS_AT_ONCE: usize = 16;

/// One object read: its bytes, none when it is gone, or why it could not be read.
type Read = Result<Option<Vec<u8>>>;

/// The records at `locations` read [`RECORDS_AT_ONCE`] at a time, in their order; blocking
/// (the threads run on this thread's runtime, as the target's requests need).
fn fetch_all(opened: &Opened, locations: &[&String]) -> Vec<Read> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let runtime = tokio::runtime::Handle::try_current().ok();
    let next = AtomicUsize::new(0);
    let read: Vec<Mutex<Option<Read>>> = locations.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..RECORDS_AT_ONCE.min(locations.len()) {
            scope.spawn(|| {
                let _on_runtime = runtime.as_ref().map(|r| r.enter());
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(location) = locations.get(i) else {
                        break;
                    };
                    let got = opened.get(location, MAX_RECORD);
                    *read[i].lock().unwrap() = Some(got);
                }
            });
        }
    });
    (read.into_iter())
        .map(|slot| {
            let got = slot.into_inner().unwrap_or_else(|e| e.into_inner());
            got.unwrap_or_else(|| Err(Error::Io("A record was not read.".into())))
        })
        .collect()
}

/// The klanten the listing names.
fn klanten(listing: &Listing) -> usize {
    (listing.backups.iter())
        .filter_map(|b| b.klant.as_ref().map(|k| k.key.clone()))
        .collect::<std::collections::HashSet<_>>()
        .len()
}

/// What the listing was made from, in words.
fn from_what(listing: &Listing) -> String {
    match listing.catalogs.len() {
        0 => ", rebuilt from the copies' own records (no catalog could be read)".into(),
        _ => {
            let each: Vec<String> = (listing.catalogs.iter())
                .map(|(pc, number, ms)| format!("{}'s catalog {number} of {}", pc.name, date(*ms)))
                .collect();
            format!(", from {}", each.join(", "))
        }
    }
}

fn date(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// `bytes` for a person, in powers of 1000 as file managers show them (`1.40 MB`).
fn size_text(bytes: u64) -> String {
    indicatif::DecimalBytes(bytes).to_string()
}

/// One backup, as a line of words or a JSON object; `there`: whether the target holds it.
fn say(backup: &Backup, there: bool, json: bool) {
    let klant = backup.klant.as_ref().map(|k| k.name.as_str());
    let pc = backup.pc.as_ref().map(|p| p.name.as_str());
    let encrypted = match &backup.encrypted {
        _ if !backup.copy.encrypted => "no",
        Encrypted::Passphrase { .. } => "passphrase",
        Encrypted::Recipient { .. } => "recipient",
        Encrypted::Unknown | Encrypted::No => "unknown",
    };
    let proof = match backup.proof {
        Proof::CatalogAndRecord => "catalog_and_record",
        Proof::Catalog => "catalog",
        Proof::Record => "record",
        Proof::InDoubt => "in_doubt",
        Proof::Unverified => "unverified",
    };
    let copy = &backup.copy;
    if json {
        let line = serde_json::json!({
            "klant": klant, "pc": pc, "name": copy.name, "bytes": copy.bytes,
            "sha256": (!copy.sha256.is_empty()).then_some(&copy.sha256),
            "saved_at": (copy.saved_ms > 0).then(|| date(copy.saved_ms)),
            "encrypted": encrypted, "locked_until": copy.locked_until_ms.map(date),
            "restore_test": copy.restore_test.as_ref().map(|t| serde_json::json!({"at": date(t.at_ms), "passed": t.passed})),
            "proof": proof, "location": copy.location, "on_target": there,
        });
        println!("{line}");
        return;
    }
    let saved = match copy.saved_ms {
        0 => "?".to_string(),
        ms => date(ms),
    };
    println!(
        "{:<24} {:<12} {saved:<20} {:>10}  {}  ({proof}{}{})",
        klant.unwrap_or("(unknown)"),
        pc.unwrap_or("-"),
        size_text(copy.bytes),
        copy.name,
        if encrypted == "no" {
            String::new()
        } else {
            format!(", encrypted: {encrypted}")
        },
        if there { "" } else { ", NOT ON THE TARGET" }
    );
}

/// The backup of `klant` to restore: the one named `name`, else its newest the target holds.
/// A copy whose size on the target is not its catalog's is refused here already.
fn choose<'a>(on: &'a OnTarget, klant: &str, name: Option<&str>) -> Result<&'a Backup> {
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
    let there = |b: &&Backup| on.sizes.contains_key(&b.copy.location);
    let chosen = match name {
        None => of_klant.into_iter().find(there).ok_or_else(|| {
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
            if !there(&named) {
                return Err(Error::Config(format!(
                    "The catalog names \"{name}\" of \"{klant}\", but it is not on the target any more: choose another (kluis recover list)."
                )));
            }
            named
        }
    };
    let size = on.sizes[&chosen.copy.location];
    if chosen.proof != Proof::Unverified && size != chosen.copy.bytes {
        return Err(Error::BackupsDamaged(format!(
            "The copy {} on the target is {size} bytes, not the {} its catalog says: it was changed, and is not restored. Try an earlier backup (--backup NAME).",
            chosen.copy.location, chosen.copy.bytes
        )));
    }
    Ok(chosen)
}

/// What opens `backup`: none when it is not encrypted; the passphrase its catalog sealed;
/// the identity given for a backup encrypted to a recipient.
fn opener(backup: &Backup, identity: Option<&Path>) -> Result<Option<DecryptKey>> {
    if !backup.copy.encrypted {
        return Ok(None);
    }
    if let Some(file) = identity {
        let text = String::from_utf8_lossy(&read_small(file)?).into_owned();
        return Ok(Some(DecryptKey::Identity(Secret::new(text))));
    }
    match &backup.encrypted {
        Encrypted::Passphrase { passphrase } => {
            Ok(Some(DecryptKey::Passphrase(Secret::new(passphrase.clone()))))
        }
        Encrypted::Recipient { recipient } => Err(Error::Config(format!(
            "This backup is encrypted to {recipient}: give its identity file (--identity FILE); the recovery kit does not open it."
        ))),
        _ => Err(Error::Config(
            "This backup is encrypted, and its catalog does not say with what: give its identity file (--identity FILE).".into(),
        )),
    }
}

/// `backup` fetched from `opened` into a temporary file beside `to`, checked against the
/// SHA-256 its catalog and record name, opened with `opener` and restored into `to`.
fn restore(
    opened: &Opened,
    key: &RecoveryKey,
    backup: &Backup,
    opener: Option<&DecryptKey>,
    to: &Path,
    options: kluis_restore::RestoreOptions,
) -> Result<kluis_restore::Restored> {
    let expected = expected_sha256(opened, key, backup)?;
    let scratch = to.parent().filter(|p| p.is_dir());
    let mut fetched = kluis_restore::restore_test::scratch_file(scratch)?;
    let most = backup.copy.bytes;
    let (bytes, sha256) =
        opened.fetch_object(&backup.copy.location, most, fetched.as_file_mut())?;
    if !expected.contains(&sha256) {
        return Err(Error::BackupsDamaged(format!(
            "The copy {} on the target is not the backup its catalog and record name ({bytes} bytes, another SHA-256): it was not restored. Try an earlier backup (--backup NAME).",
            backup.copy.location
        )));
    }
    let mut archive = kluis_restore::Backup::open(fetched.path(), opener)?;
    kluis_restore::restore(&mut archive, to, &options, &mut |_, _| {})
}

/// The SHA-256s the copy may have: its catalog's, and its own record's when it has one (they
/// disagree only where one was written after the copy: its bytes then decide, and the
/// difference is said). A copy neither names is not restored.
fn expected_sha256(opened: &Opened, key: &RecoveryKey, backup: &Backup) -> Result<Vec<String>> {
    if backup.proof == Proof::Unverified {
        return Err(Error::Config(format!(
            "Nothing on the target says whose {} is or what it holds: it is not restored by recovery (copy it off the target by hand, and `kluis restore` it).",
            backup.copy.location
        )));
    }
    let mut expected = vec![backup.copy.sha256.clone()];
    let record = match opened.get(&layout::record(&backup.copy.location), MAX_RECORD) {
        Ok(record) => record,
        Err(why) => {
            eprintln!("kluis: the record beside {} is not read ({why}); the catalog's SHA-256 is checked.", backup.copy.location);
            None
        }
    };
    if let Some(bytes) = record {
        match sealed::open::<CopyRecord>(&bytes, key) {
            Ok(record) if record.copy.sha256 != backup.copy.sha256 => {
                eprintln!(
                    "kluis: the catalog and the copy's own record name different SHA-256s for {}: restored only if its bytes are one of them.",
                    backup.copy.location
                );
                expected.push(record.copy.sha256);
            }
            Ok(_) => {}
            Err(why) => eprintln!(
                "kluis: the record beside {} is not read ({why}); the catalog's SHA-256 is checked.",
                backup.copy.location
            ),
        }
    }
    Ok(expected)
}
