//! `kluis verify`: every backup the history keeps read again (kluis-core's verify), each
//! problem listed with what to do, exit code 7 when there is one.

use std::time::Instant;

use kluis_core::verify::{verify_kept, Finding, Verified};
use kluis_core::{Error, KlantKey, Result};
use serde::Serialize;

use crate::args::Cli;
use crate::from_args::{open_history, open_profiles};

pub async fn run(cli: &Cli, profile: Option<&str>, json: bool) -> Result<()> {
    // Without a profiles file, backups are named by their history key.
    let saved = (open_profiles(cli.profiles_file.as_ref()).ok())
        .map(|p| p.list())
        .unwrap_or_default();
    let history = open_history(cli.history_db.as_ref())?;
    let names = kluis_profiles::klant_names(&saved, &history)?;
    let klant =
        (profile.map(|name| kluis_profiles::find_klant(&saved, &history, name))).transpose()?;
    let key = klant.map(|klant| klant.key());
    let started = Instant::now();
    // Reading every file is blocking work: off the async thread, which also watches Ctrl-C.
    let verified = tokio::task::spawn_blocking(move || verify_kept(&history, key.as_ref()))
        .await
        .map_err(|e| Error::Io(format!("Verification stopped unexpectedly ({e}).")))??;
    let seconds = started.elapsed().as_secs_f64();
    let name_of = |key: &KlantKey| names.get(key).cloned().unwrap_or_else(|| key.to_string());
    if json {
        for v in &verified {
            let line = JsonLine::of(v, name_of(&v.entry.profile));
            println!(
                "{}",
                serde_json::to_string(&line).expect("plain values serialise")
            );
        }
    } else {
        print_problems(&verified, &name_of);
        summary(&verified, seconds);
    }
    let problems = verified.iter().filter(|v| v.check.finding.is_problem());
    match problems.count() {
        0 => Ok(()),
        n => Err(Error::BackupsDamaged(format!(
            "{n} of {} backups cannot be relied on (listed above). Back up those klanten again; a file that was moved can be put back where the history says.",
            verified.len()
        ))),
    }
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
        println!(
            "{:<15} {}  {}  {}",
            v.check.finding,
            name_of(&v.entry.profile),
            kluis_core::history::format_utc(saved),
            v.entry.path.as_deref().unwrap_or("")
        );
        if let Some(detail) = &v.check.detail {
            println!("{:<15} {detail}", "");
        }
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
