//! [`PcReport`]: what a PC tells the office, sealed ([`crate::sealed`]) — each of its klanten
//! with its service and username, its plan, its last backup here and how it went, its copies
//! and restore tests, and when it is next due. Sent after a run of backups and at least hourly;
//! the hub keeps each PC's last. Made by kluis-profiles from the klanten's standing.

use serde::{Deserialize, Serialize};

/// The report's format; a PC reads the ones it knows.
pub const REPORT_VERSION: u32 = 1;

/// One PC's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcReport {
    pub version: u32,
    /// The PC that sent it (checked against the name the hub keeps it under).
    pub pc: String,
    /// When it was sent, by the PC's clock.
    pub sent_ms: i64,
    pub klanten: Vec<KlantReport>,
}

/// One klant as a PC reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KlantReport {
    /// Its id at the hub ([`crate::KlantId`]): the same on every PC that has the klant.
    pub klant: String,
    /// Its name on this PC.
    pub name: String,
    /// The service's address and the username (the id is made of them).
    pub service: String,
    pub username: String,
    /// Its plan in words ("every day at 02:00"), or none: backed up by hand only.
    pub plan: Option<String>,
    /// When this PC last backed it up, verified (by its clock).
    pub last_backup_ms: Option<i64>,
    /// Another PC backed it up later (this PC skipped it): when, and which.
    pub backed_up_elsewhere: Option<(i64, String)>,
    /// The newest failure since that backup, in a line.
    pub last_error: Option<String>,
    /// Its plan had a slot a while ago with no backup since (on any PC this one heard of).
    pub overdue: bool,
    /// When its plan is next due (this PC's clock).
    pub next_due_ms: Option<i64>,
    /// Copies of its last backup off this PC: made of wanted.
    pub copies: Option<(u32, u32)>,
    /// Its last restore test failed, or is overdue.
    pub restore_test_failed: bool,
    pub restore_test_overdue: bool,
}
