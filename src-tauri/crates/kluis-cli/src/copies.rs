//! `kluis copy-target add|list|test|keep|remove` — where a second copy of each backup is kept, the
//! same targets the app uses — and `kluis copy --pending`, which makes the copies that could
//! not be made after their backup (kluis-copies does the copying and the proof).

use std::sync::Arc;

use kluis_copies::CopyTarget;
use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::{Error, Result};
use kluis_profiles::{ProfileError, ProfileStore, SecretKind};

use crate::args::{Cli, CopyTargetCommand};
use crate::from_args::{open_history, open_profiles};
use crate::secrets::{on_store, secret_store};
use crate::targets::{named_in, with_secrets};

pub async fn target(cli: &Cli, command: &CopyTargetCommand) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    match command {
        CopyTargetCommand::Add {
            name,
            folder,
            s3,
            sftp,
            stdin,
        } => {
            let (place, secret) =
                crate::copy_places::place(folder.as_deref(), s3, sftp, *stdin).await?;
            let mut target = CopyTarget::new(name, place)?;
            target.secret = secret;
            // Tested before it is saved: a mistyped path or key is said now, not after a
            // backup.
            kluis_copies::test(&target).await?;
            if let Some(secret) = target.secret.clone() {
                let id = target.id.clone();
                on_store(&secret_store(), move |store| {
                    store.set(&id, SecretKind::CopyTargetSecret, &secret)
                })
                .await?;
            }
            if let Err(e) = profiles.add_copy_target(target.clone()) {
                let id = target.id.clone();
                let _ = on_store(&secret_store(), move |store| {
                    store.delete(&id, SecretKind::CopyTargetSecret)
                })
                .await;
                return Err(e.into_core());
            }
            eprintln!(
                "kluis: copy target \"{}\" added ({}); each klant's backups are copied there after its next backup, or now with `kluis copy --pending`.",
                target.name,
                target.describe()
            );
            Ok(())
        }
        CopyTargetCommand::List { json } => {
            for target in profiles.settings().copy_targets {
                match json {
                    true => println!(
                        "{}",
                        serde_json::to_string(&target).expect("plain values serialise")
                    ),
                    false => println!("{:<20} {}", target.name, target.describe()),
                }
            }
            Ok(())
        }
        CopyTargetCommand::Test { name } => {
            let target = named(&profiles, name)?;
            let target = with_secrets(vec![target]).await?.remove(0);
            kluis_copies::test(&target).await?;
            eprintln!("kluis: copy target \"{}\" can be written.", target.name);
            Ok(())
        }
        CopyTargetCommand::Keep {
            name,
            retention,
            keep_all,
        } => {
            let target = named(&profiles, name)?;
            let rule = match (retention.rule(), keep_all) {
                (Some(rule), _) => Some(rule),
                (None, true) => None,
                (None, false) => {
                    return Err(Error::Config(
                        "Say what the target keeps: --keep-last N, --keep-daily N, --keep-weekly N, --keep-monthly N, or --keep-all.".into(),
                    ))
                }
            };
            let kept = (profiles.set_copy_target_rule(&target.id, rule))
                .map_err(ProfileError::into_core)?;
            let target = named_in(&kept.copy_targets, &target.name)?;
            eprintln!(
                "kluis: copy target \"{}\": {}.",
                target.name,
                target.describe()
            );
            Ok(())
        }
        CopyTargetCommand::Remove { name } => {
            let target = named(&profiles, name)?;
            (profiles.remove_copy_target(&target.id)).map_err(ProfileError::into_core)?;
            if target.place.keeps_secret() {
                let id = target.id.clone();
                on_store(&secret_store(), move |store| {
                    store.delete(&id, SecretKind::CopyTargetSecret)
                })
                .await?;
            }
            eprintln!(
                "kluis: no more copies go to \"{}\"; those already there stay.",
                target.name
            );
            Ok(())
        }
    }
}

/// The target named `name` (case aside).
fn named(profiles: &ProfileStore, name: &str) -> Result<CopyTarget> {
    named_in(&profiles.settings().copy_targets, name)
}

/// `kluis copy --pending`: every copy a kept backup (of one klant, when named) lacks, made now.
/// Fails (exit code) when a copy could not be made, after trying them all.
pub async fn pending(cli: &Cli, profile: Option<&str>, json: bool) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let targets = with_secrets(profiles.settings().copy_targets).await?;
    if targets.is_empty() {
        return Err(Error::Config(
            "No copy target is set: add one with `kluis copy-target add NAME --folder PATH`."
                .into(),
        ));
    }
    let saved = profiles.list();
    let klant = (profile.map(|name| kluis_profiles::find_klant(&saved, &history, name)))
        .transpose()?
        .map(|klant| klant.key());
    let names = kluis_profiles::klant_names(&saved, &history)?;
    let mut failed = 0;
    let targets = kluis_profiles::unattended::targets_by_klant(saved, targets);
    // Uploads keep to the saved download limit, as the backups do.
    let limit = profiles.settings().bandwidth;
    let pace = limit
        .map(|limit| Bandwidth::new(Some(limit)).map(Arc::new))
        .transpose()?;
    let pending = kluis_profiles::unattended::copy_pending(history.clone(), klant, targets, pace);
    let pending = pending.await?;
    let all = with_secrets(profiles.settings().copy_targets).await?;
    crate::recovery::write_after_copies(cli, history.clone(), all).await;
    for klant in pending {
        let name = (names.get(&klant.klant).cloned()).unwrap_or_else(|| klant.klant.to_string());
        let Some(copied) = klant.copied else {
            eprintln!("kluis: {name}: a backup of it is running; its copies are made after it.");
            continue;
        };
        for copy in copied {
            failed += copy.outcome.is_err() as usize;
            print(&name, &copy, json);
        }
    }
    match failed {
        0 => Ok(()),
        n => Err(Error::Io(format!(
            "{n} copies could not be made (see above); the backups are kept on this computer."
        ))),
    }
}

fn print(name: &str, copy: &kluis_copies::Copied, json: bool) {
    let (job, target) = (&copy.entry.id, &copy.target.name);
    match (json, &copy.outcome) {
        (true, Ok(location)) => println!(
            "{}",
            serde_json::json!({ "job": job, "klant": name, "target": target, "location": location })
        ),
        (true, Err(e)) => println!(
            "{}",
            serde_json::json!({ "job": job, "klant": name, "target": target, "error": e.to_string(), "code": e.code().as_str() })
        ),
        (false, Ok(location)) => println!("{name}: copied to \"{target}\": {location}"),
        (false, Err(e)) => eprintln!("kluis: {name}: not copied to \"{target}\": {e}"),
    }
}
