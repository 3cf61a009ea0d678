//! What the CLI shows a person: stage lines and a progress bar on a terminal, and the history.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use kluis_core::history::format_utc;
use kluis_core::{HistoryEntry, JobEvent, Stage};

/// Shows the job's stages on stderr, only when stderr is a terminal (scripts get silence).
pub struct StageDisplay {
    bar: Option<ProgressBar>,
    timeout: Duration,
}

impl StageDisplay {
    pub fn new(timeout: Duration) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Self { bar, timeout }
    }

    pub fn show(&mut self, event: JobEvent) {
        let Some(bar) = &self.bar else { return };
        match event {
            JobEvent::Stage { stage } => {
                let message = match stage {
                    Stage::Requested => "Asking the service for a backup…".to_string(),
                    Stage::Accepted => format!(
                        "The service is making the backup; waiting for it to call back (up to {} min)…",
                        self.timeout.as_secs().div_ceil(60)
                    ),
                    Stage::CallbackReceived => "The service called back; fetching the download link…".into(),
                    Stage::ResultFetched | Stage::Downloading => "Downloading…".into(),
                    Stage::Saved | Stage::Failed => {
                        bar.finish_and_clear();
                        return;
                    }
                };
                bar.set_message(message);
            }
            JobEvent::Progress(p) => {
                if bar.length().is_none() {
                    if let Some(total) = p.total {
                        bar.set_length(total);
                        bar.set_style(
                            ProgressStyle::with_template(
                                "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
                            )
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                        );
                    }
                }
                bar.set_position(p.bytes);
            }
            JobEvent::Service { answering } => bar.set_message(if answering {
                "The service answers again; waiting for it to call back…"
            } else {
                "The service does not answer (checked every minute); still waiting for its callback…"
            }),
            JobEvent::Retrying {
                message, in_secs, ..
            } => bar.set_message(format!("{message} — trying again in {in_secs} s…")),
        }
    }
}

/// The history, newest first: JSON lines as recorded, or one line per backup with each klant
/// named by `names` (history key → name).
pub fn history(
    entries: &[HistoryEntry],
    names: &std::collections::BTreeMap<kluis_core::KlantKey, String>,
    json: bool,
) {
    if json {
        for entry in entries {
            println!(
                "{}",
                serde_json::to_string(entry).expect("history entries serialise")
            );
        }
        return;
    }
    if entries.is_empty() {
        eprintln!("No backups yet.");
        return;
    }
    for e in entries {
        let duration = e
            .finished_at_ms
            .map(|f| format!("{:.1}s", (f - e.started_at_ms) as f64 / 1000.0))
            .unwrap_or_default();
        let detail = match e.stage {
            Stage::Saved => {
                // What became of the file since: removed by a rule, or found damaged.
                let since = match (&e.removed, &e.last_check) {
                    (Some(removed), _) => format!("  (removed: {})", removed.rule),
                    (None, Some(check)) if check.finding.is_problem() => {
                        format!("  ({}: see `kluis verify`)", check.finding)
                    }
                    _ => String::new(),
                };
                format!(
                    "{} bytes  sha256 {}  {}{since}",
                    e.bytes.unwrap_or(0),
                    e.sha256
                        .as_deref()
                        .map(|s| &s[..12.min(s.len())])
                        .unwrap_or(""),
                    e.path.as_deref().unwrap_or("")
                )
            }
            Stage::Failed => format!(
                "at {}: {}",
                e.failed_stage.map(kluis_core::Stage::as_str).unwrap_or("?"),
                e.error_message.as_deref().unwrap_or("")
            ),
            // Running elsewhere, or stopped and kept for `kluis resume`.
            _ => format!(
                "unfinished: `kluis resume` finishes it, `kluis cancel {}` gives it up",
                e.id
            ),
        };
        println!(
            "{}  {:<8} {:<7} {:>7}  {}",
            format_utc(e.started_at_ms),
            names
                .get(&e.profile)
                .map_or(e.profile.as_str(), String::as_str),
            e.stage,
            duration,
            detail
        );
    }
}

/// A plan in words: "daily at 02:00", "every 6 hours (paused)", "manual".
pub fn describe_plan(plan: Option<&kluis_core::plan::Plan>) -> String {
    plan.map_or_else(|| "manual".into(), kluis_core::plan::Plan::in_words)
}

/// Local date and time of `ms`, minutes precision.
pub fn local(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| {
            t.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|_| "?".into())
}

/// "Bakker B.V.: daily at 02:00; next backup 2026-11-24 02:00."
pub fn plan_line(status: &kluis_profiles::KlantStatus) -> String {
    let next = match status.next_due_ms {
        Some(ms) => format!("; next backup {}", local(ms)),
        None => String::new(),
    };
    format!(
        "{}: {}{next}.",
        status.name,
        describe_plan(status.plan.as_ref())
    )
}

/// "; the monitor is pinged" when the profile has one (its URL is a capability: not shown).
pub fn monitor_note(profile: &kluis_profiles::Profile) -> &'static str {
    if profile.ping_url.is_some() {
        " Its monitor is pinged after each unattended backup."
    } else {
        ""
    }
}

/// Prints the profiles as a table, or as one JSON object per line (no secret is in them).
pub fn profiles(profiles: &[kluis_profiles::Profile], json: bool) {
    if json {
        for p in profiles {
            let line = serde_json::json!({
                "id": p.id, "name": p.name, "base_url": p.base_url, "username": p.username,
                "plan": p.plan, "monitor": p.ping_url.is_some(),
                "retention": p.retention, "tags": p.tags,
            });
            println!("{line}");
        }
        return;
    }
    if profiles.is_empty() {
        eprintln!("No profiles yet: add one with `kluis profiles add NAME`.");
        return;
    }
    for p in profiles {
        let tags = match p.tags.is_empty() {
            true => String::new(),
            false => format!("  [{}]", p.tags.join(", ")),
        };
        println!(
            "{:<24} {}  {}@{}  {}{tags}",
            p.name,
            p.id,
            p.username,
            p.base_url,
            describe_plan(p.plan.as_ref())
        );
    }
}

/// Prints each klant's standing: a table, or one JSON object per line.
pub fn status(statuses: &[kluis_profiles::KlantStatus], now: &jiff::Zoned, json: bool) {
    if json {
        for s in statuses {
            println!("{}", serde_json::to_string(s).expect("statuses serialise"));
        }
        return;
    }
    if statuses.is_empty() {
        eprintln!("No profiles yet: add one with `kluis profiles add NAME`.");
        return;
    }
    let now_ms = now.timestamp().as_millisecond();
    for s in statuses {
        let last = match s.last_success_ms {
            Some(ms) => format!("{} ({} ago)", local(ms), age(now_ms - ms)),
            None => "never".into(),
        };
        let state = if s.running {
            "running"
        } else if s.overdue {
            "OVERDUE"
        } else if s.last_error.is_some() {
            "FAILED"
        } else if s.last_success_ms.is_some() || s.office_backup.is_some() {
            "ok"
        } else {
            "-"
        };
        let next = s.next_due_ms.map(local).unwrap_or_else(|| "-".into());
        let error = s
            .last_error
            .as_ref()
            .map(|e| format!("  last error: {} ({})", e.message, e.code))
            .unwrap_or_default();
        // The last backup's copies off this computer, when copy targets are set.
        let copies = match &s.copies {
            Some(c) if c.made < c.wanted => format!(
                "  copies {}/{} ({})",
                c.made,
                c.wanted,
                c.last_error.as_deref().unwrap_or("not made yet")
            ),
            Some(c) => format!("  copies {}/{}", c.made, c.wanted),
            None => String::new(),
        };
        // Another PC of the office backed it up since (its file and copies are there).
        let elsewhere = match &s.office_backup {
            Some(b) => format!("  backed up {} by {}", local(b.at_ms), b.by),
            None => String::new(),
        };
        println!(
            "{:<24} {:<8} last verified {:<30} next {}{elsewhere}{error}{copies}",
            s.name, state, last, next
        );
    }
}

/// "3 min", "5 h", "2 d".
fn age(ms: i64) -> String {
    let minutes = ms.max(0) / 60_000;
    match minutes {
        0..=59 => format!("{minutes} min"),
        60..=2879 => format!("{} h", minutes / 60),
        _ => format!("{} d", minutes / 1440),
    }
}

/// The office view (`kluis office status`): the PCs and when each was last heard of, then the
/// klanten — those needing attention first, each with why and whose desk it is at — then a
/// line that says whether every klant is safe.
pub fn office_view(membership: &kluis_office::Membership, view: &kluis_office::OfficeView) {
    use kluis_office::Flag;
    // Names and errors come from other PCs (and their klanten's services): no control
    // characters reach the terminal.
    let plain = |text: &str| -> String { text.chars().filter(|c| !c.is_control()).collect() };
    println!(
        "Office hub: {}   (this PC: {})",
        membership.hub, membership.pc
    );
    println!("PCs:");
    for pc in &view.pcs {
        let mut state = format!("heard {} ago", age(pc.heard_ms_ago));
        if pc.silent {
            state = format!("SILENT — {state}");
        }
        if pc.revoked {
            state.push_str(", revoked");
        }
        if let Some(why) = &pc.unreadable {
            state.push_str(&format!(", {}", plain(why)));
        }
        println!("  {:<24} {state}; {} klanten", pc.name, pc.klanten);
    }
    println!("Klanten ({}):", view.klanten.len());
    for k in &view.klanten {
        let last = match &k.last_backup {
            Some((at, pc)) => format!("last backup {} by {pc}", local(*at)),
            None => "never backed up".into(),
        };
        let pcs: Vec<&str> = k.on.iter().map(|o| o.pc.as_str()).collect();
        let state = if k.flags.is_empty() {
            "ok"
        } else {
            "ATTENTION"
        };
        println!(
            "  {:<24} {state:<9} {last}; on {}",
            plain(&k.names.join(" / ")),
            pcs.join(", ")
        );
        for flag in &k.flags {
            let why = match flag {
                Flag::PlannedTwice { pcs } => {
                    format!("planned on {} (one plan is enough)", pcs.join(" and "))
                }
                Flag::Overdue => "overdue on every PC that plans it".into(),
                Flag::Failed { pc, error } => format!("failed on {pc}: {}", plain(error)),
                Flag::OnSilentPc { pc } => {
                    format!("only on {pc}, not heard of for over a day (its last state shown)")
                }
                Flag::OnRevokedPc { pc } => {
                    format!("only on {pc}, whose key was revoked: plan it on another PC")
                }
                Flag::Unconfirmed { pc, by } => format!(
                    "{pc} skipped it as backed up by {by}, and {by}'s own report shows no such backup: look at {by}"
                ),
                Flag::NotPlanned => "no PC the office hears of plans it (backed up only by hand)".into(),
            };
            println!("      - {why}");
        }
    }
    match view.all_safe() {
        true => println!("Every klant of the office is backed up as planned."),
        false => println!("Not every klant is safe: see ATTENTION above."),
    }
}
