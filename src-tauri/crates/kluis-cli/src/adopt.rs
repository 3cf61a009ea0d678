//! `kluis recover adopt`: this computer carries on for a lost one, from its catalog on a copy
//! target and the recovery kit.
//!
//! - **Its klanten** become profiles here, with the settings the lost computer kept (plan,
//!   retention, tags, encryption) and its id, so that their history goes on under the same key;
//!   never a password or api key (the catalog has none: they are given with `kluis profiles
//!   import` before the next backup). A klant already here by the same service and username
//!   keeps its own settings; one by the same name for another service is left, said.
//! - **Their backups' copies** on the target go into this computer's history
//!   (kluis-core's `adopted`): the dashboard and the target's rule go on where they stopped, and
//!   nothing is copied twice. Only a copy its catalog or record proves and the target holds at
//!   the length they name is taken.
//! - **The kit**: this computer keeps the office key and the kit's vouch key from now on, writes
//!   its catalogs under it, and names the lost computer in them as adopted.
//!
//! Running it again adds only what is new.

use std::collections::HashSet;

use kluis_copies::Opened;
use kluis_core::adopted::AdoptedCopy;
use kluis_core::encryption::EncryptionSetting;
use kluis_core::{Error, Result};
use kluis_profiles::store::RecoverySetting;
use kluis_profiles::{Profile, ProfileError, ProfileStore, SecretKind, APP};
use kluis_recovery::{Adoption, Encrypted, KlantOf, Pc, Proof, RecoveryKey};

use crate::args::{Cli, RecoverFrom};
use crate::from_args::{open_history, open_profiles};
use crate::profiles::{on_store, secret_store};
use crate::recover::OnTarget;

/// `kluis recover adopt --target NAME [--computer NAME] [--pc-name NAME]`.
pub async fn run(
    cli: &Cli,
    from: &RecoverFrom,
    computer: Option<&str>,
    pc_name: Option<String>,
) -> Result<()> {
    let (on_target, target, key) = crate::recover::load(cli, from).await?;
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let before = profiles.settings().recovery;
    let lost = lost_computer(&on_target, computer, before.as_ref())?;
    eprintln!(
        "kluis: carrying on for {} (its klanten and their copies on \"{}\").",
        lost.name, target.name
    );

    let targets_here = profiles.settings().copy_targets;
    let mut taken = Vec::new();
    for klant in on_target.listing.klanten.iter().filter(|k| k.pc == lost) {
        match take_klant(&profiles, klant, &targets_here) {
            Ok(profile) => {
                keep_passphrase(klant, &profile).await?;
                taken.push((klant.klant.key.clone(), profile));
            }
            Err(why) => eprintln!("kluis: \"{}\" is not taken over: {why}", klant.klant.name),
        }
    }

    let copies = copies_of(&on_target, &lost, &taken, &target)?;
    let history = open_history(cli.history_db.as_ref())?;
    let mut added = 0;
    for copy in &copies {
        added += usize::from(history.adopt_copy(copy)?);
    }

    keep_kit(&profiles, &key, before, pc_name, lost.clone()).await?;
    for (_, profile) in &taken {
        let copies = copies.iter().filter(|c| c.klant == profile.key()).count();
        eprintln!(
            "kluis: \"{}\" ({}, username {}): {copies} backups with their copy on \"{}\".",
            profile.name, profile.base_url, profile.username, target.name
        );
    }
    eprintln!(
        "kluis: {} klanten of {} taken over, {added} copies added to this computer's history; this computer now writes the catalogs for the kit ({}).",
        taken.len(),
        lost.name,
        key.office_key().fingerprint()
    );
    if !taken.is_empty() {
        eprintln!("kluis: before their next backup, check each service address above and give each klant its password and api key: `kluis profiles export --out klanten.csv`, add a password column (the api key in it too, or in KLUIS_API_KEY), then `kluis profiles import klanten.csv` — or `kluis profiles import klanten.csv --secrets EXPORT` with the password manager's export.");
    }
    let history = std::sync::Arc::new(history);
    let all = crate::copies::with_secrets(profiles.settings().copy_targets).await?;
    crate::recovery::write_after_copies(cli, history, all).await;
    Ok(())
}

/// The computer to carry on for: the one named, else the only one (not this one) whose
/// catalog is on the target.
fn lost_computer(on: &OnTarget, named: Option<&str>, here: Option<&RecoverySetting>) -> Result<Pc> {
    let others: Vec<&Pc> = (on.listing.catalogs.iter())
        .map(|(pc, _, _)| pc)
        .filter(|pc| here.is_none_or(|h| h.pc_id != pc.id))
        .collect();
    let names = || {
        let names: Vec<&str> = others.iter().map(|pc| pc.name.as_str()).collect();
        names.join(", ")
    };
    match named {
        Some(name) => (others.iter())
            .find(|pc| pc.name.eq_ignore_ascii_case(name.trim()))
            .map(|pc| (*pc).clone())
            .ok_or_else(|| {
                Error::Config(format!(
                    "No catalog of a computer named \"{name}\" opens here (computers there: {}).",
                    names()
                ))
            }),
        None => match others.as_slice() {
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

/// The profile `klant` becomes here (saved), or the one here that is it already.
fn take_klant(
    profiles: &ProfileStore,
    klant: &KlantOf,
    targets_here: &[kluis_copies::CopyTarget],
) -> std::result::Result<Profile, String> {
    let mut profile: Profile = serde_json::from_value(klant.settings.clone())
        .map_err(|_| "it was backed up without a saved profile there (its backups stay listed by `kluis recover list`).".to_string())?;
    let same_service = |p: &Profile| {
        p.base_url == klant.klant.base_url && p.username.eq_ignore_ascii_case(&klant.klant.username)
    };
    let here = profiles.list();
    if let Some(found) = here.iter().find(|p| {
        p.id == profile.id || (same_service(p) && p.name.eq_ignore_ascii_case(&klant.klant.name))
    }) {
        return match same_service(found) {
            true => Ok(found.clone()),
            false => Err(format!("a klant with its id or name is here already for another service or username (\"{}\").", found.name)),
        };
    }
    if here
        .iter()
        .any(|p| p.name.eq_ignore_ascii_case(&klant.klant.name))
    {
        return Err(format!(
            "a klant named \"{}\" is here already, for another service or username: rename one and adopt again.",
            klant.klant.name
        ));
    }
    // The id names keyring entries and files: one that is not as Kluis makes them is replaced
    // (its backups then go on under the new id).
    if !is_profile_id(&profile.id) {
        profile.id = Profile::new("", "", "").id;
    }
    profile.name = klant.klant.name.clone();
    profile.base_url = klant.klant.base_url.clone();
    profile.username = klant.klant.username.clone();
    profile.demo = false;
    profile.ping_url = None;
    // A folder of the lost computer that is not on this one: the office's save folder.
    if (profile.save_folder.as_deref()).is_some_and(|f| !std::path::Path::new(f).is_dir()) {
        profile.save_folder = None;
    }
    // Targets of the lost computer are not this one's: only those known here stay chosen.
    if let Some(chosen) = profile.copy_to.take() {
        let known: Vec<String> = (chosen.into_iter())
            .filter(|id| targets_here.iter().any(|t| &t.id == id))
            .collect();
        profile.copy_to = (!known.is_empty()).then_some(known);
    }
    profiles
        .put(profile.clone())
        .map_err(|e| e.into_core().to_string())?;
    Ok(profile)
}

/// An id as Kluis makes them (a UUID's hex, with or without dashes).
fn is_profile_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// The passphrase the catalog sealed for `klant`, kept in the keyring for `profile`: its
/// backups are made and opened with it here too. A passphrase klant whose passphrase the lost
/// computer did not know is said.
async fn keep_passphrase(klant: &KlantOf, profile: &Profile) -> Result<()> {
    let wants = (profile.encryption.as_ref()).is_some_and(EncryptionSetting::needs_passphrase);
    match &klant.encrypted {
        Encrypted::Passphrase { passphrase } if wants => {
            let (id, passphrase) = (
                profile.id.clone(),
                kluis_core::Secret::new(passphrase.clone()),
            );
            on_store(&secret_store(), move |store| {
                store.set(&id, SecretKind::EncryptionPassphrase, &passphrase)
            })
            .await
        }
        _ if wants => {
            eprintln!(
                "kluis: \"{}\" is encrypted with a passphrase the catalog does not hold: give it with `kluis encryption \"{}\" --passphrase` before its next backup.",
                profile.name, profile.name
            );
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The copies of `lost`'s backups of the klanten `taken` that the target holds as their
/// catalog or record says, as this computer's history records them.
fn copies_of(
    on: &OnTarget,
    lost: &Pc,
    taken: &[(String, Profile)],
    target: &kluis_copies::CopyTarget,
) -> Result<Vec<AdoptedCopy>> {
    let opened = Opened::open(target, None)?;
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
        let proven = matches!(
            backup.proof,
            Proof::Catalog | Proof::CatalogAndRecord | Proof::Record
        );
        let there = on.sizes.get(&copy.location) == Some(&copy.bytes);
        let Ok(job) = uuid::Uuid::parse_str(&copy.job_id) else {
            continue;
        };
        if !proven || !there {
            eprintln!(
                "kluis: {} is not taken over: {}.",
                copy.location,
                match proven {
                    false => "its catalog and record disagree",
                    true => "it is not on the target at the length its catalog says",
                }
            );
            continue;
        }
        if !seen.insert(job) {
            continue;
        }
        copies.push(AdoptedCopy {
            job,
            klant: profile.key(),
            saved_ms: copy.saved_ms,
            target: target.id.clone(),
            location: opened.location(&copy.location)?,
            bytes: copy.bytes,
            sha256: copy.sha256.clone(),
            encrypted: copy.encrypted,
            locked_until_ms: copy.locked_until_ms,
        });
    }
    Ok(copies)
}

/// The kit kept here: the office key and the kit's vouch key (from the recovery key given),
/// this computer's own id and name, and `lost` among the computers it carries on for.
async fn keep_kit(
    profiles: &ProfileStore,
    key: &RecoveryKey,
    before: Option<RecoverySetting>,
    pc_name: Option<String>,
    lost: Pc,
) -> Result<()> {
    let vouch = key.vouch_key().to_text();
    on_store(&secret_store(), move |store| {
        store.set(APP, SecretKind::RecoveryVouch, &vouch)
    })
    .await?;
    let office = key.office_key();
    let mut adopted = before
        .as_ref()
        .map(|b| b.adopted.clone())
        .unwrap_or_default();
    if !adopted.iter().any(|a| a.pc.id == lost.id) {
        adopted.push(Adoption {
            pc: lost,
            at_ms: kluis_core::clock::now_ms(),
        });
    }
    let setting = RecoverySetting {
        office_key: office.to_text(),
        fingerprint: office.fingerprint(),
        made_ms: (before.as_ref())
            .filter(|b| b.fingerprint == office.fingerprint())
            .map_or_else(kluis_core::clock::now_ms, |b| b.made_ms),
        pc_id: (before.as_ref().map(|b| b.pc_id.clone()))
            .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string()),
        pc_name: pc_name
            .or_else(|| before.as_ref().map(|b| b.pc_name.clone()))
            .unwrap_or_else(crate::recovery::host_name),
        adopted,
    };
    profiles
        .update_settings(|settings| {
            settings.recovery = Some(setting);
            Ok(())
        })
        .map_err(ProfileError::into_core)?;
    Ok(())
}
