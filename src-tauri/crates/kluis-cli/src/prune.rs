//! `kluis prune` and the retention applied after a backup (`backup --keep-last N`, a saved
//! profile's rule): kluis-core's retention, its removals and what it spared said plainly.

use std::sync::Arc;

use kluis_core::retention::{prune_in_background, Mode, Pruned, Retention};
use kluis_core::{Error, History, HistoryEntry, Result};

use crate::settings::{open_history, open_profiles, Cli, RetentionArgs};

/// One profile's history key and name, with the rule to apply to it.
struct Target {
    key: String,
    name: String,
    rule: Retention,
}

pub async fn run(
    cli: &Cli,
    profile: Option<&str>,
    rule: &RetentionArgs,
    dry_run: bool,
    json: bool,
) -> Result<()> {
    let targets = targets(cli, profile, rule.rule())?;
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let mode = match dry_run {
        true => Mode::DryRun,
        false => Mode::Delete,
    };
    for target in targets {
        let pruned = prune_in_background(
            history.clone(),
            target.key.clone(),
            target.rule.clone(),
            mode,
        )
        .await?;
        match json {
            true => print_json(&target, &pruned, mode),
            false => print_text(&target, &pruned, mode),
        }
    }
    Ok(())
}

/// Whose backups to prune, and by which rule: the rule given for --profile, or each saved
/// profile's own (only --profile's when given).
fn targets(cli: &Cli, profile: Option<&str>, given: Option<Retention>) -> Result<Vec<Target>> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    if let Some(rule) = given {
        let Some(name) = profile else {
            return Err(Error::Config(
                "Say whose backups this rule is for: --profile NAME.".into(),
            ));
        };
        // A saved profile's backups are recorded by its id; others by the name given.
        let (key, name) = match profiles.find(name) {
            Ok(saved) => (saved.id, saved.name),
            Err(_) => (name.to_string(), name.to_string()),
        };
        return Ok(vec![Target { key, name, rule }]);
    }
    let chosen = match profile {
        Some(name) => vec![profiles
            .find(name)
            .map_err(kluis_profiles::ProfileError::into_core)?],
        None => profiles.list(),
    };
    let targets: Vec<Target> = (chosen.into_iter())
        .filter_map(|p| {
            let rule = p.retention.filter(|r| !r.keeps_everything())?;
            Some(Target {
                key: p.id,
                name: p.name,
                rule,
            })
        })
        .collect();
    if targets.is_empty() {
        return Err(Error::Config(
            "No retention rule is set, so every backup is kept. Set one with `kluis plan NAME --keep-last 7` (or --keep-daily, --keep-weekly, --keep-monthly), or give it here with --profile NAME --keep-last 7.".into(),
        ));
    }
    Ok(targets)
}

/// After a verified save of `key` (`name` to the user): applies `rule`, then (with
/// `verify_monthly`) reads the klant's backups again when a month has passed since they last
/// were — saying on stderr what was removed, spared or found. A failure here is said, and the
/// backup stands.
pub async fn after_save(
    history: &Arc<History>,
    key: &str,
    name: &str,
    rule: Option<Retention>,
    verify_monthly: bool,
) {
    if let Some(rule) = rule.filter(|r| !r.keeps_everything()) {
        let target = Target {
            key: key.to_string(),
            name: name.to_string(),
            rule,
        };
        let pruned = prune_in_background(
            history.clone(),
            target.key.clone(),
            target.rule.clone(),
            Mode::Delete,
        )
        .await;
        match pruned {
            Ok(pruned) if pruned.removed.is_empty() && pruned.spared.is_empty() => {}
            Ok(pruned) => {
                eprintln!("kluis: {}", summary(&target, &pruned, Mode::Delete));
                print_spared(&pruned);
            }
            Err(e) => eprintln!("kluis: {name}: the backup is saved, but the retention rule could not be applied: {e}"),
        }
    }
    if verify_monthly {
        let (history, key) = (history.clone(), key.to_string());
        let verified =
            tokio::task::spawn_blocking(move || {
                match kluis_core::verify::monthly_due(&history, &key, kluis_core::clock::now_ms())?
                {
                    true => kluis_core::verify::verify_kept(&history, Some(&key)).map(Some),
                    false => Ok(None),
                }
            })
            .await
            .unwrap_or_else(|e| {
                Err(Error::Io(format!(
                    "The monthly verification stopped ({e})."
                )))
            });
        match verified {
            Ok(Some(verified)) => {
                let problems: Vec<_> = (verified.iter())
                    .filter(|v| v.check.finding.is_problem())
                    .collect();
                eprintln!(
                    "kluis: {name}: monthly verification: {} backups read again, {} with problems{}",
                    verified.len(),
                    problems.len(),
                    if problems.is_empty() { "." } else { " (see `kluis verify`)." }
                );
            }
            Ok(None) => {}
            Err(e) => eprintln!("kluis: {name}: the monthly verification could not run: {e}"),
        }
    }
}

fn summary(target: &Target, pruned: &Pruned, mode: Mode) -> String {
    let verb = match mode {
        Mode::DryRun => "would remove",
        Mode::Delete => "removed",
    };
    let spared = match pruned.spared.len() {
        0 => String::new(),
        n => format!("; {n} left in place (see below)"),
    };
    format!(
        "{}: {verb} {} of its backups ({}); {} kept{spared}.",
        target.name,
        pruned.removed.len(),
        target.rule.describe(),
        pruned.kept
    )
}

fn saved_at(entry: &HistoryEntry) -> String {
    kluis_core::history::format_utc(entry.finished_at_ms.unwrap_or(entry.started_at_ms))
}

fn print_text(target: &Target, pruned: &Pruned, mode: Mode) {
    println!("{}", summary(target, pruned, mode));
    for entry in &pruned.removed {
        println!(
            "  {:<12} {}  {}",
            match mode {
                Mode::DryRun => "would remove",
                Mode::Delete => "removed",
            },
            saved_at(entry),
            entry.path.as_deref().unwrap_or("")
        );
    }
    for (entry, check) in &pruned.spared {
        println!(
            "  {:<12} {}  {}  ({}: {})",
            "left",
            saved_at(entry),
            entry.path.as_deref().unwrap_or(""),
            check.finding,
            check.detail.as_deref().unwrap_or("")
        );
    }
}

/// What retention after a save left in place, on stderr.
fn print_spared(pruned: &Pruned) {
    for (entry, check) in &pruned.spared {
        eprintln!(
            "kluis:   left {} ({}: {})",
            entry.path.as_deref().unwrap_or(""),
            check.finding,
            check.detail.as_deref().unwrap_or("")
        );
    }
}

fn print_json(target: &Target, pruned: &Pruned, mode: Mode) {
    let action = match mode {
        Mode::DryRun => "would_remove",
        Mode::Delete => "removed",
    };
    let line = |entry: &HistoryEntry, action: &str, check: Option<&kluis_core::history::Check>| {
        serde_json::json!({
            "profile": target.key, "name": target.name, "job": entry.id,
            "path": entry.path, "bytes": entry.bytes, "sha256": entry.sha256,
            "action": action, "rule": target.rule.describe(),
            "finding": check.map(|c| c.finding), "detail": check.and_then(|c| c.detail.clone()),
        })
    };
    for entry in &pruned.removed {
        println!("{}", line(entry, action, None));
    }
    for (entry, check) in &pruned.spared {
        println!("{}", line(entry, "left", Some(check)));
    }
}
