//! `kluis backup`'s flags, `backup --all` and `run-due`'s batch, `schedule …`.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use kluis_core::engine::Retry;
use kluis_core::CallbackChoice;

use super::RetentionArgs;

/// `run-due`'s options.
#[derive(Args, Clone)]
pub struct BatchArgs {
    /// Where the klanten's folders go (default: the save folder chosen in the app).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seconds to wait for the service to finish each backup.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// One JSON line per klant: {"profile","name","job","path","bytes","sha256"} or
    /// {"profile","name","error"}.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub batch: BatchOptions,
}

#[derive(Subcommand)]
pub enum ScheduleCommand {
    /// Run `kluis run-due` every 15 minutes (systemd timer, Windows task)
    ///
    /// Write and enable what runs `kluis run-due` every 15 minutes: a systemd user timer
    /// (Linux) or a Task Scheduler task, Kluis\run-due (Windows).
    Install {
        /// Where the klanten's folders go (default: the save folder chosen in the app).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only write the unit files (the task's XML); do not call systemctl (schtasks).
        #[arg(long)]
        no_enable: bool,
    },
    /// Disable and remove that timer (or task).
    Remove {
        /// Only remove the unit files (the task's XML); do not call systemctl (schtasks).
        #[arg(long)]
        no_enable: bool,
    },
}

#[derive(Args)]
pub struct BackupArgs {
    /// Where to save: an existing folder (the file keeps the service's name); a path ending in
    /// / or one that does not exist and has no extension (~/Backups, "Bakker B.V."): a folder,
    /// made first with its missing parents; a path with an extension (backup.zip) or an
    /// existing file: the file to save, in a folder that must exist (a taken name gets " (1)").
    /// With --profile or --all it may be left out: each klant then goes to its own folder under
    /// the save folder chosen in the app, named `<klant> <YYYY-MM-DD HHmm>`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Back up every profile (see `kluis profiles list`), a few at a time.
    #[arg(long, conflicts_with = "profile")]
    pub all: bool,
    /// With --all: only the profiles with this tag.
    #[arg(long, requires = "all")]
    pub tag: Option<String>,
    #[command(flatten)]
    pub batch: BatchOptions,
    /// How the service's callback reaches this computer: `loopback` (a listener on 127.0.0.1,
    /// for the simulator), `relay=URL` (a kluis-relay inbox; secret in KLUIS_RELAY_SECRET) or
    /// `direct=https://public.example/kluis` (your reverse proxy forwards it to --listen) or
    /// `tunnel=cloudflared` (a Cloudflare quick tunnel; the value is the program or its path) or
    /// `webhook-site` (no server; webhook.site sees the callback id, never your credentials).
    /// Default: `loopback`, or with a saved profile the app's choice (Settings).
    #[arg(long, value_parser = CallbackChoice::parse)]
    pub callback: Option<CallbackChoice>,
    /// With --callback direct=…: the local address the reverse proxy forwards to.
    #[arg(long, requires = "callback")]
    pub listen: Option<std::net::SocketAddr>,
    /// Seconds to wait for the service to finish the backup.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// Print exactly one JSON line {"path","bytes","sha256"} on stdout.
    #[arg(long)]
    pub json: bool,
    /// Refuse backup files larger than this many bytes.
    #[arg(long)]
    pub max_bytes: Option<u64>,
    /// Encrypt the backup to this age recipient (age1…) as it downloads (a saved profile uses
    /// its own setting: `kluis encryption`).
    #[arg(long, value_name = "age1…")]
    pub encrypt_to: Option<String>,
    /// Encrypt the backup with the passphrase in KLUIS_ENCRYPTION_PASSPHRASE.
    #[arg(long, conflicts_with = "encrypt_to")]
    pub encrypt_passphrase: bool,
    /// After the save, delete what this rule does not keep of the profile's backups (in
    /// place of a saved profile's own rule; see `kluis prune`).
    #[command(flatten)]
    pub retention: RetentionArgs,
    /// A saved profile (name or id): its settings and keyring secrets are used. Without
    /// saved profiles, and with the service given by flags or KLUIS_* variables, the label
    /// recorded in the history (a rule given with --keep-* then applies only to backups of
    /// that label, service, username and folder).
    #[arg(long, env = "KLUIS_PROFILE")]
    pub profile: Option<String>,
}

/// How several klanten are backed up unattended (`backup --all`, `run-due`).
#[derive(Args, Clone)]
pub struct BatchOptions {
    /// Klanten downloading at once (--all, run-due); up to two more are under way meanwhile,
    /// asking for their backup or finishing their file (N+2 under way, N downloading).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub concurrency: u32,
    /// Times a klant whose backup failed for a passing reason (the service, the network or
    /// the file host) is tried again (--all, run-due).
    #[arg(long, env = "KLUIS_RETRIES", default_value_t = Retry::UNATTENDED.tries)]
    pub retries: u32,
    /// Seconds before the first retry; each next one waits twice as long (--all, run-due).
    #[arg(
        long,
        env = "KLUIS_RETRY_DELAY",
        default_value_t = Retry::UNATTENDED.first_delay.as_secs()
    )]
    pub retry_delay: u64,
    /// Limit all downloads of this run together to this many MB/s (0: no limit). Default:
    /// the app's Settings → Download speed.
    #[arg(long, value_name = "MB_PER_SEC")]
    pub limit_rate: Option<f64>,
    /// With --limit-rate: only on weekdays between these local times, e.g. 08:00-18:00.
    #[arg(long, value_name = "HH:MM-HH:MM", requires = "limit_rate")]
    pub office_hours: Option<String>,
    /// Ask for no backup while the disk it goes to has less free than this many MiB (0: no
    /// minimum). Default: the app's Settings → Free space, else 100.
    #[arg(long, env = "KLUIS_MIN_FREE_MIB", value_name = "MIB")]
    pub min_free_mib: Option<u64>,
}
