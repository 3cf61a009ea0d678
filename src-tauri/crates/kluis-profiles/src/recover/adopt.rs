//! This computer carries on for a lost one, from its catalog on a copy target and the
//! recovery kit (`kluis recover adopt`, the app's *Carry on for this office*).
//!
//! - **Its klanten** become profiles here, with the settings the lost computer kept (plan,
//!   retention, tags, encryption) and its id, so that their history goes on under the same key;
//!   never a password or api key (the catalog has none: they are given before the next
//!   backup). A klant already here by the same service and username keeps its own settings;
//!   one by the same name for another service is left, said.
//! - **Their backups' copies** on the target go into this computer's history
//!   (kluis-core's `adopted`): the dashboard and the target's rule go on where they stopped, and
//!   nothing is copied twice. Only a copy its catalog or record proves and the target holds at
//!   the length they name is taken.
//! - **The kit**: this computer keeps the office key and the kit's vouch key from now on, writes
//!   its catalogs under it, and names the lost computer in them as adopted. The caller writes
//!   the catalogs afterwards (as after a backup's copies).
//!
//! Running it again adds only what is new. Everything worth saying comes back in
//! [`Adopted::notes`], in order.

use std::collections::HashSet;
use std::sync::Arc;

use kluis_copies::{CopyTarget, Opened};
use kluis_core::adopted::{Adopted as Recorded, AdoptedCopy};
use kluis_core::encryption::EncryptionSetting;
use kluis_core::{Error, History, Result};
use kluis_recovery::{layout, Adoption, Encrypted, KlantOf, Pc, Proof, RecoveryKey};

use super::{shown, OnTarget};
use crate::secrets::off_thread;
use crate::settings::RecoverySetting;
use crate::{Profile, ProfileError, ProfileStore, SecretKind, SecretStore};

/// What carrying on is told.
#[derive(Debug, Clone, Default)]
pub struct AdoptAsked {
    /// The lost computer, by its name (needed when the target holds several).
    pub computer: Option<String>,
    /// This computer's name in its catalogs (else the one it has, or its host name).
    pub pc_name: Option<String>,
    /// Whether the kit given may replace another this computer keeps.
    pub replace_kit: bool,
}

/// What carrying on did.
#[derive(Debug, Clone)]
pub struct Adopted {
    /// The computer carried on for.
    pub lost: Pc,
    /// Each klant taken over (made now, or here already), with its copies now in the history.
    pub taken: Vec<(Profile, usize)>,
    /// Copies added to this computer's history by this run.
    pub added: usize,
    /// The kit's fingerprint, under which this computer now writes its catalogs.
    pub fingerprint: String,
    /// What is worth saying: a klant or copy not taken and why, a setting left out, that the
    /// lost computer still writes.
    pub notes: Vec<String>,
}

/// Carries on for the lost computer `asked` names (or the only other one there) from what
/// `on` read on `target` with `key` (see the module's text).
pub async fn adopt(
    on: OnTarget,
    target: &CopyTarget,
    key: Arc<RecoveryKey>,
    profiles: &Arc<ProfileStore>,
    history: &History,
    secrets: Arc<dyn SecretStore>,
    asked: AdoptAsked,
) -> Result<Adopted> {
    let before = profiles.settings().recovery;
    let given = key.office_key().fingerprint();
    if let Some(kept) = before.as_ref().filter(|b| b.fingerprint != given) {
        if !asked.replace_kit {
            return Err(Error::Config(format!(
                "This computer keeps another recovery kit ({}) than the one given ({given}): carrying on makes the given kit this computer's, and the other then opens nothing it writes. Allow the given kit to replace it (in the app: tick \"replace it with this one\"; on the command line: --replace-kit).",
                kept.fingerprint
            )));
        }
    }
    let lost = lost_computer(&on, asked.computer.as_deref(), before.as_ref())?;
    let mut notes = Vec::new();
    let last = (on.listing.catalogs.iter())
        .filter(|(pc, _, _)| *pc == lost)
        .map(|(_, _, ms)| *ms)
        .max();
    let now = kluis_core::clock::now_ms();
    if let Some(ms) = last.filter(|ms| now - ms < 24 * 3_600_000) {
        notes.push(format!(
            "{} wrote its last catalog {} minutes ago. If it still runs, stop its backups: both computers would back up these klanten.",
            shown(&lost.name),
            (now - ms).max(0) / 60_000
        ));
    }

    let targets_here = profiles.settings().copy_targets;
    let mut taken = Vec::new();
    for klant in on.listing.klanten.iter().filter(|k| k.pc == lost) {
        match take_klant(profiles, klant, &targets_here) {
            Ok(profile) => {
                if profile.created {
                    keep_passphrase(&secrets, klant, &profile.profile, &mut notes).await?;
                }
                for note in &profile.said {
                    notes.push(format!("\"{}\": {note}", shown(&profile.profile.name)));
                }
                taken.push((klant.klant.key.clone(), profile.profile));
            }
            Err(why) => notes.push(format!(
                "\"{}\" is not taken over: {why}",
                shown(&klant.klant.name)
            )),
        }
    }

    // (Opening an SFTP server blocks on its own runtime: off this one.)
    let copies = {
        let (lost, taken, target) = (lost.clone(), taken.clone(), target.clone());
        tokio::task::spawn_blocking(move || copies_of(&on, &lost, &taken, &target))
            .await
            .map_err(|e| {
                Error::Io(format!(
                    "Reading the copy target stopped unexpectedly ({e})."
                ))
            })??
    };
    let (copies, left) = copies;
    notes.extend(left);
    let mut added = 0;
    for copy in &copies {
        match history.adopt_copy(copy)? {
            Recorded::New => added += 1,
            Recorded::Known => {}
            Recorded::Refused => notes.push(format!(
                "{} is not taken over: its backup's id is another backup's here.",
                shown(&copy.location)
            )),
        }
    }

    keep_kit(
        profiles.clone(),
        secrets,
        key,
        before,
        asked.pc_name,
        lost.clone(),
    )
    .await?;
    let taken = (taken.into_iter())
        .map(|(_, profile)| {
            let copies = copies.iter().filter(|c| c.klant == profile.key()).count();
            (profile, copies)
        })
        .collect();
    Ok(Adopted {
        lost,
        taken,
        added,
        fingerprint: given,
        notes,
    })
}

/// The earliest date a backup can have (2000-01-01): an older one is not a backup Kluis made.
const EARLIEST_MS: i64 = 946_684_800_000;
/// How far ahead of this computer's clock a backup's date may be (clocks differ a little).
const CLOCK_SKEW_MS: i64 = 10 * 60 * 1000;

/// The computer to carry on for: the one named, else the only one (not this one) whose
/// catalog is on the target.
fn lost_computer(on: &OnTarget, named: Option<&str>, here: Option<&RecoverySetting>) -> Result<Pc> {
    // (Not this computer, nor one another computer carries on for already: this one may
    // carry on again, on another target or for what is new.)
    let carried_on = |pc: &Pc| {
        (on.listing.adopted.iter())
            .any(|(lost, by, _)| lost == pc && here.is_none_or(|h| h.pc_id != by.id))
    };
    let others: Vec<&Pc> = (on.listing.catalogs.iter())
        .map(|(pc, _, _)| pc)
        .filter(|pc| here.is_none_or(|h| h.pc_id != pc.id))
        .collect();
    let names = || {
        let names: Vec<String> = others.iter().map(|pc| shown(&pc.name)).collect();
        names.join(", ")
    };
    match named {
        // By its id (the app), else by its name (one of two of the same name is not guessed).
        Some(name) => (others.iter())
            .find(|pc| pc.id == name)
            .or_else(|| {
                let named: Vec<&&Pc> = (others.iter())
                    .filter(|pc| pc.name.eq_ignore_ascii_case(name.trim()))
                    .collect();
                (named.len() == 1).then(|| named[0])
            })
            .map(|pc| (*pc).clone())
            .ok_or_else(|| {
                Error::Config(format!(
                    "No catalog of a computer named \"{name}\" opens here (computers there: {}).",
                    names()
                ))
            }),
        None => match (others.iter().copied())
            .filter(|pc| !carried_on(pc))
            .collect::<Vec<_>>()
            .as_slice()
        {
            [one] => Ok((*one).clone()),
            [] => Err(Error::Config(
                "No catalog of another computer opens here with this kit: there is nothing to carry on for (see `kluis recover list`).".into(),
            )),
            _ => Err(Error::Config(format!(
                "The target holds the catalogs of several computers ({}): name the lost one with --computer NAME.",
                names()
            ))),
        },
    }
}

/// A klant taken over: its profile here, whether this run made it, and what was left out.
struct Taken {
    profile: Profile,
    created: bool,
    said: Vec<String>,
}

/// The profile `klant` becomes here (saved), or the one here that is it already (same service
/// and username: its own settings kept).
fn take_klant(
    profiles: &ProfileStore,
    klant: &KlantOf,
    targets_here: &[kluis_copies::CopyTarget],
) -> std::result::Result<Taken, String> {
    let old: Profile = serde_json::from_value(klant.settings.clone())
        .map_err(|_| "it was backed up without a saved profile there (its backups stay listed by `kluis recover list`).".to_string())?;
    let (name, base_url, username) = (
        &klant.klant.name,
        &klant.klant.base_url,
        &klant.klant.username,
    );
    let same_service =
        |p: &Profile| p.base_url == *base_url && p.username.eq_ignore_ascii_case(username);
    let here = profiles.list();
    if let Some(found) = (here.iter()).find(|p| same_service(p) || p.id == old.id) {
        if !same_service(found) {
            return Err(format!(
                "its id is \"{}\"'s here, a klant of another service or username.",
                shown(&found.name)
            ));
        }
        let mut said = Vec::new();
        if !found.name.eq_ignore_ascii_case(name) {
            said.push(format!(
                "it is here already as \"{}\": that klant keeps its own settings.",
                shown(&found.name)
            ));
        }
        return Ok(Taken {
            profile: found.clone(),
            created: false,
            said,
        });
    }
    if here.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
        return Err("a klant of that name is here already, for another service or username: rename one and adopt again.".into());
    }
    if name.trim().is_empty() || name.chars().any(char::is_control) {
        return Err("its name is not one a klant can have.".into());
    }
    kluis_core::config::parse_base_url(base_url, false)
        .map_err(|_| "its service address is not one Kluis uses.".to_string())?;
    // Built anew, each setting checked as if typed here: the catalog is not trusted further.
    let mut profile = Profile::new(name, base_url, username);
    // The same id (its history goes on under it), when it is one Kluis makes (it names the
    // klant's keyring entries).
    if uuid::Uuid::parse_str(&old.id).is_ok() {
        profile.id = old.id.clone();
    }
    let mut said = Vec::new();
    if let Some(plan) = &old.plan {
        match kluis_core::plan::Plan::new(plan.schedule.clone(), jiff::Timestamp::now()) {
            Ok(mut kept) => {
                kept.paused = plan.paused;
                profile.plan = Some(kept);
            }
            Err(_) => {
                said.push("its plan is not one Kluis runs: set it again with `kluis plan`.".into())
            }
        }
    }
    profile.retention = old.retention.clone();
    profile.verify_monthly = old.verify_monthly;
    profile.restore_test_monthly = old.restore_test_monthly;
    if profile.set_tags(&old.tags).is_err() {
        said.push("its tags are not taken over.".into());
    }
    match &old.encryption {
        Some(EncryptionSetting::Recipient { recipient }) => {
            kluis_core::encryption::Encryption::recipient(recipient).map_err(|_| {
                "it is encrypted to a recipient that is not an age recipient.".to_string()
            })?;
            said.push(format!(
                "its backups are encrypted to {} — check that the office holds its identity.",
                shown(recipient)
            ));
            profile.encryption = old.encryption.clone();
        }
        other => profile.encryption = other.clone(),
    }
    if old.extra_ca_pem.is_some() {
        said.push("its own CA certificate is not taken over (whom this computer trusts is not taken from a catalog): give it again (KLUIS_CA_CERT, or the app's klant settings) if its service needs it.".into());
    }
    if let Some(folder) = &old.save_folder {
        said.push(format!("its own save folder ({}) is not taken over: its backups go to the office's save folder until one is chosen here.", shown(folder)));
    }
    // Targets of the lost computer are not this one's: only those known here stay chosen.
    if let Some(chosen) = &old.copy_to {
        let known: Vec<String> = (chosen.iter())
            .filter(|id| targets_here.iter().any(|t| &&t.id == id))
            .cloned()
            .collect();
        profile.copy_to = (!known.is_empty()).then_some(known);
    }
    profiles
        .put(profile.clone())
        .map_err(|e| e.into_core().to_string())?;
    Ok(Taken {
        profile,
        created: true,
        said,
    })
}

/// The passphrase the catalog sealed for `klant`, kept in the keyring for `profile` (made by
/// this run; a passphrase there already is never replaced): its backups are made and opened
/// with it here too. A passphrase klant whose passphrase the lost computer did not know is said.
async fn keep_passphrase(
    secrets: &Arc<dyn SecretStore>,
    klant: &KlantOf,
    profile: &Profile,
    notes: &mut Vec<String>,
) -> Result<()> {
    let wants = (profile.encryption.as_ref()).is_some_and(EncryptionSetting::needs_passphrase);
    match &klant.encrypted {
        Encrypted::Passphrase { passphrase } if wants => {
            let (id, passphrase) = (
                profile.id.clone(),
                kluis_core::Secret::new(passphrase.clone()),
            );
            off_thread(secrets.clone(), move |store| {
                if store.get(&id, SecretKind::EncryptionPassphrase)?.is_none() {
                    store.set(&id, SecretKind::EncryptionPassphrase, &passphrase)?;
                }
                Ok(())
            })
            .await
            .map_err(ProfileError::into_core)
        }
        _ if wants => {
            notes.push(format!(
                "\"{}\" is encrypted with a passphrase the catalog does not hold: give it (kluis encryption \"{}\" --passphrase, or the klant's settings in the app) before its next backup.",
                shown(&profile.name),
                shown(&profile.name)
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The copies of `lost`'s backups of the klanten `taken` that are `lost`'s alone (no other
/// computer's catalog or record names them, not Kluis's own objects), that the target holds
/// at the length their catalog or record says, and whose date is not in the future — as this
/// computer's history records them; and each other, with why it is left.
fn copies_of(
    on: &OnTarget,
    lost: &Pc,
    taken: &[(String, Profile)],
    target: &kluis_copies::CopyTarget,
) -> Result<(Vec<AdoptedCopy>, Vec<String>)> {
    let opened = Opened::open(target, None)?;
    let mut left = Vec::new();
    let latest = kluis_core::clock::now_ms() + CLOCK_SKEW_MS;
    let mut seen = HashSet::new();
    let mut copies = Vec::new();
    for backup in &on.listing.backups {
        let (Some(klant), Some(pc)) = (&backup.klant, &backup.pc) else {
            continue;
        };
        let Some((_, profile)) = taken.iter().find(|(key, _)| *key == klant.key) else {
            continue;
        };
        if pc != lost {
            continue;
        }
        let copy = &backup.copy;
        let only_lost = (on.listing.named_by.get(&copy.location))
            .is_none_or(|by| by.iter().all(|id| *id == lost.id));
        let why = match () {
            _ if !matches!(
                backup.proof,
                Proof::Catalog | Proof::CatalogAndRecord | Proof::Record
            ) =>
            {
                Some("its catalog and record disagree")
            }
            _ if layout::is_kluis_own(&copy.location) || !only_lost => {
                Some("it is not the lost computer's alone")
            }
            _ if on.sizes.get(&copy.location) != Some(&copy.bytes) => {
                Some("it is not on the target at the length its catalog says")
            }
            _ if !(EARLIEST_MS..=latest).contains(&copy.saved_ms) => {
                Some("its date is not one a backup can have")
            }
            _ => None,
        };
        let place = match why {
            None => opened
                .location(&copy.location)
                .map_err(|_| "its place is not one this target has"),
            Some(why) => Err(why),
        };
        let (Ok(location), Ok(job)) = (place, uuid::Uuid::parse_str(&copy.job_id)) else {
            let why = why.unwrap_or("its place or backup id is not one Kluis makes");
            left.push(format!(
                "{} is not taken over: {why}.",
                shown(&copy.location)
            ));
            continue;
        };
        if !seen.insert(job) {
            continue;
        }
        copies.push(AdoptedCopy {
            job,
            klant: profile.key(),
            saved_ms: copy.saved_ms,
            target: target.id.clone(),
            location,
            bytes: copy.bytes,
            sha256: copy.sha256.clone(),
            encrypted: copy.encrypted,
            locked_until_ms: copy.locked_until_ms,
        });
    }
    Ok((copies, left))
}

/// The kit kept here: the office key and the kit's vouch key (from the recovery key given),
/// this computer's own id and name, and `lost` among the computers it carries on for —
/// kept as a kit made here is (kluis-profiles' `recovery_kit::keep_kit`).
async fn keep_kit(
    profiles: Arc<ProfileStore>,
    secrets: Arc<dyn SecretStore>,
    key: Arc<RecoveryKey>,
    before: Option<RecoverySetting>,
    pc_name: Option<String>,
    lost: Pc,
) -> Result<()> {
    let mut setting = crate::recovery_kit::joined(&key, before.as_ref(), pc_name);
    if !setting.adopted.iter().any(|a| a.pc.id == lost.id) {
        setting.adopted.push(Adoption {
            pc: lost,
            at_ms: kluis_core::clock::now_ms(),
        });
    }
    off_thread(secrets, move |secrets| {
        crate::recovery_kit::keep_kit(&profiles, secrets, &key, setting)
    })
    .await
    .map_err(ProfileError::into_core)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kluis_recovery::{Backup, CopyNote, Klant, Listing};

    fn copy(at: &str, saved_ms: i64) -> CopyNote {
        CopyNote {
            job_id: uuid::Uuid::new_v4().to_string(),
            location: at.into(),
            name: at.rsplit('/').next().unwrap().into(),
            bytes: 100,
            sha256: "ab".repeat(32),
            saved_ms,
            encrypted: false,
            locked_until_ms: None,
            restore_test: None,
        }
    }

    /// The lost computer is named by its id (the app), or by a name only one computer has;
    /// unnamed, it is the only one there that is neither this computer nor carried on for
    /// already (a second loss: A carried on by B, now B lost).
    #[test]
    fn the_lost_computer_is_the_one_meant() {
        let pc = |id: &str, name: &str| Pc {
            id: id.into(),
            name: name.into(),
        };
        let (a, b, twin) = (pc("aa01", "OUD"), pc("bb02", "NIEUW"), pc("cc03", "OUD"));
        let on = |catalogs: Vec<(Pc, u64, i64)>| {
            let listing = Listing {
                catalogs,
                adopted: vec![(a.clone(), b.clone(), 2)],
                ..Listing::default()
            };
            OnTarget {
                listing,
                sizes: Default::default(),
                other_kit: None,
            }
        };
        let mut catalogs = vec![(a.clone(), 3, 1), (b.clone(), 5, 2)];
        let first = on(catalogs.clone());
        assert_eq!(lost_computer(&first, None, None).unwrap(), b, "not A again");
        let b_here = RecoverySetting {
            office_key: String::new(),
            fingerprint: String::new(),
            made_ms: 0,
            pc_id: b.id.clone(),
            pc_name: b.name.clone(),
            adopted: Vec::new(),
        };
        assert_eq!(
            lost_computer(&first, None, Some(&b_here)).unwrap(),
            a,
            "B itself carries on for A again (another target, what is new)"
        );
        assert_eq!(
            lost_computer(&first, Some("aa01"), None).unwrap(),
            a,
            "by id"
        );
        catalogs.push((twin.clone(), 1, 3));
        let twins = on(catalogs);
        assert!(
            lost_computer(&twins, Some("oud"), None).is_err(),
            "two of that name: not guessed"
        );
        assert_eq!(lost_computer(&twins, Some("cc03"), None).unwrap(), twin);
    }

    /// Of the lost computer's copies, only those that are its alone, on the target at their
    /// length, proven and dated as a backup can be are taken: not one another computer's
    /// catalog also names (a catalog written with the vouch key could name other klanten's
    /// copies, for this computer's rule to delete), not Kluis's own objects, not one dated in
    /// the future (it would hold the klant's newest place and stop its plan).
    #[test]
    fn only_copies_that_are_the_lost_computers_alone_are_taken() {
        let root = tempfile::tempdir().unwrap();
        let target = kluis_copies::CopyTarget::new(
            "NAS",
            kluis_copies::Place::Folder {
                path: root.path().to_string_lossy().into_owned(),
            },
        )
        .unwrap();
        let (lost, other) = (
            Pc {
                id: "aa01".into(),
                name: "OUD".into(),
            },
            Pc {
                id: "bb02".into(),
                name: "ANDER".into(),
            },
        );
        let klant = Klant {
            name: "Bakker".into(),
            base_url: "https://service.example/webservice_v2".into(),
            username: "bakker".into(),
            key: "old-key".into(),
        };
        let now = kluis_core::clock::now_ms();
        let cases = [
            ("Bakker/good.zip", now - 1000, Proof::CatalogAndRecord, true),
            ("Visser/theirs.zip", now - 1000, Proof::Catalog, true),
            (
                "Bakker/future.zip",
                now + 24 * 3_600_000,
                Proof::Catalog,
                true,
            ),
            (
                "kluis-recovery/office-key.txt",
                now - 1000,
                Proof::Catalog,
                true,
            ),
            ("Bakker/short.zip", now - 1000, Proof::Catalog, false),
            ("Bakker/doubt.zip", now - 1000, Proof::InDoubt, true),
        ];
        let mut listing = Listing::default();
        let mut sizes = std::collections::HashMap::new();
        for (at, saved_ms, proof, whole) in cases {
            listing.backups.push(Backup {
                klant: Some(klant.clone()),
                pc: Some(lost.clone()),
                encrypted: Encrypted::No,
                copy: copy(at, saved_ms),
                proof,
            });
            sizes.insert(at.to_string(), if whole { 100 } else { 99 });
            let by = listing.named_by.entry(at.to_string()).or_default();
            by.insert(lost.id.clone());
        }
        let by = listing.named_by.get_mut("Visser/theirs.zip").unwrap();
        by.insert(other.id.clone());
        let on = OnTarget {
            listing,
            sizes,
            other_kit: None,
        };
        let profile = Profile::new("Bakker", &klant.base_url, "bakker");
        let taken = [("old-key".to_string(), profile.clone())];
        let (copies, left) = copies_of(&on, &lost, &taken, &target).unwrap();
        assert_eq!(left.len(), 5, "each copy left is said: {left:?}");
        let places: Vec<&str> = copies.iter().map(|c| c.location.as_str()).collect();
        let good = root.path().join("Bakker").join("good.zip");
        assert_eq!(places, [good.to_str().unwrap()]);
        assert_eq!(
            copies[0].klant,
            profile.key(),
            "under this computer's profile"
        );
    }
}
