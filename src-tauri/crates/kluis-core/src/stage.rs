//! [`Stage`]: where a backup job is — a leaf that the job, the history and the journal all
//! import, and that imports nothing of theirs.

use serde::{Deserialize, Serialize};

/// Where a job is.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Recorded; the callback receiver is ready and the POST is being sent.
    Requested,
    /// The service answered 202: it is making the backup.
    Accepted,
    /// A callback with an id arrived.
    CallbackReceived,
    /// `GET /webhook` gave the download link.
    ResultFetched,
    Downloading,
    Saved,
    Failed,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Requested => "requested",
            Stage::Accepted => "accepted",
            Stage::CallbackReceived => "callback_received",
            Stage::ResultFetched => "result_fetched",
            Stage::Downloading => "downloading",
            Stage::Saved => "saved",
            Stage::Failed => "failed",
        }
    }

    /// `saved` or `failed`: the job has ended.
    pub fn is_final(self) -> bool {
        matches!(self, Stage::Saved | Stage::Failed)
    }

    pub const ALL: [Stage; 7] = [
        Stage::Requested,
        Stage::Accepted,
        Stage::CallbackReceived,
        Stage::ResultFetched,
        Stage::Downloading,
        Stage::Saved,
        Stage::Failed,
    ];

    pub fn parse(text: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

crate::stable_names!(Stage);
