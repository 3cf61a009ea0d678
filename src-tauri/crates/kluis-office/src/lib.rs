//! kluis-office: this PC's side of the office hub (`kluis-relay`'s `/api/office`), so that the
//! PCs of one office back each klant up once per slot, not twice and not by nobody. No Tauri,
//! no UI; kluis-profiles takes a klant's office-wide turn through it before an unattended
//! backup.
//!
//! Parts and data flow:
//! - [`membership`]: [`Membership`], the office this PC joined — the hub's address, this PC's
//!   name there, the hub's CA — kept in the settings file; the two secrets beside it (this
//!   PC's key at the hub, the office key) live in the keyring, kept by the caller.
//! - [`key`]: the [`OfficeKey`] the office's PCs share and the hub never holds, and the
//!   [`KlantId`] made with it of a klant's service host and username: the hub learns no name,
//!   host or username, and every PC that plans the klant, however it named it, makes the same.
//! - [`hub`]: [`Hub`], the hub's API as this PC uses it (its key sent to the hub's origin
//!   only, every call bounded by a few seconds): a klant's turn asked for ([`TurnAnswer`]),
//!   renewed and ended, the office's PCs listed and revoked.
//! - [`join_code`]: [`JoinCode`], what a PC of the office gives the next to join (the hub's
//!   address, a one-time enrolment token, the office key) as one line, never through the hub.
//! - [`lease`]: [`Lease`], a turn this PC holds, renewed in the background while the backup
//!   runs (a backup can take hours; a crashed PC's turn runs out, a slow one's does not), and
//!   ended with whether the klant was backed up.
//! - [`report`]: [`PcReport`], what a PC tells the office of its klanten (their plans, last
//!   backups, failures, copies, restore tests), [`sealed`] with the office key before it goes
//!   to the hub, which keeps each PC's last as bytes it cannot read.
//! - [`view`]: [`OfficeView`], the PCs' reports opened and put together — every klant of
//!   every PC, and what needs attention flagged (planned twice, a silent PC, overdue on every
//!   PC, failed, not planned).
//! - `reading`: [`OfficeView::read`], the view read from the hub — every PC's report opened
//!   with the office key, and the PCs that sent none said.
//! - [`error`]: [`OfficeError`], the crate's one error type, with a stable code.
//!
//! Where the hub is silent or gone, nothing here decides to skip a backup: a call that fails
//! is an error the caller says once and then goes on alone (a klant may be backed up twice,
//! never zero times).

pub mod error;
pub mod hub;
pub mod join_code;
pub mod key;
pub mod lease;
pub mod membership;
mod reading;
pub mod report;
pub mod sealed;
pub mod view;

pub use error::{OfficeError, OfficeResult};
pub use hub::{Hub, PcSummary, SealedReport, TurnAnswer};
pub use join_code::JoinCode;
pub use key::{KlantId, OfficeKey};
pub use lease::Lease;
pub use membership::Membership;
pub use report::{KlantReport, PcReport, REPORT_VERSION};
pub use view::{Flag, OfficeView, Received};
