//! `kluis prune` and the retention applied after a backup (`backup --keep-last N`, a saved
//! profile's rule): kluis-core's retention, its removals and what it spared said plainly.

use std::sync::Arc;

use kluis_core::retention::{prune_in_background, Mode, Pruned, Retention};
use kluis_core::verify::Finding;
use kluis_core::{Error, History, HistoryEntry, KlantKey, Result};
use kluis_profiles::unattended::AfterSave;

use crate::args::{Cli, RetentionArgs};
use crate::from_args::{open_history, open_profiles};

/// One profile's history key and name, with the rule to apply to it.
struct Target {
    key: KlantKey,
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
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let targets = targets(cli, &history, profile, rule.rule())?;
    let mode = match dry_run {
        true => Mode::DryRun,
        false => Mode::Delete,
    };
    let mut busy = Vec::new();
    for target in targets {
        // Under the klant's turn, as the app's and run-due's pruning after a save: never two
        // deletions of one klant's backups at once, nor one beside its running backup.
        let Some(_turn) = kluis_profiles::take_turn(&history, &target.key)? else {
            eprintln!(
                "kluis: {}: a backup of it is running (in the app or another kluis); left as it is.",
                target.name
            );
            busy.push(target.name);
            continue;
        };
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
    match busy.is_empty() {
        true => Ok(()),
        false => Err(Error::Config(format!(
            "Not pruned while a backup of it runs: {}. Run `kluis prune` again when it has ended.",
            busy.join(", ")
        ))),
    }
}

/// Whose backups to prune, and by which rule: the rule given for --profile, or each saved
/// profile's own (only --profile's when given). A name that could mean two klanten, or only
/// backups an older Kluis recorded under a bare label, is refused (see `find_klant`).
fn targets(
    cli: &Cli,
    history: &History,
    profile: Option<&str>,
    given: Option<Retention>,
) -> Result<Vec<Target>> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    if let Some(rule) = given {
        let Some(name) = profile else {
            return Err(Error::Config(
                "Say whose backups this rule is for: --profile NAME.".into(),
            ));
        };
        let klant = kluis_profiles::find_klant(&profiles.list(), history, name)?;
        klant.can_be_pruned()?;
        return Ok(vec![Target {
            key: klant.key(),
            name: klant.name().to_string(),
            rule,
        }]);
    }
    let chosen = match profile {
        Some(name) => vec![profiles
            .find(name)
            .map_err(kluis_profiles::ProfileError::into_core)?],
        None => profiles.list(),
    };
    let targets: Vec<Target> = (chosen.into_iter())
        .filter_map(|p| {
            let key = p.key();
            let rule = p.retention.filter(|r| !r.keeps_everything())?;
            Some(Target {
                key,
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

/// After a verified save of an ad-hoc klant `key` (`name` to the user), under its turn:
/// applies `rule` (as `kluis_profiles::unattended` does a saved profile's) and says what it
/// did through [`tell`].
pub async fn apply_rule(
    history: &Arc<History>,
    key: &KlantKey,
    name: &str,
    rule: Option<Retention>,
) {
    if let Some(step) = kluis_profiles::unattended::apply_rule(history.clone(), key, rule).await {
        tell(key, name, step);
    }
}

/// What a step after klant `key`'s save (`name` to the user) did, on stderr: where a copy
/// went, what a rule removed or left, what a monthly verification found, or why one of them
/// could not be done. The
/// backup stands either way.
pub fn tell(key: &KlantKey, name: &str, step: AfterSave) {
    match step {
        AfterSave::Pruned { pruned, .. }
            if pruned.removed.is_empty() && pruned.spared.is_empty() => {}
        AfterSave::Pruned { rule, pruned } => {
            let target = Target {
                key: key.clone(),
                name: name.to_string(),
                rule,
            };
            eprintln!("kluis: {}", summary(&target, &pruned, Mode::Delete));
            print_spared(&pruned);
        }
        AfterSave::PruneFailed(e) => eprintln!(
            "kluis: {name}: the backup is saved, but the retention rule could not be applied: {e}"
        ),
        AfterSave::Verified { verified, copies } => {
            let problems = |found: &mut dyn Iterator<Item = Finding>| {
                found.filter(|f| f.is_problem()).count()
            };
            let damaged = problems(&mut verified.iter().map(|v| v.check.finding));
            let lost = problems(&mut copies.iter().map(|c| c.check.finding));
            let copies_read = match copies.len() {
                0 => String::new(),
                n => format!("; {n} copies read back, {lost} with problems"),
            };
            eprintln!(
                "kluis: {name}: monthly verification: {} backups read again, {damaged} with problems{copies_read}{}",
                verified.len(),
                if damaged + lost == 0 { "." } else { " (see `kluis verify`)." }
            );
        }
        AfterSave::VerifyFailed(e) => {
            eprintln!("kluis: {name}: the monthly verification could not run: {e}")
        }
        AfterSave::RestoreTested(test) => {
            let of = (test.copy_on.as_ref()).map_or(String::new(), |t| format!(" of the copy on \"{t}\""));
            match &test.record {
                record if record.passed => eprintln!(
                    "kluis: {name}: monthly restore test{of} passed: {} entries, {} bytes.",
                    record.entries, record.bytes
                ),
                record => eprintln!(
                    "kluis: {name}: the monthly restore test{of} FAILED: {} (see `kluis restore-test --profile`).",
                    record.detail.as_deref().unwrap_or("the backup does not restore")
                ),
            }
        }
        AfterSave::RestoreTestFailed(e) => {
            eprintln!("kluis: {name}: the monthly restore test could not run: {e}")
        }
        AfterSave::Copied { target, location } => {
            eprintln!("kluis: {name}: copied to \"{target}\": {location}")
        }
        AfterSave::TargetPruned { pruned, .. }
            if pruned.removed.is_empty()
                && pruned.spared.is_empty()
                && pruned.locked.is_empty()
                && pruned.renewed == 0 => {}
        AfterSave::TargetPruned {
            target,
            rule,
            pruned,
        } => {
            eprintln!(
                "kluis: {name}: on \"{target}\", {} removed ({}); {} kept.",
                pruned.removed.len(),
                rule.describe(),
                pruned.kept
            );
            print_spared(&pruned);
            if let Some(until) = pruned.locked.iter().map(|(_, until)| *until).max() {
                eprintln!(
                    "kluis: {name}: {} copies on \"{target}\" wait for their Object Lock to end (at the latest {}); they are removed after.",
                    pruned.locked.len(),
                    crate::display::local(until)
                );
            }
            if pruned.renewed > 0 {
                eprintln!(
                    "kluis: {name}: {} kept copies on \"{target}\" locked again.",
                    pruned.renewed
                );
            }
        }
        AfterSave::TargetPruneFailed { target, error } => eprintln!(
            "kluis: {name}: the rule of copy target \"{target}\" could not be applied: {error}"
        ),
        AfterSave::CatalogWritten {
            target,
            other_kit: Some(theirs),
            ..
        } => eprintln!(
            "kluis: copy target \"{target}\" names another recovery kit ({theirs}) than this computer's. If your office made a new kit (its page in the safe shows {theirs}), make this computer use it: kluis recovery-kit --join, with that page's key — until then it does not open what this computer copies there. If it did not, someone else wrote that key there: make a new kit here (kluis recovery-kit), which writes this office's key again."
        ),
        AfterSave::CatalogWritten { .. } => {}
        AfterSave::CatalogFailed { target, error } => eprintln!(
            "kluis: the recovery catalog on \"{target}\" could not be written ({error}); it is tried again after the next copies."
        ),
        AfterSave::CopyFailed { target, error } => eprintln!(
            "kluis: {name}: the backup is saved here, but not yet copied to \"{target}\" (tried again after the next backup, or with `kluis copy --pending`): {error}"
        ),
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
