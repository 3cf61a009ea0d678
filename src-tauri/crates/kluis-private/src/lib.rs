//! kluis-private: what every Kluis program keeps to the user — owner-only files, and secrets
//! kept out of every message and log line.
//!
//! - [`files`]: owner-only files (0600) and folders (0700) whatever the umask (on Windows a
//!   protected ACL of the user's own), and [`files::write_atomic`]: a file written whole or
//!   not at all, beside its target under a random name created exclusively.
//! - [`scrub`]: every secret alive registers itself; [`scrub::scrub`] removes each, in every
//!   encoding a server may echo it in, from text on its way to a log, a file or a screen.
//! - `database` (feature `database`): SQLite files several processes open at once, opened
//!   in WAL mode without failing when two open a new one together.
//! - [`logging`]: `KLUIS_LOG` set-up that keeps the HTTP libraries from logging secrets, each
//!   line through the scrubber.
//!
//! Data flow: a secret is made (`kluis_core::Secret::new`) → [`scrub::register`]; a message
//! is made or logged → [`scrub::scrub`] → stderr, the history, the UI; a file is written →
//! [`files::options`] / [`files::write_atomic`] → owner-only on disk.

#[cfg(feature = "database")]
pub mod database;
pub mod files;
pub mod logging;
pub mod scrub;
