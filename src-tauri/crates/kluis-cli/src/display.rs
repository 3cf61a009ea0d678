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
        }
    }
}

/// Prints the history as a table, or as one JSON object per line.
pub fn history(entries: &[HistoryEntry], json: bool) {
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
            Stage::Saved => format!(
                "{} bytes  sha256 {}  {}",
                e.bytes.unwrap_or(0),
                e.sha256
                    .as_deref()
                    .map(|s| &s[..12.min(s.len())])
                    .unwrap_or(""),
                e.path.as_deref().unwrap_or("")
            ),
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
            e.profile,
            e.stage,
            duration,
            detail
        );
    }
}
