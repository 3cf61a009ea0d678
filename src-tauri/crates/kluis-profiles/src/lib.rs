//! kluis-profiles: the klanten Kluis backs up, shared by the desktop app and the `kluis` CLI
//! so that both see the same profiles, plans and history. No Tauri, no UI.
//!
//! Parts and data flow:
//! - [`paths`]: [`KluisPaths`], where the profiles file, the history and the app's staging
//!   folder live (the platform's folders, or one folder for tests).
//! - [`store`]: [`Profile`] (name, base URL, username, what the key was seen to allow, an extra
//!   CA, a [`kluis_core::plan::Plan`]) and the office's [`Settings`] ([`settings`]; among them
//!   the window's [`Language`], [`language`], which the tray speaks too), in one
//!   owner-only JSON file written atomically ([`ProfileStore`]). A profile becomes a `ServiceConfig` with its
//!   secrets ([`Profile::service_config`]); an unattended backup goes where
//!   [`Profile::unattended_destination`] says (a folder per klant, the file named by the
//!   office's [`FileNameTemplate`], [`file_names`]: klant and date unless changed). The
//!   app and `kluis` commands share the file while both run (`shared_file`): each read sees
//!   the other's last save, each change is made to the newest content under a lock beside it.
//! - [`secrets`]: the api key, password and relay secret, kept by a [`SecretStore`]: the OS
//!   keyring ([`KeyringStore`]), memory ([`MemoryStore`], demo and tests) or, where no keyring
//!   can be unlocked and only when asked for, owner-only files ([`SecretsFolder`]).
//! - [`status`]: a klant's standing ([`KlantStatus`]) read from its plan and the history: last
//!   verified backup, last failure since, next due, overdue, and its last 30 days ([`days`]:
//!   saved, failed, missed or free), which the app's dashboard shows.
//! - [`monitor`]: a klant's outside monitor (healthchecks style): a ping after each
//!   unattended backup, `/fail` on failure.
//! - [`recovery_kit`]: the office's recovery kit as this computer makes it — the key, the
//!   setting it keeps (the public half), and the page to print.
//! - [`turn`]: one backup of a klant at a time across processes ([`take_turn`]), so the app's
//!   plans and `kluis run-due` from a timer never run the same plan twice.
//! - [`office`]: across the PCs of an office, the klant's office-wide turn at the office hub
//!   (kluis-office): a plan's backup another PC made in this slot is skipped and recorded,
//!   the hub's absence said once and never a reason to skip.
//! - [`unattended`]: one klant's unattended backup, written once for the app and the CLI —
//!   its turn, its plan looked at again, the job, its retention rule and monthly verification,
//!   its monitor — with what differs passed in by the host ([`UnattendedHost`]).
//! - [`klant_names`]: which klant a name on the command line means ([`find_klant`]: a saved
//!   profile, an ad-hoc klant, or an older label; an ambiguous name is an error), and each
//!   history key's name for a person.
//! - [`recover`]: on a new computer, what the catalogs and records on a copy target say
//!   (read with the kit's key), one backup restored from it, and this computer carrying on
//!   for the lost one ([`recover::adopt`]) — for the app and `kluis recover` alike.
//! - [`catalogs`]: after a run of copies, each target's recovery catalog and the copies'
//!   records, sealed to the office's recovery key (kluis-recovery's documents).
//! - [`error`]: [`ProfileError`], the crate's one error type.

pub mod catalogs;
pub mod days;
pub mod error;
pub mod file_names;
pub mod klant_names;
pub mod language;
pub mod monitor;
pub mod office;
pub mod paths;
pub mod recover;
pub mod recovery_kit;
pub mod restore_round;
pub mod secrets;
pub mod settings;
mod shared_file;
pub mod status;
pub mod store;
pub mod turn;
pub mod unattended;

pub use days::{DayMark, STRIP_DAYS};
pub use error::{ProfileError, ProfileResult};
pub use file_names::FileNameTemplate;
pub use klant_names::{find_klant, klant_names, Klant};
pub use language::Language;
pub use monitor::{Monitor, Ran};
pub use office::{Office, Skipped};
pub use paths::KluisPaths;
pub use secrets::{
    DemoSecrets, KeyringStore, MemoryStore, SecretKind, SecretStore, SecretsFolder, APP,
};
pub use settings::Settings;
pub use status::{
    klant_status, klant_statuses, last_started, plan_due, Copies, KlantStatus, LastError,
};
pub use store::{Endpoint, Profile, ProfileStore};
pub use turn::{take_report_turn, take_turn};
pub use unattended::{KlantTurn, Turn, UnattendedHost};
