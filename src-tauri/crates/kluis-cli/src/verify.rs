//! `kluis verify`: every backup the history keeps read again (kluis-core's verify), and each
//! of its copies off this computer looked at (kluis-copies' check); each problem listed with
//! what to do, exit code 7 when there is one.

use std::sync::Arc;
use std::time::Instant;

use kluis_copies::{check_copies, CopyChecked};
use kluis_core::history::Check;
use kluis_core::verify::{verify_kept, Finding, Verified};
use kluis_core::{Error, KlantKey, Result};
use serde::Serialize;

use crate::args::Cli;
use crate::from_args::{open_history, open_profiles};

pub async fn run(cli: &Cli, profile: Option<&str>, read_back: bool, json: bool) -> Result<()> {
    // Without a profiles file, backups are named by their history key.
    let profiles = open_profiles(cli.profiles_file.as_ref()).ok();
    let saved = profiles.as_ref().map(|p| p.list()).unwrap_or_default();
    let targets = (profiles.map(|p| p.settings().copy_targets)).unwrap_or_default();
    let targets = crate::targets::with_secrets(targets).await?;
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let names = kluis_profiles::klant_names(&saved, &history)?;
    let klant =
        (profile.map(|name| kluis_profiles::find_klant(&saved, &history, name))).transpose()?;
    let key = klant.map(|klant| klant.key());
    let started = Instant::now();
    // Reading every file is blocking work: off the async thread, which also watches Ctrl-C.
    let verified = tokio::task::spawn_blocking({
        let (history, key) = (history.clone(), key.clone());
        move || verify_kept(&history, key.as_ref())
    })
    .await
    .map_err(|e| Error::Io(format!("Verification stopped unexpectedly ({e}).")))??;
    let copies = tokio::task::spawn_blocking(move || {
        check_copies(&history, &targets, key.as_ref(), read_back)
    })
    .await
    .map_err(|e| Error::Io(format!("Checking the copies stopped unexpectedly ({e}).")))??;
    let seconds = started.elapsed().as_secs_f64();
    let name_of = |key: &KlantKey| names.get(key).cloned().unwrap_or_else(|| key.to_string());
    if json {
        for v in &verified {
            print_json(&JsonLine::of(v, name_of(&v.entry.profile)));
        }
        for c in &copies {
            print_json(&CopyLine::of(c, name_of(&c.entry.profile)));
        }
    } else {
        print_problems(&verified, &name_of);
        print_copy_problems(&copies, &name_of);
        summary(&verified, seconds);
        copies_summary(&copies);
    }
    let problems = verified.iter().filter(|v| v.check.finding.is_problem());
    let copy_problems = (copies.iter())
        .filter(|c| c.check.finding.is_problem())
        .count();
    match (problems.count(), copy_problems) {
        (0, 0) => Ok(()),
        (0, n) => Err(Error::BackupsDamaged(format!(
            "{n} of {} copies off this computer cannot be relied on (listed above); the backups here are intact. Each is copied again after its klant's next backup, or now with `kluis copy --pending`.",
            copies.len()
        ))),
        (n, _) => Err(Error::BackupsDamaged(format!(
            "{n} of {} backups cannot be relied on (listed above). Back up those klanten again; a file that was moved can be put back where the history says.",
            verified.len()
        ))),
    }
}

/// A copy's line of `--json`: its backup, where the copy is and what was found.
#[derive(Serialize)]
struct CopyLine<'a> {
    job: &'a str,
    profile: String,
    copy_target: &'a str,
    location: Option<&'a str>,
    finding: Finding,
    detail: Option<&'a str>,
    checked_at_ms: i64,
}

impl<'a> CopyLine<'a> {
    fn of(c: &'a CopyChecked, profile: String) -> Self {
        CopyLine {
            job: &c.entry.id,
            profile,
            copy_target: &c.target.name,
            location: c.record.location.as_deref(),
            finding: c.check.finding,
            detail: c.check.detail.as_deref(),
            checked_at_ms: c.check.at_ms,
        }
    }
}

/// One JSON line on stdout.
fn print_json(line: &impl Serialize) {
    let text = serde_json::to_string(line).expect("plain values serialise");
    println!("{text}");
}

/// One problem's lines: what was found, of which klant, `what` (a date, or which copy) and
/// where; then its detail.
fn print_problem(check: &Check, klant: String, what: &str, place: Option<&str>) {
    println!(
        "{:<15} {klant}  {what}  {}",
        check.finding,
        place.unwrap_or("")
    );
    if let Some(detail) = &check.detail {
        println!("{:<15} {detail}", "");
    }
}

fn print_copy_problems(copies: &[CopyChecked], name_of: &dyn Fn(&KlantKey) -> String) {
    for c in copies.iter().filter(|c| c.check.finding.is_problem()) {
        let what = format!("copy on \"{}\"", c.target.name);
        let place = c.record.location.as_deref();
        print_problem(&c.check, name_of(&c.entry.profile), &what, place);
    }
}

fn copies_summary(copies: &[CopyChecked]) {
    if copies.is_empty() {
        return;
    }
    let problems = (copies.iter())
        .filter(|c| c.check.finding.is_problem())
        .count();
    eprintln!(
        "Checked {} copies off this computer: {} as made, {problems} with problems.",
        copies.len(),
        copies.len() - problems
    );
}

#[derive(Serialize)]
struct JsonLine<'a> {
    job: &'a str,
    profile: String,
    path: Option<&'a str>,
    bytes: Option<u64>,
    sha256: Option<&'a str>,
    finding: Finding,
    detail: Option<&'a str>,
    checked_at_ms: i64,
}

impl<'a> JsonLine<'a> {
    fn of(v: &'a Verified, profile: String) -> Self {
        JsonLine {
            job: &v.entry.id,
            profile,
            path: v.entry.path.as_deref(),
            bytes: v.entry.bytes,
            sha256: v.entry.sha256.as_deref(),
            finding: v.check.finding,
            detail: v.check.detail.as_deref(),
            checked_at_ms: v.check.at_ms,
        }
    }
}

fn print_problems(verified: &[Verified], name_of: &dyn Fn(&KlantKey) -> String) {
    for v in verified.iter().filter(|v| v.check.finding.is_problem()) {
        let saved = v.entry.finished_at_ms.unwrap_or(v.entry.started_at_ms);
        let when = kluis_core::history::format_utc(saved);
        print_problem(
            &v.check,
            name_of(&v.entry.profile),
            &when,
            v.entry.path.as_deref(),
        );
    }
}

fn summary(verified: &[Verified], seconds: f64) {
    if verified.is_empty() {
        eprintln!("No saved backups to verify.");
        return;
    }
    let intact: Vec<_> = (verified.iter())
        .filter(|v| v.check.finding == Finding::Intact)
        .collect();
    let bytes: u64 = intact.iter().filter_map(|v| v.entry.bytes).sum();
    let mib = bytes as f64 / (1024.0 * 1024.0);
    eprintln!(
        "Verified {} backups in {seconds:.1} s: {} intact ({mib:.0} MiB read, {:.0} MiB/s), {} with problems.",
        verified.len(),
        intact.len(),
        mib / seconds.max(0.001),
        verified.len() - intact.len(),
    );
}
