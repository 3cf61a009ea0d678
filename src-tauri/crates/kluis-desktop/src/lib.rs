//! kluis-desktop: the desktop app's logic, without Tauri, so that it builds fast and is tested
//! headless. The Tauri shell (`src-tauri/`) turns each method of a [`DesktopApp`] part into a
//! command in one line.
//!
//! Parts and data flow:
//! - [`profiles`]: what the UI sees and sends of a profile; the profiles themselves (one per
//!   klant, with their plans), their file and their secrets in the OS keyring ([`secrets`]) are
//!   kluis-profiles', shared with the `kluis` CLI.
//! - [`app`]: [`DesktopApp`], one part per concern (see `app/mod.rs`): `accounts` (sign-in
//!   through a kluis-core `ServiceConnection` per profile, environment, permissions),
//!   `backups`, `plans`, `keeping`, `alerts`, `settings` and `background` (the tray and closing
//!   the window while plans run). A backup runs in kluis-core's `Engine`; its events go out as
//!   [`AppJobEvent`]s ([`events`]); the verified file waits in a staging folder until the save
//!   dialog `Backups::save_backup` opens gives it a place, and it is moved there (or goes
//!   straight to the "always save here" folder). Cancel ends the job as cancelled at any
//!   stage. Jobs interrupted by closing the app are finished at the next start
//!   (`Backups::resume_backups`) by the engine's resume loop, the one `kluis resume` uses.
//!   Each profile may have a plan (`Plans::set_plan`); `Plans::run_plans` starts the due ones
//!   (kluis-core's `Scheduler` decides) into a folder per klant, through kluis-profiles' one
//!   unattended path, and their events go to the window as [`PlannedEvent`]s.
//! - [`callback`]: Settings → "How the service reaches this computer" (kluis-core's
//!   `CallbackChoice`: relay, direct, tunnel, webhook.site, loopback) and "Test connection".
//! - [`staging`]: the staging folders, cleared at start only of what is provably Kluis's
//!   leftover; saved files still waiting there are offered to the save dialog again.
//! - [`dialogs`]: the native save, folder and program dialogs, opened by the Rust side so
//!   that no path or program ever comes from the webview.
//! - [`permissions`]: what the api key allows, from the OpenAPI description or learnt 403s.
//! - [`owner`]: which process runs the background work (plans, tray) of a data folder — the
//!   window's or `kluis-tray`, the small one that keeps the plans while the window is closed
//!   — and how each starts the other.
//! - [`mirror`]: `kluis-tray`'s backups, followed by a window opened while they run (their
//!   progress, their end, *Cancel*), over a Unix socket beside the history (Windows: a named
//!   pipe; both the user's alone: `mirror/endpoint.rs`).
//! - [`open`]: showing a saved file in the file manager.
//! - [`runtime`]: the async runtime everything above runs on, its threads below the window's
//!   priority so that backups yield the CPU to it; [`memory`]: the heap given back to the
//!   system once a minute while no backup runs (the window's process and kluis-tray alike).
//! - [`bindings`]: the TypeScript declarations of every type the UI receives or sends.
//! - [`window`]: the window's first size, no larger than the screen's usable area.
//! - [`error`]: [`AppError`], crossing to the UI as `{code, message}`.

pub mod app;
pub mod bindings;
pub mod callback;
pub mod dialogs;
pub mod error;
pub mod events;
pub mod memory;
pub mod mirror;
pub mod open;
pub mod owner;
pub mod permissions;
pub mod profiles;
pub mod runtime;
/// The keyring and the other stores of secrets (kluis-profiles', shared with the CLI).
pub use kluis_profiles::secrets;
pub use kluis_profiles::Language;
pub mod staging;
pub mod window;

pub use app::{
    program_in_the_way, setup_folder_argument, AppPaths, BucketInput, CarriedOn, CopyToChange,
    DemoInfo, DesktopApp, DesktopAppBuilder, EncryptionInput, FolderChange, FoundCopies,
    FoundEncryption, FoundProof, HeldCopy, ImportDefaults, ImportPreview, ImportProgress,
    ImportResult, ImportSink, KitMade, LaunchInfo, LoginStart, MailInput, ManyChange, ManyPreview,
    OfficeInvite, OfficeJoinInput, OfficeJoined, OfficeMembership, PackageManagerUpdates,
    PlanInput, ProgressSink, RecoverProgress, ReportExport, ReportFormat, ReportRequest,
    RestoreProgress, RestoreSummary, ResumedJob, RuleChange, SessionInfo, SftpInput, SftpServer,
    TrayAction, UpdateInstaller, UpdateState, UpdateView, VerifiedSetup, VerifyReport,
    GAP_BETWEEN_SETUPS_BY_ITSELF, HIDDEN_FLAG, SETUP_TAKES,
};
pub use callback::{CallbackInput, CallbackTestResult};
pub use dialogs::{Dialogs, ImportFile, NoDialogs};
pub use error::{AppError, AppResult, ErrorPayload};
pub use events::{AppJobEvent, EventSink, PlannedEvent, PlannedSink, ResumeSink, ResumedEvent};
/// The key an SFTP server shows ("Connect" of *Add an SFTP server*).
pub use kluis_copies::sftp::HostKey;
pub use kluis_core::download::bandwidth::BandwidthLimit;
/// What a backup holds (History → *Contents*) and its last restore test.
pub use kluis_core::restore_tests::RestoreTestRecord;
pub use kluis_core::retention::Retention;
pub use kluis_core::{CallbackChoice, HistoryEntry, Saved};
/// What an import file's column can hold (*Import klanten…*).
pub use kluis_import::Field;
/// The office view (the dashboard's *Office*): every klant of every PC of the office.
pub use kluis_office::{Flag, OfficeView};
/// A restore test of a round: the saved file's, or a copy's (*Test restore*).
pub use kluis_profiles::restore_round::RoundTest;
pub use kluis_profiles::KlantStatus;
/// Settings → *E-mail* as saved (kluis-reporting's).
pub use kluis_reporting::MailSettings;
pub use kluis_restore::Entry as BackupEntry;
/// How this Kluis was installed (whether it installs its own updates): the shell's updater.
pub use kluis_update::InstallKind;
pub use permissions::Permissions;
pub use profiles::{ProfileInput, ProfileView, Settings};
pub use secrets::{DemoSecrets, KeyringStore, MemoryStore, SecretStore};
