//! `kluis`: the command line on kluis-core, for scripts and schedulers.
//!
//! - [`args`]: the flags, subcommands and `KLUIS_*` environment variables (clap's definitions);
//!   [`from_args`]: what they become — a `ServiceConfig`, the history and profiles opened, a
//!   batch's limits. [`help`]: `kluis --help`, the commands listed by what they are for.
//! - [`commands`]: the dispatch, and `environment`, `resume`, `cancel`, `history`,
//!   `callback-test` and `demo` (a backup from an in-process simulator), each a thin layer over
//!   kluis-core; [`backup`]: `backup` and `run-due`, each backup watched and said.
//! - [`profiles`]: `profiles add|list|remove`, `plan`, `status` — the app's profiles (from
//!   kluis-profiles); [`secrets`]: their secrets, in the keyring or `KLUIS_SECRETS_DIR`, a leaf
//!   every command reaches them through.
//! - [`unattended`]: backups of saved profiles — `backup --profile`, `backup --all` and
//!   `run-due`: a folder per klant, a few at a time, passing failures tried again, each klant
//!   under its turn so the app and a timer never back it up twice; [`outcomes`]: each klant's
//!   outcome said, a line apiece.
//! - [`office`]: `office join|status|revoke|leave` — this PC in an office of several PCs
//!   (kluis-office's hub), and the office a run's backups ask for each klant's turn.
//! - [`schedule`]: `schedule install|remove`, the systemd user timer that runs `run-due`.
//! - [`verify`]: `verify`, every saved backup read again (kluis-core's verify).
//! - [`encryption`]: `encryption` (a profile's), `backup --encrypt-to`, and `decrypt`.
//! - [`prune`]: `prune`, and the retention rule applied after each save.
//! - [`report`]: `report`, a period's backups as CSV or a printable page (kluis-reporting's).
//! - [`copies`]: `copy-target add|list|test|remove` and `copy --pending`: a second copy of
//!   each backup off this computer (kluis-copies').
//! - [`recovery`]: `recovery-kit` (the office's recovery key and kit) and what writes the
//!   recovery catalogs to the copy targets after the copies (kluis-recovery's documents);
//!   [`recover`]: `recover list|restore`, every klant's backups found on a target and
//!   restored with the kit alone.
//! - [`update`]: `update check|download`: a newer Kluis, said in a line and fetched verified
//!   (kluis-update's).
//! - [`stop`]: Ctrl-C and SIGTERM — what each means for a running backup.
//! - [`display`]: the progress bar (only when stderr is a terminal) and the history table.
//!
//! Exit codes: 0 ok, 2 usage/config (an untrusted certificate too: `--ca-cert`), 3
//! authentication failed, 4 permission denied by the api_key, 5 no callback before the
//! timeout, 6 download failed (the file host unreachable too), 75 stopped but kept for
//! `kluis resume`, 7 a verified backup is missing, changed or unreadable, 8 a restore that left
//! entries out (each named), 130 cancelled, 1 anything else — always with one clear line on stderr,
//! never with a secret in it.

mod adopt;
mod args;
mod backup;
mod commands;
mod copies;
mod copy_places;
mod display;
mod encryption;
mod from_args;
mod help;
mod import;
mod mail;
mod office;
mod outcomes;
mod profiles;
mod prune;
mod recover;
mod recover_from;
mod recovery;
mod report;
mod restore;
mod schedule;
mod secrets;
mod stop;
mod targets;
mod task_scheduler;
mod unattended;
mod update;
mod verify;

use kluis_core::{Code, Error};

fn exit_code(error: &Error) -> i32 {
    match error.code() {
        Code::Config | Code::Certificate => 2,
        Code::AuthFailed => 3,
        Code::PermissionDenied => 4,
        Code::CallbackTimeout => 5,
        Code::DownloadFailed | Code::FileHostUnreachable => 6,
        Code::Interrupted => 75,
        Code::BackupsDamaged => 7,
        Code::PartlyRestored => 8,
        Code::Cancelled => 130,
        Code::ServiceError | Code::Network | Code::BadResponse | Code::Io | Code::NotResumable => 1,
    }
}

/// glibc hands freed memory at the heap's top back to the system past a threshold that it
/// moves as it goes, and a download allocates and frees buffers of a few hundred KiB all the
/// time (the HTTP stack's reads, the writer's batches). Measured over a 200-klant batch: a
/// tenth of the CLI's CPU went to page faults on memory it had just handed back. Fixed
/// thresholds keep freed memory for reuse instead; the peak RSS, which is what the batch holds
/// at once, stays the same (42 MiB over 200 × 20 MiB, 2 at a time).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

fn main() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    keep_freed_memory();
    let cli = help::parse();
    kluis_private::logging::init("warn");
    // One async thread: a backup is one stream of work, and the download's writer thread takes
    // the second core. Measured: faster than a multi-threaded runtime (fewer cross-thread
    // wake-ups) and a flat peak RSS for any file size (fewer malloc arenas).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kluis: could not start: {e}");
            std::process::exit(1);
        }
    };
    // `backup` and `resume` watch the signals themselves (see `stop`) and must not be cut
    // short while they settle a job, nor `profiles import` while it saves a klant; other
    // commands just end.
    let watches_signals = matches!(
        cli.command,
        args::Command::Backup(_)
            | args::Command::Resume { .. }
            | args::Command::RunDue(_)
            | args::Command::Profiles(args::ProfilesCommand::Import { .. })
    );
    let outcome = runtime.block_on(async {
        if watches_signals {
            return commands::run(cli).await;
        }
        tokio::select! {
            outcome = commands::run(cli) => outcome,
            _ = stop::requested() => Err(Error::Cancelled),
        }
    });
    drop(runtime);
    if let Err(error) = outcome {
        eprintln!("kluis: {error}");
        std::process::exit(exit_code(&error));
    }
}
