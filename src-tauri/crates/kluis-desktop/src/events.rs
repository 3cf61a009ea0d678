//! What a running backup tells the UI, streamed over a channel keyed by job.

use kluis_core::{Code, JobEvent, Progress, Saved, Stage};
use serde::{Deserialize, Serialize};

// (Deserialize: a window reads kluis-tray's backups' events, `mirror`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AppJobEvent {
    /// The job reached a stage of kluis-core's state machine.
    Stage {
        stage: Stage,
    },
    Progress {
        #[ts(type = "number")]
        bytes: u64,
        #[ts(type = "number | null")]
        total: Option<u64>,
        #[ts(type = "number")]
        bytes_per_sec: u64,
    },
    /// While the job waits: the service stopped answering, or answers again.
    Service {
        answering: bool,
    },
    /// Downloaded and verified; waiting for the user to choose where to keep it.
    Staged {
        file_name: String,
        #[ts(type = "number")]
        bytes: u64,
        sha256: String,
    },
    /// Saved and verified here; now copied to these copy targets (by name) before the job
    /// ends. The history already holds the backup as saved.
    Copying {
        targets: Vec<String>,
    },
    /// In its final place.
    Saved {
        path: String,
        #[ts(type = "number")]
        bytes: u64,
        sha256: String,
    },
    /// The try failed for a passing reason; the job tries again in `in_secs` (Cancel still
    /// ends it).
    Retrying {
        code: Code,
        message: String,
        #[ts(type = "number")]
        in_secs: u64,
    },
    Failed {
        code: Code,
        message: String,
    },
}

impl From<JobEvent> for AppJobEvent {
    fn from(event: JobEvent) -> Self {
        match event {
            JobEvent::Stage { stage } => AppJobEvent::Stage { stage },
            JobEvent::Progress(Progress {
                bytes,
                total,
                bytes_per_sec,
            }) => AppJobEvent::Progress {
                bytes,
                total,
                bytes_per_sec,
            },
            JobEvent::Service { answering } => AppJobEvent::Service { answering },
            JobEvent::Retrying {
                code,
                message,
                in_secs,
            } => AppJobEvent::Retrying {
                code,
                message,
                in_secs,
            },
        }
    }
}

/// The name a saved file has (what the save dialog is prefilled with).
pub(crate) fn file_name(saved: &Saved) -> String {
    saved
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl AppJobEvent {
    /// Verified in the staging folder, waiting for the user to choose a place.
    pub fn staged(saved: &Saved) -> Self {
        AppJobEvent::Staged {
            file_name: file_name(saved),
            bytes: saved.bytes,
            sha256: saved.sha256.clone(),
        }
    }

    /// The job ended with `error` (or could not start).
    pub fn failed(error: &kluis_core::Error) -> Self {
        AppJobEvent::Failed {
            code: error.code(),
            message: error.to_string(),
        }
    }

    pub fn saved(saved: &Saved) -> Self {
        AppJobEvent::Saved {
            path: saved.path.to_string_lossy().into_owned(),
            bytes: saved.bytes,
            sha256: saved.sha256.clone(),
        }
    }
}

/// Receives a job's events (the Tauri shell forwards them to the UI's channel).
pub type EventSink = std::sync::Arc<dyn Fn(AppJobEvent) + Send + Sync>;

/// An event of a job resumed at start, tagged with its job (several may run at once).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ResumedEvent {
    pub job_id: String,
    pub event: AppJobEvent,
}

/// Receives the events of every resumed job.
pub type ResumeSink = std::sync::Arc<dyn Fn(ResumedEvent) + Send + Sync>;

/// An event of a backup its plan started, tagged with the job and its klant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct PlannedEvent {
    pub job_id: String,
    pub profile_id: String,
    pub event: AppJobEvent,
}

/// Receives the events of every planned backup.
pub type PlannedSink = std::sync::Arc<dyn Fn(PlannedEvent) + Send + Sync>;
