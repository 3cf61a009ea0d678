//! kluis-restore: what is in a saved backup, and getting it back — "is my 2025 administration
//! in there?" answered without opening the file by hand, and the proof that a backup restores.
//!
//! Parts and data flow:
//! - [`archive`]: a backup's zip archive opened and bounded ([`Backup::open`]): its entries as
//!   the office sees them ([`Entry`]: path, size, date), and a bomb refused before anything is
//!   inflated (entries sharing bytes, or inflating past [`kluis_core::MOST_INFLATION`] times
//!   the archive).
//! - [`entry_path`]: an entry's name made a path inside the restore folder, or refused: never
//!   outside it (`..`, absolute paths, drive letters, backslashes), Windows' reserved names and
//!   characters made safe as saved backups' names are.
//! - [`restore`]: entries (all, or those under the paths asked for) written into a folder:
//!   planned first (every name checked, two that are one name to the folder's file system —
//!   [`same_name`] — not both written, entries, folders and depth bounded, nothing existing
//!   replaced unless asked), then each file written to a part file, its size and CRC-32
//!   checked as it inflates, within the room on the disk ([`room`]), and only then given its
//!   name — a failure leaves no half-written file.
//! - [`restore_test`]: the whole backup restored into an owner-only temporary folder, every
//!   entry checked, the folder removed; [`test_and_record`] tests a saved backup and records
//!   the result in the history (kluis-core's `restore_tests`).
//!
//! Everything here is blocking (files are read and written whole): the front ends call it
//! from a blocking thread. An encrypted backup is decrypted ahead on a thread of its own
//! (`prefetch.rs`), so that decrypting and inflating share the cores.

pub mod archive;
pub mod entry_path;
#[cfg(test)]
mod fuzz;
mod prefetch;
pub mod restore;
pub mod restore_test;
pub mod room;
pub mod same_name;

pub use archive::{Backup, Entry};
pub use restore::{restore, Most, RestoreOptions, Restored};
pub use restore_test::{restore_test, test_and_record, RestoreTested};
pub use room::Room;
pub use same_name::NameRule;
