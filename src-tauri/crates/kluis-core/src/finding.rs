//! What reading a saved backup again found ([`Finding`]): recorded in the history, shown by
//! the CLI and the app, and what retention checks before it deletes. (A leaf: the history,
//! verification and `examine` import it.)

use serde::Serialize;

/// What reading a saved backup again found.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// Length and SHA-256 as recorded (and, for a zip archive, every entry reads back).
    Intact,
    /// No file at the recorded place.
    Missing,
    /// The file is there but its length or SHA-256 is not what was saved.
    Changed,
    /// The file could not be read (permissions, a disk error, not a file).
    Unreadable,
    /// The file is as it was saved, but the zip archive in it is damaged: the service sent a
    /// broken backup.
    ArchiveDamaged,
}

impl Finding {
    pub const ALL: [Finding; 5] = [
        Finding::Intact,
        Finding::Missing,
        Finding::Changed,
        Finding::Unreadable,
        Finding::ArchiveDamaged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Finding::Intact => "intact",
            Finding::Missing => "missing",
            Finding::Changed => "changed",
            Finding::Unreadable => "unreadable",
            Finding::ArchiveDamaged => "archive_damaged",
        }
    }

    pub fn parse(text: &str) -> Option<Finding> {
        Finding::ALL.into_iter().find(|f| f.as_str() == text)
    }

    /// Anything but intact: a backup that cannot be relied on.
    pub fn is_problem(self) -> bool {
        self != Finding::Intact
    }
}

crate::stable_names!(Finding);
