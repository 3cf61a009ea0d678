//! The job engine that every front end drives — the `kluis` CLI and the desktop app are thin
//! hosts over it, each adding only what it shows and asks.
//!
//! - [`CallbackChoice`] (`choice`): how the service reaches this computer — the CLI's
//!   `--callback` and the app's setting, one type — checked, then built into a transport.
//! - [`ServiceConnection`] (`connection`): a service's session and downloader, made once.
//! - [`Transports`] (`transports`): built transports, shared by the jobs of one key.
//! - [`Engine`] (`jobs`): starts jobs as tasks — a [`Launch`] in, a [`JobHandle`] and a
//!   stream of [`crate::JobEvent`]s out — and cancels, stops or shuts them down.
//! - [`Retry`] (`retry`): a new unattended backup that fails for a passing reason is tried
//!   again after a growing wait, as one job to its host (one handle, cancel, event stream).
//! - [`Engine::resume`] (`resume`): the one resume loop: sweep the history, rebuild each
//!   journalled job's transport, start it.
//! - [`Scheduler`] (`scheduler`): hands its host the profiles whose plans are due — one
//!   spacing apart, each once — and otherwise sleeps until the next slot (or a minute).

mod choice;
mod connection;
mod jobs;
mod resume;
mod retry;
mod scheduler;
mod transports;

pub use choice::{default_webhook_site, test_transport, CallbackChoice, TransportNeeds};
pub use connection::ServiceConnection;
pub use jobs::{Engine, EventSink, JobHandle, Launch, Work};
pub use resume::{ResumeScope, Resumed, ResumedJob};
pub use retry::Retry;
pub use scheduler::{PlanBook, PlannedProfile, Scheduler, LOOK_AT_LEAST_EVERY};
pub use transports::{Transports, FAILED_BUILD_KEPT};
