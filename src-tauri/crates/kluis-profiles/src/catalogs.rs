//! The recovery catalogs (kluis-recovery's documents) written to each copy target after a run
//! of copies: the office key's public half (so a second computer learns it), a record sealed
//! beside each copy this computer made (once: a copy does not change), and this computer's
//! catalog of every klant and copy on the target — a new numbered object, written only when
//! what it says changed (a bucket with default retention keeps every version: a catalog a
//! run would write again unchanged is not written), the newest [`KEEP`] kept.
//!
//! Each is tagged with the kit's vouch key (kept in the keyring), so that one planted by
//! whoever can write to the target is not trusted. What this computer wrote to each target is
//! noted beside the history ([`Written`]): the numbers of its catalogs — the only ones it ever
//! removes, and where its numbering goes on (a planted catalog numbered 999999999999 neither
//! stops it nor has genuine ones removed) — and its records, written again when one is gone or
//! a new kit was made.
//!
//! A catalog or record that cannot be written is said and tried again at the next run; the
//! copies stay made whatever becomes of it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use kluis_copies::{CopyTarget, Opened};
use kluis_core::copies::CopyRecord as Made;
use kluis_core::encryption::EncryptionSetting;
use kluis_core::{Error, History, HistoryEntry, KlantKey, Result, Secret};
use kluis_recovery::catalog::{CATALOG_FORMAT, RECORD_FORMAT};
use kluis_recovery::{
    layout, sealed, Catalog, CopyNote, CopyRecord, Encrypted, Klant, KlantNote, OfficeKey, Pc,
    VouchKey,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::settings::RecoverySetting;
use crate::store::Profile;

/// How many of its catalogs a computer keeps on a target (older ones are removed; a locked
/// one stays until its lock ends).
pub const KEEP: usize = 10;

/// What writing a target's catalog did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogWritten {
    /// The new catalog's number, or none when nothing had changed.
    pub number: Option<u64>,
    /// Records written beside copies that had none.
    pub records: usize,
    /// The fingerprint of another kit the target names (one made since on another computer
    /// of the office): this computer's catalog is written under its own kit, which the new
    /// one does not open, until it joins the new kit.
    pub other_kit: Option<String>,
}

/// How far past this computer's own newest catalog a number found on the target is taken as
/// one of its own (its noted numbers lost): farther, it is someone else's and passed over.
const NUMBERS_AHEAD: u64 = 1_000_000;

/// What the catalogs are written from: the history, the klanten, the kit's public half and
/// its vouch key (none: not in the keyring), and the passphrase of each klant whose backups
/// are encrypted with one.
pub struct CatalogsOf<'a> {
    pub history: &'a History,
    pub profiles: &'a [Profile],
    pub recovery: &'a RecoverySetting,
    pub vouch: Option<&'a VouchKey>,
    pub passphrase: &'a (dyn Fn(&Profile) -> Option<Secret> + Sync),
    /// Where what was last written to each target is kept (beside the history).
    pub state: &'a Path,
}

/// What this computer wrote to each target (by the target's id); see the module's text.
#[derive(Default, Serialize, Deserialize)]
struct Written {
    targets: BTreeMap<String, OnTarget>,
}

#[derive(Default, Serialize, Deserialize)]
struct OnTarget {
    /// The office key (its fingerprint) what follows was written for: a new kit's writes all
    /// again.
    office: String,
    /// What its newest catalog says (without when): unchanged, none is written.
    digest: String,
    /// Its catalogs' numbers, oldest first.
    numbers: Vec<u64>,
    /// Its records, by their places.
    records: BTreeSet<String>,
}

/// Writes the catalogs of `targets` (blocking: a bucket's and a server's requests run on the
/// calling thread's runtime); what each came to, by the target's name.
pub fn write_catalogs(
    of: &CatalogsOf<'_>,
    targets: &[CopyTarget],
) -> Vec<(String, Result<CatalogWritten>)> {
    let each = |why: &dyn Fn() -> Error| {
        targets
            .iter()
            .map(|t| (t.name.clone(), Err(why())))
            .collect()
    };
    let Ok(office) = OfficeKey::parse(&of.recovery.office_key) else {
        return each(&|| {
            Error::Config(
                "The recovery kit's key in the settings is damaged: make a new kit.".into(),
            )
        });
    };
    let Some(vouch) = of.vouch else {
        return each(&|| {
            Error::Config(
                "The recovery kit's vouch key is not in this computer's keyring: make a new kit (kluis recovery-kit).".into(),
            )
        });
    };
    let made = match of.history.made_copies(None) {
        Ok(made) => made,
        Err(e) => {
            let said = e.to_string();
            return each(&|| Error::Io(said.clone()));
        }
    };
    let mut written: Written = std::fs::read(of.state)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let outcomes = (targets.iter())
        .map(|target| {
            let on_target = written.targets.entry(target.id.clone()).or_default();
            let outcome = Opened::open(target, None).and_then(|opened| {
                let keys = (&office, vouch);
                write_one(of, keys, target, &opened, &made, on_target)
            });
            (target.name.clone(), outcome)
        })
        .collect();
    if let Ok(json) = serde_json::to_vec(&written) {
        let _ = kluis_private::files::write_atomic(of.state, &json);
    }
    outcomes
}

fn write_one(
    of: &CatalogsOf<'_>,
    (office, vouch): (&OfficeKey, &VouchKey),
    target: &CopyTarget,
    opened: &Opened,
    made: &[(HistoryEntry, Made)],
    state: &mut OnTarget,
) -> Result<CatalogWritten> {
    let key_text = format!("{}\n{}\n", office.to_text(), office.fingerprint());
    // The office key named on the target is this computer's — unless another computer of the
    // office made a newer kit since this one last wrote here under its own: that one is not
    // written over (the two would take turns), and it is said.
    let new_here = state.office != office.fingerprint();
    let mut other_kit = None;
    // (One that is not an office key at all — damaged, too large, planted — is written over.)
    let theirs = match opened.get(layout::OFFICE_KEY, 4096) {
        Ok(Some(there)) if there == key_text.as_bytes() => Ok(None),
        Ok(Some(there)) => Err(OfficeKey::parse(&String::from_utf8_lossy(&there)).ok()),
        Ok(None) => Ok(Some(false)),
        Err(_) => Err(None),
    };
    match theirs {
        Ok(None) => {}
        Err(Some(other)) if !new_here => other_kit = Some(other.fingerprint()),
        Ok(Some(replace)) => opened.put(layout::OFFICE_KEY, key_text.as_bytes(), replace)?,
        Err(_) => opened.put(layout::OFFICE_KEY, key_text.as_bytes(), true)?,
    }
    if new_here {
        state.office = office.fingerprint();
        state.digest.clear();
        state.records.clear();
    }
    let pc = Pc {
        id: of.recovery.pc_id.clone(),
        name: of.recovery.pc_name.clone(),
    };
    let present: HashSet<String> = opened.list("")?.into_iter().map(|(n, _)| n).collect();
    let profiles: HashMap<KlantKey, &Profile> = of.profiles.iter().map(|p| (p.key(), p)).collect();
    let mut klanten: BTreeMap<String, KlantNote> = BTreeMap::new();
    let mut records = 0;
    for (entry, copy) in made
        .iter()
        .filter(|(_, c)| c.target == target.id && c.holds())
    {
        let (Some(location), Some(note)) = (
            copy.location.as_deref().and_then(|l| opened.relative(l)),
            copy_note(of.history, entry, copy),
        ) else {
            continue;
        };
        let note = CopyNote { location, ..note };
        let profile = profiles.get(&entry.profile).copied();
        let klant = klant_of(&entry.profile, profile);
        // How the klant's backups are encrypted now, whatever this copy's (its own `encrypted`
        // says whether it is): the kit opens its encrypted copies with that.
        let encrypted = encryption_of(profile, note.encrypted, of.passphrase);
        let record_at = layout::record(&note.location);
        // Written once, and again where it is gone — or was put there by someone else first;
        // but the record beside a copy adopted from a lost computer is that computer's, and
        // stays (only where it is gone is one written).
        let ours = state.records.contains(&record_at);
        let adopted = entry.transport == kluis_core::adopted::ADOPTED;
        if !((ours || adopted) && present.contains(&record_at)) {
            let record = CopyRecord {
                kluis_copy_record: RECORD_FORMAT,
                office: office.fingerprint(),
                pc: pc.clone(),
                klant: klant.clone(),
                encrypted: encrypted.clone(),
                copy: note.clone(),
            };
            let sealed = sealed::seal(&record, office, vouch)?;
            opened.put(&record_at, &sealed, present.contains(&record_at))?;
            state.records.insert(record_at);
            records += 1;
        }
        klanten
            .entry(klant.key.clone())
            .or_insert_with(|| KlantNote {
                klant,
                encrypted,
                settings: settings_of(profile),
                copies: Vec::new(),
            })
            .copies
            .push(note);
    }
    let mut catalog = Catalog {
        kluis_catalog: CATALOG_FORMAT,
        office: office.fingerprint(),
        pc: pc.clone(),
        written_ms: kluis_core::clock::now_ms(),
        number: 0,
        klanten: klanten.into_values().collect(),
        adopted: of.recovery.adopted.clone(),
    };
    // What it says, without when and which number: unchanged, it is not written again.
    let digest = {
        let mut said = catalog.clone();
        said.written_ms = 0;
        hex::encode(Sha256::digest(
            serde_json::to_vec(&said).unwrap_or_default(),
        ))
    };
    let newest_there =
        (state.numbers.last()).is_some_and(|n| present.contains(&layout::catalog(&pc.id, *n)));
    if state.digest == digest && newest_there {
        return Ok(CatalogWritten {
            number: None,
            records,
            other_kit,
        });
    }
    catalog.number = next_number(&state.numbers, &pc.id, &present)?;
    let sealed = sealed::seal(&catalog, office, vouch)?;
    opened.put(&layout::catalog(&pc.id, catalog.number), &sealed, false)?;
    state.digest = digest;
    state.numbers.push(catalog.number);
    // Only its own, noted numbers are removed: never one it did not write.
    let stale = state.numbers.len().saturating_sub(KEEP);
    let mut kept = Vec::new();
    for (i, number) in state.numbers.iter().enumerate() {
        // (A locked one is refused by its target: it goes at a later run.)
        if i >= stale || opened.remove(&layout::catalog(&pc.id, *number)).is_err() {
            kept.push(*number);
        }
    }
    state.numbers = kept;
    Ok(CatalogWritten {
        number: Some(catalog.number),
        records,
        other_kit,
    })
}

/// The number of this computer's next catalog: past its own newest and past any found in its
/// folder not farther ahead than [`NUMBERS_AHEAD`] (its own, where its notes were lost), and
/// free on the target.
fn next_number(own: &[u64], pc_id: &str, present: &HashSet<String>) -> Result<u64> {
    let newest_own = own.iter().copied().max().unwrap_or(0);
    let mine = format!("{}/catalogs/{pc_id}/", layout::FOLDER);
    let found = (present.iter())
        .filter(|n| n.starts_with(&mine))
        .filter_map(|n| layout::number_of_catalog(n))
        .filter(|n| *n <= newest_own.saturating_add(NUMBERS_AHEAD))
        .max()
        .unwrap_or(0);
    let mut number = newest_own.max(found) + 1;
    while present.contains(&layout::catalog(pc_id, number)) {
        number += 1;
    }
    match number < layout::CATALOG_NUMBERS {
        true => Ok(number),
        false => Err(Error::Config(format!(
            "This computer's catalogs on the target are numbered up to the limit ({}): remove its folder kluis-recovery/catalogs/{pc_id} there, and the next run starts again.",
            layout::CATALOG_NUMBERS - 1
        ))),
    }
}

/// The copy `copy` of backup `entry` as a catalog has it (its place filled in by the caller).
fn copy_note(history: &History, entry: &HistoryEntry, copy: &Made) -> Option<CopyNote> {
    let test = history.restore_test_of(&entry.id).ok().flatten();
    // The file's name as saved; a backup adopted from a lost computer has no file here: the
    // copy's own name then.
    let saved_as = entry.path.as_deref().or(copy.location.as_deref());
    let name = (saved_as.and_then(|p| p.rsplit(['/', '\\']).next()))
        .filter(|n| !n.is_empty())?
        .to_string();
    Some(CopyNote {
        job_id: entry.id.clone(),
        location: String::new(),
        name,
        bytes: copy.bytes?,
        sha256: copy.sha256.clone()?,
        saved_ms: entry.finished_at_ms.unwrap_or(entry.started_at_ms),
        encrypted: entry.encrypted.is_some(),
        locked_until_ms: copy.locked_until_ms,
        restore_test: test.map(|t| kluis_recovery::catalog::TestNote {
            at_ms: t.at_ms,
            passed: t.passed,
        }),
    })
}

/// Who a history key's backups are of: the saved profile's klant, else the key's own label.
fn klant_of(key: &KlantKey, profile: Option<&Profile>) -> Klant {
    match profile {
        Some(p) => Klant {
            name: p.name.clone(),
            base_url: p.base_url.clone(),
            username: p.username.clone(),
            key: key.as_str().to_string(),
        },
        None => Klant {
            name: key.as_str().to_string(),
            base_url: String::new(),
            username: String::new(),
            key: key.as_str().to_string(),
        },
    }
}

/// How the klant's encrypted backups are encrypted — as its setting is now (the history keeps
/// that a backup is encrypted, not how) — with its passphrase where it is one; `No` only for
/// a copy that is not encrypted of a klant whose backups are not.
fn encryption_of(
    profile: Option<&Profile>,
    copy_encrypted: bool,
    passphrase: &(dyn Fn(&Profile) -> Option<Secret> + Sync),
) -> Encrypted {
    match profile.and_then(|p| Some((p, p.encryption.as_ref()?))) {
        Some((p, EncryptionSetting::Passphrase)) => match passphrase(p) {
            Some(secret) => Encrypted::Passphrase {
                passphrase: secret.expose().to_string(),
            },
            None => Encrypted::Unknown,
        },
        Some((_, EncryptionSetting::Recipient { recipient })) => Encrypted::Recipient {
            recipient: recipient.clone(),
        },
        None if copy_encrypted => Encrypted::Unknown,
        None => Encrypted::No,
    }
}

/// The klant's settings for a computer that carries on for this one: its profile without the
/// monitor's ping address (a capability) — none for a klant backed up with flags.
fn settings_of(profile: Option<&Profile>) -> serde_json::Value {
    match profile {
        Some(p) => {
            let mut p = p.clone();
            p.ping_url = None;
            serde_json::to_value(p).unwrap_or_default()
        }
        None => serde_json::Value::Null,
    }
}
