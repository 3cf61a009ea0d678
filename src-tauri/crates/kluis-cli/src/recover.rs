//! `kluis recover list|restore` (and `adopt`, in crate::adopt): kluis-profiles' `recover`
//! (what is on a copy target, read with the recovery kit's key; one backup restored from it)
//! said on the command line — a table or one JSON object a line, the problems met on stderr.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use kluis_copies::Opened;
use kluis_core::{Error, Result, Secret};
use kluis_profiles::recover::{self, date, restore::Stage, OnTarget};
use kluis_recovery::{Backup, Encrypted, Proof, RecoveryKey};

use crate::args::{Cli, RecoverCommand, RecoverFrom};
use crate::from_args::open_profiles;

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
                say(backup, on_target.holds(backup), json);
            }
            eprintln!(
                "kluis: {} backups of {} klanten on \"{}\", {}.",
                listing.backups.len(),
                on_target.klanten(),
                from.target,
                recover::made_from(listing)
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
            let chosen = recover::restore::choose(&on_target, klant, backup.as_deref())?.clone();
            eprintln!(
                "kluis: restoring {} ({}, {}{}) into {}.",
                chosen.copy.name,
                date(chosen.copy.saved_ms),
                size_text(chosen.copy.bytes),
                (chosen.pc.as_ref()).map_or(String::new(), |pc| format!(", from {}", pc.name)),
                to.display()
            );
            let identity = match identity {
                Some(file) => Some(Secret::new(
                    String::from_utf8_lossy(&read_small(file)?).into_owned(),
                )),
                None => None,
            };
            let opener = recover::restore::opener(&chosen, identity)?;
            let folder = to.clone();
            let options = kluis_restore::RestoreOptions {
                only: only.clone(),
                overwrite: *overwrite,
                ..Default::default()
            };
            let (restored, notes) = tokio::task::spawn_blocking(move || {
                let opened = Opened::open(&target, None)?;
                let stop = Arc::new(AtomicBool::new(false));
                recover::restore::restore(
                    &opened,
                    &key,
                    &chosen,
                    opener.as_ref(),
                    &folder,
                    options,
                    &stop,
                    &mut |_: Stage| {},
                )
            })
            .await
            .map_err(|e| Error::Io(format!("The recovery stopped unexpectedly ({e}).")))??;
            for note in notes {
                eprintln!("kluis: {note}");
            }
            crate::restore::said(&restored, to)
        }
        RecoverCommand::Adopt {
            from,
            computer,
            pc_name,
            replace_kit,
        } => {
            let asked = kluis_profiles::recover::adopt::AdoptAsked {
                computer: computer.clone(),
                pc_name: pc_name.clone(),
                replace_kit: *replace_kit,
            };
            crate::adopt::run(cli, from, asked).await
        }
    }
}

/// The recovery key: from the file given, else `KLUIS_RECOVERY_KEY` (its text or 24 words).
fn recovery_key(from: &RecoverFrom) -> Result<RecoveryKey> {
    key_from(from.recovery_key.as_deref())
}

/// The recovery key: from `file`, else `KLUIS_RECOVERY_KEY` (its text or 24 words).
pub(crate) fn key_from(file: Option<&Path>) -> Result<RecoveryKey> {
    let text = match file {
        Some(file) => return recover::key_in_file(file),
        None => std::env::var("KLUIS_RECOVERY_KEY").map_err(|_| {
            Error::Config(
                "Give the recovery kit's key: --recovery-key FILE, or KLUIS_RECOVERY_KEY (its AGE-SECRET-KEY-1… line or its 24 words).".into(),
            )
        })?,
    };
    let text = Secret::new(text);
    RecoveryKey::parse(text.expose())
}

/// A small file read whole (an identity file is some hundred bytes).
fn read_small(file: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut bytes))
        .map_err(|e| Error::io(format!("read the identity file {}", file.display()), e))?;
    Ok(bytes)
}

/// Everything on the target `from` names, read with the kit's key (read once); the target and the key.
pub(crate) async fn load(
    cli: &Cli,
    from: &RecoverFrom,
) -> Result<(OnTarget, kluis_copies::CopyTarget, Arc<RecoveryKey>)> {
    let key = Arc::new(recovery_key(from)?);
    let targets = open_profiles(cli.profiles_file.as_ref())?
        .settings()
        .copy_targets;
    let target = crate::copies::named_in(&targets, &from.target)?;
    let target = crate::copies::with_secrets(vec![target]).await?.remove(0);
    let before = from.before.as_deref().map(moment_ms).transpose()?;
    let on_target = recover::read_target_before(&target, &key, before).await?;
    Ok((on_target, target, key))
}

/// `--before`'s day (its start, UTC) or moment, in Unix milliseconds.
fn moment_ms(text: &str) -> Result<i64> {
    let text = text.trim();
    // A moment first (its offset kept); a day only when that is all there is (jiff reads a
    // day out of a longer text, and the time would be lost).
    let moment = match text.parse::<jiff::Timestamp>() {
        Ok(moment) => Ok(moment),
        Err(e) if text.len() != 10 => Err(e),
        Err(_) => (text.parse::<jiff::civil::Date>())
            .and_then(|day| day.to_zoned(jiff::tz::TimeZone::UTC).map(|z| z.timestamp())),
    };
    moment.map(|t| t.as_millisecond()).map_err(|_| {
        Error::Config(format!(
            "--before {text:?} is not a day (2026-11-20) or a moment (2026-11-20T08:00:00Z)."
        ))
    })
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

#[cfg(test)]
mod tests {
    /// `--before` takes a moment with its offset, or a day alone (its start, UTC); a day with a
    /// time but no offset is refused rather than read as the day's start.
    #[test]
    fn before_is_a_moment_or_a_day() {
        let ms = |text| super::moment_ms(text).ok();
        let utc = |text: &str| text.parse::<jiff::Timestamp>().unwrap().as_millisecond();
        assert_eq!(ms("2026-11-20"), Some(utc("2026-11-20T00:00:00Z")));
        assert_eq!(
            ms("2026-11-20T08:00:00+01:00"),
            Some(utc("2026-11-20T07:00:00Z"))
        );
        assert_eq!(
            ms(" 2026-11-20T08:00:00Z "),
            Some(utc("2026-11-20T08:00:00Z"))
        );
        assert_eq!(ms("2026-11-20T23:30"), None);
        assert_eq!(ms("last tuesday"), None);
    }
}
