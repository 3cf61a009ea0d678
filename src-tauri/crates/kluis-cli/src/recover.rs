//! `kluis recover list|restore` (and `adopt`, in crate::adopt): kluis-profiles' `recover`
//! (what is on a copy target, read with the recovery kit's key; one backup restored from it)
//! said on the command line — a table or one JSON object a line, the problems met on stderr.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use kluis_copies::Opened;
use kluis_core::{Error, Result, Secret};
use kluis_profiles::recover::{self, date, restore::Stage};
use kluis_recovery::{Backup, Encrypted, Proof};

use crate::args::{Cli, RecoverCommand};
use crate::recover_from::load;

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

/// A small file read whole (an identity file is some hundred bytes).
fn read_small(file: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut bytes))
        .map_err(|e| Error::io(format!("read the identity file {}", file.display()), e))?;
    Ok(bytes)
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
        let ms = |text| crate::recover_from::moment_ms(text).ok();
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
