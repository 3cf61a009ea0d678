//! kluis-core: everything Kluis does, without a user interface.
//!
//! A backup flows through the parts in this order:
//!
//! 1. [`config`] — [`ServiceConfig`]: base URL (https, path prefix kept), api_key, username,
//!    password (as [`Secret`]s), extra CA, timeouts.
//! 2. [`client`] — [`ServiceClient`]: one method per endpoint (`/authenticate`,
//!    `/util/environment`, `/backup/owner`, `/webhook`), built on [`http`] (TLS trust,
//!    redirect rules, bounded JSON, retries of idempotent calls).
//! 3. [`session`] — [`Session`]: reuses the 30-minute token, renews it single-flight before it
//!    expires, and re-authenticates once on 401 (or a stale 403).
//! 4. [`callback`] — a [`CallbackTransport`] gives the job a `webhook_url` and then the ids the
//!    service calls it with: a listener here ([`callback::ListenerTransport`], loopback or
//!    behind the office's proxy), a kluis-relay inbox ([`callback::RelayTransport`]), a
//!    cloudflared quick tunnel or webhook.site.
//! 5. [`download`] — [`Downloader`]: plain GET of `data.url` (never with the token), streamed to
//!    a hidden part file with SHA-256 (encrypted on the way when the profile asks:
//!    [`encryption`], age), resumed after cuts, verified, linked into place.
//! 6. [`job`] — [`BackupJob`]: the state machine that drives 2–5 and records every stage in
//!    [`history`] (SQLite). It writes a [`journal`] before the POST, so that a job interrupted
//!    by a stop or a crash is finished later by [`BackupJob::resume`] (`kluis resume`, the
//!    app at start); a claim (a file lock) keeps two processes off one job. Its durable
//!    writes (the journal, the end) are made on tokio's blocking pool (`durable`), so a
//!    batch's other downloads go on while the disk syncs.
//!
//! 7. [`engine`] — [`Engine`]: what the front ends (the `kluis` CLI, the desktop app) drive:
//!    the callback choice built into a transport, one connection per service, jobs started
//!    as tasks with a stream of events, cancel/stop/shutdown, and the one resume loop.
//!
//! After a backup is saved: [`verify`] reads every kept file again (length, SHA-256, a zip
//! archive's entries) and records what it found in the history; [`retention`] applies a
//! profile's rule (keep the last N, daily/weekly/monthly), deleting only files Kluis saved
//! that still verify, never the newest good one (`examine`: each file read through a
//! descriptor opened in its folder, and unlinked through it, so a swapped folder cannot
//! redirect a deletion). [`copies`] records each backup's copies off this computer (made by
//! kluis-copies): where, its length and SHA-256, or why the last try failed; [`adopted`]
//! records the backups and copies of a lost computer that this one carries on for; [`past`] a
//! saved backup at the times it happened (the demo's month of history); [`office_backups`] a
//! klant's backups made by another PC of the office (the office hub said so), which its plan
//! counts from. [`history`]'s tables (its own, the copies', the restore tests' and the office's
//! backups) are made in `schema`, a leaf they share.
//!
//! [`ad_hoc`] names the klant of a backup made without a saved profile (its label, service,
//! username and folder), so that a rule given on the command line keeps to that klant.
//!
//! [`stage`] and [`clock`] are leaves the others import: where a job is, and what time it is.
//! [`trust`] reads and describes the extra CAs a profile may trust (subject, fingerprint);
//! [`presented`] describes the certificate a server sent, for a certificate failure's message.
//! [`plan`] holds a profile's backup plan and the one due-computation (catch-up once,
//! daylight-saving safe) that the app and `kluis run-due` share.
//! [`error`] holds the one error type, with stable codes and messages that say what to do.
//! [`filename`] turns a hostile `Content-Disposition` into a safe name. Every parser that sees
//! the network is property-tested in `fuzz.rs`.
//!
//! Where the service's document is silent, the choices are a careful client's and are written
//! beside the code that makes them (status handling in [`client`], retries in [`http`], token
//! renewal in [`session`], the callback receiver's rules in [`callback::listener`]).

pub mod ad_hoc;
pub mod adopted;
pub mod callback;
mod certificate;
pub mod claims;
pub mod client;
pub mod clock;
pub mod config;
pub mod copies;
pub mod download;
mod durable;
pub mod encryption;
pub mod engine;
pub mod error;
mod examine;
pub mod restore_tests;
/// How many times its own size a zip archive may inflate to before it is taken for a bomb
/// (verification and restore both stop there).
pub use examine::MOST_INFLATION;
pub mod filename;
mod finding;
#[cfg(test)]
mod fuzz;
pub mod history;
pub mod http;
pub mod job;
pub mod journal;
pub mod klant_key;
pub mod office_backups;
pub mod past;
pub mod plan;
pub mod presented;
#[cfg(any(test, feature = "property-tests"))]
pub mod property;
pub mod retention;
mod schema;
pub mod secret;
pub mod session;
mod stable_name;
pub mod stage;
mod tls_trust;
pub mod trust;
pub mod verify;

pub use callback::{CallbackId, CallbackTransport, ListenerTransport};
pub use client::{ServiceClient, WebhookPayload};
pub use config::ServiceConfig;
pub use download::{
    Destination, DownloadOptions, Downloader, EncryptedFile, PartialDownload, Progress, Saved,
};
pub use engine::{CallbackChoice, Engine, ServiceConnection};
pub use error::{Code, Error, Result};
pub use history::{History, HistoryEntry};
pub use job::{BackupJob, BackupRequest, JobEvent};
pub use journal::{Journal, Owner, UnfinishedJob};
pub use klant_key::KlantKey;
pub use secret::Secret;
pub use session::Session;
pub use stage::Stage;
