//! What can be typed: the command line's flags, subcommands and `KLUIS_*` environment
//! variables, as clap reads them. What they become — a service configuration, the history
//! and profiles opened, a batch's limits — is `from_args`.
//!
//! Here: the whole line ([`Cli`]), the service's flags and the commands ([`Command`]); their
//! subcommands and shared flags by concern — `batch` (a backup's flags, `--all`, `schedule`),
//! `copies` (`copy-target`), `klanten` (`profiles`, `plan`, retention, `mail`) and `recover`.

use std::path::PathBuf;

mod batch;
mod copies;
mod klanten;
mod office;
mod recover;

pub use batch::*;
pub use copies::*;
pub use klanten::*;
pub use office::*;
pub use recover::*;

use clap::{Args, Parser, Subcommand};
use kluis_core::CallbackChoice;

/// Back up an organisation's data from the service's webservice_v2 API.
#[derive(Parser)]
#[command(name = "kluis", version)]
pub struct Cli {
    #[command(flatten)]
    pub connection: ServiceArgs,
    /// The history database (default: the platform's data folder, shared with the app).
    #[arg(long, env = "KLUIS_HISTORY_DB", global = true)]
    pub history_db: Option<PathBuf>,
    /// The profiles file (default: the platform's config folder, shared with the app).
    #[arg(long, env = "KLUIS_PROFILES_FILE", global = true)]
    pub profiles_file: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// The service's settings, from flags or the environment.
#[derive(Args)]
pub struct ServiceArgs {
    /// The API's base address, e.g. https://host/webservice_v2.
    #[arg(long, env = "KLUIS_BASE_URL", global = true)]
    pub base_url: Option<String>,
    /// Your organisation's api key (prefer the environment variable).
    #[arg(long, env = "KLUIS_API_KEY", hide_env_values = true, global = true)]
    pub api_key: Option<String>,
    /// The klant's username.
    #[arg(long, env = "KLUIS_USERNAME", global = true)]
    pub username: Option<String>,
    /// The klant's password. Discouraged as a flag: other users of this computer can read
    /// process arguments. Set KLUIS_PASSWORD instead.
    #[arg(long, env = "KLUIS_PASSWORD", hide_env_values = true, global = true)]
    pub password: Option<String>,
    /// Extra CA certificate (PEM) to trust, e.g. a corporate proxy's or the simulator's.
    #[arg(long, env = "KLUIS_CA_CERT", global = true)]
    pub ca_cert: Option<PathBuf>,
    /// Allow plain http to 127.0.0.1/localhost (for local test servers only).
    #[arg(long, env = "KLUIS_ALLOW_HTTP_LOOPBACK", global = true)]
    pub allow_http_loopback: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Print the service's environment information as JSON.
    Environment,
    /// Back up the owner's data and save the file.
    Backup(BackupArgs),
    /// Finish the backups an earlier `kluis backup` could not end
    ///
    /// Finish the backups an earlier `kluis backup` began but could not end: a stop, a crash
    /// or a reboot while it waited or downloaded. Each is saved where it was meant to go.
    /// Backups that cannot be finished (loopback, tunnel) are marked failed. The desktop app's
    /// backups are left to the app unless --include-app is given.
    Resume {
        /// One JSON line per ended job: {"job","path","bytes","sha256"} or {"job","error"}.
        #[arg(long)]
        json: bool,
        /// Also finish backups the desktop app started (and older ones whose program is not
        /// recorded).
        #[arg(long)]
        include_app: bool,
    },
    /// Cancel an unfinished backup, so `resume` leaves it.
    Cancel {
        /// The job's id.
        job: uuid::Uuid,
    },
    /// List past backups.
    History {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        /// Only this klant's backups: a saved profile, or the label of backups made with
        /// flags (a name that could mean two klanten is refused with the keys to use).
        #[arg(long)]
        profile: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Check that the service's callback can reach Kluis
    ///
    /// Check that the service's callback can reach Kluis: send a test call through the chosen
    /// transport's public URL and wait for it to come back.
    CallbackTest {
        /// The transport, as for `backup --callback`.
        #[arg(long, value_parser = CallbackChoice::parse, default_value = "loopback")]
        callback: CallbackChoice,
        /// With --callback direct=…: the local address the reverse proxy forwards to.
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
    },
    /// The klanten (profiles) Kluis backs up, as the app shows them.
    #[command(subcommand)]
    Profiles(ProfilesCommand),
    /// Set when a profile is backed up without anyone clicking.
    Plan(PlanArgs),
    /// Each klant's last verified backup, last failure and next due.
    Status {
        /// One JSON object per profile, one a line.
        #[arg(long)]
        json: bool,
        /// Only the profiles with this tag.
        #[arg(long)]
        tag: Option<String>,
    },
    /// Encrypt a profile's backups as they download (age format)
    ///
    /// Encrypt a profile's backups as they download (age format): with a passphrase (from
    /// KLUIS_ENCRYPTION_PASSPHRASE, or the first line of standard input with --stdin; kept in
    /// the keyring) or to an age recipient (age1…, whose identity you keep). --off stops it.
    Encryption {
        /// The profile's name or id.
        profile: String,
        /// Encrypt with a passphrase.
        #[arg(long, conflicts_with_all = ["recipient", "off"])]
        passphrase: bool,
        /// With --passphrase: read it from the first line of standard input.
        #[arg(long, requires = "passphrase")]
        stdin: bool,
        /// Encrypt to this age X25519 recipient.
        #[arg(long, value_name = "age1…", conflicts_with = "off")]
        recipient: Option<String>,
        /// Save backups unencrypted again (the saved passphrase is removed).
        #[arg(long)]
        off: bool,
    },
    /// Decrypt an encrypted backup (FILE.age) into a folder
    ///
    /// Decrypt an encrypted backup (FILE.age) into a folder, checked against the SHA-256 the
    /// history recorded for it. The key: --identity FILE, else KLUIS_ENCRYPTION_PASSPHRASE,
    /// else the passphrase saved for the backup's profile.
    Decrypt {
        /// The encrypted backup.
        file: PathBuf,
        /// The folder to write the decrypted file to (nothing there is overwritten).
        #[arg(long)]
        out: PathBuf,
        /// An age identity file (from `age-keygen`) for a backup encrypted to its recipient.
        #[arg(long)]
        identity: Option<PathBuf>,
    },
    /// List what is in a backup file, and where each entry restores to
    ///
    /// What is in a backup file: every entry with its size, date and the path it is restored
    /// to (or why it is not: a link, a name that climbs out of the folder, a password).
    Contents {
        /// The backup (a zip archive, encrypted or not).
        #[arg(required_unless_present = "profile", conflicts_with = "profile")]
        file: Option<PathBuf>,
        /// Instead of a file: with --latest, the newest kept backup of this klant (a saved
        /// profile, or the label of backups made with flags).
        #[arg(long, requires = "latest")]
        profile: Option<String>,
        /// With --profile: the klant's newest kept backup.
        #[arg(long, requires = "profile")]
        latest: bool,
        /// The backup's copy on this copy target instead (fetched back into an owner-only
        /// temporary file and checked against its recorded SHA-256, then listed): what is
        /// there if this computer's file is lost.
        #[arg(long, value_name = "TARGET")]
        copy: Option<String>,
        /// An encrypted backup's age identity file (else its passphrase from
        /// KLUIS_ENCRYPTION_PASSPHRASE or the keyring of the profile whose backup it is).
        #[arg(long)]
        identity: Option<PathBuf>,
        /// One JSON object per entry, one a line.
        #[arg(long)]
        json: bool,
    },
    /// Restore a backup's entries into a folder
    ///
    /// Restore a backup's entries into a folder (made, owner-only, when only it is missing):
    /// everything, or only --only PATH… (a file or a folder, as `kluis contents` lists them).
    /// Nothing already in the folder is replaced unless --overwrite; no entry lands outside
    /// it; each file is written whole (its size and CRC-32 checked) or not at all. Exits with
    /// 8 when an entry was left out (each named on stderr), so that a script never takes a
    /// partial restore for a whole one.
    Restore {
        /// The backup (a zip archive, encrypted or not).
        file: PathBuf,
        /// An encrypted backup's age identity file (else its passphrase from
        /// KLUIS_ENCRYPTION_PASSPHRASE or the keyring of the profile whose backup it is).
        #[arg(long)]
        identity: Option<PathBuf>,
        /// The folder to restore into (made when its parent exists).
        #[arg(long)]
        to: PathBuf,
        /// Only this path (repeat for more).
        #[arg(long)]
        only: Vec<String>,
        /// Replace files already in the folder.
        #[arg(long)]
        overwrite: bool,
    },
    /// Prove that a backup restores (and record it)
    ///
    /// Prove that a backup restores: every entry restored into an owner-only temporary folder
    /// and checked (size, CRC-32), the folder removed; recorded in the history when it is a
    /// backup the history knows (the auditor report's last restore test). With --profile, the
    /// klant's newest kept backup and then each copy of it on a copy target (fetched back).
    /// Exits with 7 when an entry fails.
    RestoreTest {
        /// The backup (a zip archive, encrypted or not).
        #[arg(required_unless_present = "profile", conflicts_with = "profile")]
        file: Option<PathBuf>,
        /// Instead of a file: the newest kept backup of this klant (a saved profile, or the
        /// label of backups made with flags).
        #[arg(long)]
        profile: Option<String>,
        /// An encrypted backup's age identity file (else its passphrase from
        /// KLUIS_ENCRYPTION_PASSPHRASE or the keyring of the profile whose backup it is).
        #[arg(long)]
        identity: Option<PathBuf>,
        /// The result as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Read every saved backup again and check it against the history
    ///
    /// Read every saved backup again and check its length and SHA-256 against the history (a
    /// zip backup's entries too). Lists what is missing, changed or unreadable and exits with
    /// 7 when anything is.
    Verify {
        /// One JSON object per backup, one a line.
        #[arg(long)]
        json: bool,
        /// Only this klant's backups: a saved profile, or the label of backups made with
        /// flags (a name that could mean two klanten is refused with the keys to use).
        #[arg(long)]
        profile: Option<String>,
        /// Read each copy on a copy target back in full and compare its SHA-256 (without it,
        /// a copy is checked to be there with its length; the monthly verification reads back).
        #[arg(long)]
        read_back_copies: bool,
    },
    /// A report of a period's backups for auditors (CSV or HTML)
    ///
    /// A report of a period's backups for auditors, per klant: every backup with when, size,
    /// SHA-256, where it is, its status and its last verification. CSV (the default) or a
    /// printable HTML page; to --out FILE (owner-only) or standard output.
    Report {
        /// One row per backup (RFC 4180, UTF-8, a header row).
        #[arg(long)]
        csv: bool,
        /// One printable HTML page: a summary, then a section per klant.
        #[arg(long, conflicts_with = "csv")]
        html: bool,
        /// The first day (YYYY-MM-DD, local time). Default: 30 days before --to.
        #[arg(long, value_name = "YYYY-MM-DD")]
        from: Option<String>,
        /// The last day, included (YYYY-MM-DD). Default: today.
        #[arg(long, value_name = "YYYY-MM-DD")]
        to: Option<String>,
        /// Only this klant's backups: a saved profile, or the label of backups made with
        /// flags (a name that could mean two klanten is refused with the keys to use).
        #[arg(long)]
        profile: Option<String>,
        /// Write the report to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Delete the backups a retention rule does not keep
    ///
    /// Delete the backups a retention rule does not keep: each saved profile's own rule (see
    /// `kluis plan NAME --keep-last N`), or the rule given here for --profile. Only files
    /// Kluis saved and recorded, still exactly as saved; never another file, never the newest
    /// backup that verifies. Each deletion is written to the history.
    Prune {
        /// Only this klant (needed with a rule given here): a saved profile, or the label of
        /// backups made with flags, which are one klant per label, service, username and
        /// folder (a name that could mean two klanten is refused with the keys to use).
        #[arg(long)]
        profile: Option<String>,
        #[command(flatten)]
        rule: RetentionArgs,
        /// Say what would be deleted; delete nothing.
        #[arg(long)]
        dry_run: bool,
        /// One JSON object per backup removed or spared, one a line.
        #[arg(long)]
        json: bool,
    },
    /// Back up every klant whose plan is due, then exit (for a timer)
    ///
    /// Back up every profile whose plan is due (once, however many slots were missed) and
    /// exit: for a timer (see `kluis schedule install`). Never runs a klant that another Kluis
    /// process (the app, an earlier run) is backing up.
    RunDue(BatchArgs),
    /// E-mail failures or a daily report (the office's SMTP server)
    ///
    /// E-mail through the office's SMTP server: each failure, or a daily report (the same
    /// settings as the app's Settings → E-mail).
    #[command(subcommand)]
    Mail(MailCommand),
    /// One office of several PCs: join its hub, see its PCs
    ///
    /// One office of several PCs around the office hub (the office's kluis-relay): each
    /// klant's planned backup is made by one PC a slot, whichever PCs plan it.
    #[command(subcommand)]
    Office(OfficeCommand),
    /// Run `kluis run-due` every 15 minutes from a systemd user timer.
    #[command(subcommand)]
    Schedule(ScheduleCommand),
    /// Copies off this computer: a folder, S3 bucket or SFTP server
    ///
    /// Where a second copy of each backup is kept, off this computer (a folder on a NAS share
    /// or a USB disk, an S3 bucket, an SFTP server). After each backup, the copies a klant's
    /// backups lack are made.
    #[command(subcommand)]
    CopyTarget(CopyTargetCommand),
    /// Make the copies that could not be made after their backup
    ///
    /// Make the copies that could not be made after their backup (a target that was away):
    /// every kept backup a copy target does not hold yet, newest first.
    Copy {
        /// Copy every backup a target lacks (the one way this command works now; named so a
        /// script says what it means).
        #[arg(long, required = true)]
        pending: bool,
        /// Only this klant's backups.
        #[arg(long)]
        profile: Option<String>,
        /// One JSON object per line: {"job","target","location"} or {"job","target","error"}.
        #[arg(long)]
        json: bool,
    },
    /// Make the office's recovery kit: its key and page for the safe
    ///
    /// Make the office's recovery kit: a recovery key whose private half is printed here (to
    /// print, or keep in the office's password manager) and never kept on this computer, and
    /// the page that says where the copies are and how to get every klant's backups back from
    /// them on a new computer. Each copy target gets a catalog of every klant and copy sealed
    /// to that key now, and again after each run of copies. A new kit replaces the last: the
    /// catalogs are written again under it, and the old kit opens nothing written after.
    RecoveryKit {
        /// Also write the private key to this new file (owner-only): to keep on a USB stick in
        /// the safe, or for a script. Removed again when the kit is not made.
        #[arg(long, value_name = "FILE")]
        key_file: Option<PathBuf>,
        /// This computer's name in the catalogs (default: its host name, or the name it had).
        #[arg(long)]
        pc_name: Option<String>,
        /// Print each copy target's own secret on the page too (for an office that keeps the
        /// page in a safe: the page is then as secret as the targets).
        #[arg(long, conflicts_with = "join")]
        with_target_secrets: bool,
        /// Make no new kit: use the office's kit (made on another of its computers) from now
        /// on — its key from --recovery-key FILE or KLUIS_RECOVERY_KEY.
        #[arg(long, conflicts_with = "key_file")]
        join: bool,
        /// The office's kit's key file, for --join.
        #[arg(long, value_name = "FILE", requires = "join")]
        recovery_key: Option<PathBuf>,
    },
    /// On a new computer: find and restore a lost one's backups
    ///
    /// On a new computer, when the old one is lost: every klant's backups found on a copy
    /// target (added here with its secret, as any target) and restored, with the office's
    /// recovery kit alone — and this computer made to carry on for the lost one (adopt).
    #[command(subcommand)]
    Recover(RecoverCommand),
    /// Whether a newer Kluis is out, and its verified build
    ///
    /// Whether a newer Kluis is out (from the publisher's update server, or the office's own),
    /// and its build for this computer, verified with the publisher's key. Turned off on a
    /// computer by IT (see docs/updates.md).
    #[command(subcommand)]
    Update(UpdateCommand),
    /// Try Kluis without an account, against a local simulator
    ///
    /// Try Kluis without an account: start a local simulator of the service and back up from it.
    Demo {
        /// Folder to save the demo backup in.
        #[arg(long, default_value = "kluis-demo-backups")]
        out: PathBuf,
        /// Size of the demo backup in MiB.
        #[arg(long, default_value_t = 64)]
        size_mib: u64,
    },
}

#[derive(Subcommand)]
pub enum UpdateCommand {
    /// Say in one line whether a newer Kluis is out (downloads nothing).
    Check {
        /// One JSON object: {"current","update":"available"|"up_to_date"|"disabled"|
        /// "not_configured",…}, and nothing else.
        #[arg(long)]
        json: bool,
    },
    /// Download the newer Kluis for this computer, verified
    ///
    /// Download the newer Kluis for this computer, its signature verified with the
    /// publisher's key (nothing is kept when it does not verify).
    Download {
        /// The folder to save it in (default: your Downloads folder).
        #[arg(long)]
        to: Option<PathBuf>,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every command's summary — the line `kluis --help` (and each `kluis COMMAND --help`) lists
    /// it by — is one line that, with its list's indent, fits 80 columns; its paragraph is for
    /// `kluis help COMMAND`. (A list of 28 commands each a paragraph long was four screens.)
    #[test]
    fn every_commands_summary_is_one_short_line() {
        /// Summaries of `command`'s subcommands whose line in its list passes 80 columns: the
        /// list indents each by `indent` (its names' column), or, without one given, by 2,
        /// the longest name and 2, as clap lays it out.
        fn check(
            command: &clap::Command,
            path: &str,
            indent: Option<usize>,
            long: &mut Vec<String>,
        ) {
            let longest = (command.get_subcommands())
                .map(|sub| sub.get_name().len())
                .chain([4]) // clap's own `help`
                .max()
                .unwrap_or(0);
            let indent = indent.unwrap_or(2 + longest + 2);
            for sub in command.get_subcommands() {
                let path = format!("{path} {}", sub.get_name());
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                let width = indent + about.chars().count();
                if about.is_empty() || about.contains('\n') || width > 80 {
                    long.push(format!("{path}: {width} columns"));
                }
                check(sub, &path, None, long);
            }
        }
        let mut long = Vec::new();
        // `kluis --help` lists its commands in groups (help.rs), its own column for the names.
        let column = crate::help::summary_column();
        check(&super::Cli::command(), "kluis", Some(column), &mut long);
        assert!(
            long.is_empty(),
            "summaries to shorten:\n{}",
            long.join("\n")
        );
    }
}
