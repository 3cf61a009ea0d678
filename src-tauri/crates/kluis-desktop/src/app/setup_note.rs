//! `update-started`, beside the history: when a setup was last started by itself (seconds since
//! 1970, in the note's own text: a file's time on a share may be another clock's), of which
//! version, and whether its not installing was told — `1764300000 0.2.0`, or
//! `1764300000 0.2.0 told`. `Updates` starts no setup by itself within a day of it, and tells
//! one that did not install.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// See the module's text.
pub(super) struct StartedNote {
    at: u64,
    pub(super) version: String,
    pub(super) told: bool,
}

impl StartedNote {
    /// The note's file beside `stamp` (the looks' stamp, beside the history).
    pub(super) fn beside(stamp: &Path) -> PathBuf {
        stamp.with_file_name("update-started")
    }

    /// A setup of `version` started now.
    pub(super) fn now(version: &str) -> StartedNote {
        StartedNote {
            at: unix_now(),
            version: version.into(),
            told: false,
        }
    }

    /// The note at `file` when it was written less than `within` from now — either way: one
    /// more than that ahead of the clock (a clock set back by days) is no longer taken; one
    /// less ahead is.
    pub(super) fn within(file: &Path, within: Duration) -> Option<StartedNote> {
        let note = StartedNote::read(file)?;
        (unix_now().abs_diff(note.at) < within.as_secs()).then_some(note)
    }

    /// The same note, its not installing told.
    pub(super) fn told(self) -> StartedNote {
        StartedNote { told: true, ..self }
    }

    /// How long ago it was noted (nothing, when ahead of the clock).
    pub(super) fn age(&self) -> Duration {
        Duration::from_secs(unix_now().saturating_sub(self.at))
    }

    fn read(file: &Path) -> Option<StartedNote> {
        let text = std::fs::read_to_string(file).ok()?;
        let mut words = text.split_whitespace();
        Some(StartedNote {
            at: words.next()?.parse().ok()?,
            version: words.next().unwrap_or_default().chars().take(40).collect(),
            told: words.next() == Some("told"),
        })
    }

    /// Written whole and owner-only.
    pub(super) fn write(&self, file: &Path) -> std::io::Result<()> {
        let told = if self.told { " told" } else { "" };
        let text = format!("{} {}{told}\n", self.at, self.version);
        kluis_private::files::write_atomic(file, text.as_bytes())
    }
}

/// Seconds since 1970 by this computer's clock.
fn unix_now() -> u64 {
    (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH))
        .map(|d| d.as_secs())
        .unwrap_or_default()
}
