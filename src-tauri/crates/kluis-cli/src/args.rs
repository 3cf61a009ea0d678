//! What can be typed: the command line's flags, subcommands and `KLUIS_*` environment
//! variables, as clap reads them. What they become — a service configuration, the history
//! and profiles opened, a batch's limits — is `from_args`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use kluis_core::engine::Retry;
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
    /// Print the service's environment information (/util/environment) as JSON.
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
    /// Cancel an unfinished backup (see `kluis history`), so `resume` leaves it.
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
    /// The klanten (profiles) Kluis backs up — the same ones the app shows.
    #[command(subcommand)]
    Profiles(ProfilesCommand),
    /// Set when a profile is backed up without anyone clicking.
    Plan(PlanArgs),
    /// Per profile: the last verified backup, the last failure since, next due, overdue.
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
    /// Back up every profile whose plan is due, then exit (for a timer)
    ///
    /// Back up every profile whose plan is due (once, however many slots were missed) and
    /// exit: for a timer (see `kluis schedule install`). Never runs a klant that another Kluis
    /// process (the app, an earlier run) is backing up.
    RunDue(BatchArgs),
    /// E-mail failures or a daily report through the office's SMTP server
    ///
    /// E-mail through the office's SMTP server: each failure, or a daily report (the same
    /// settings as the app's Settings → E-mail).
    #[command(subcommand)]
    Mail(MailCommand),
    /// Run `kluis run-due` every 15 minutes from a systemd user timer.
    #[command(subcommand)]
    Schedule(ScheduleCommand),
    /// Copies off this computer: a folder, an S3 bucket or an SFTP server
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
    /// Make the office's recovery kit: the key and the page to keep in the safe
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
    /// On a new computer: find, restore and carry on with a lost one's backups
    ///
    /// On a new computer, when the old one is lost: every klant's backups found on a copy
    /// target (added here with its secret, as any target) and restored, with the office's
    /// recovery kit alone — and this computer made to carry on for the lost one (adopt).
    #[command(subcommand)]
    Recover(RecoverCommand),
    /// Whether a newer Kluis is out, and its verified build for this computer
    ///
    /// Whether a newer Kluis is out (from the publisher's update server, or the office's own),
    /// and its build for this computer, verified with the publisher's key. Turned off on a
    /// computer by IT (see docs/updates.md).
    #[command(subcommand)]
    Update(UpdateCommand),
    /// Try Kluis without an account, against a local simulator of the service
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

#[derive(Subcommand)]
pub enum CopyTargetCommand {
    /// Add a copy target: a folder, an S3 bucket or an SFTP server
    ///
    /// Add a copy target: a folder that exists (a mounted share, a USB disk, \\nas\share),
    /// an S3-compatible bucket (--s3-endpoint …), or a folder on an SFTP server (--sftp-host
    /// …). A secret comes from the environment (KLUIS_S3_SECRET_KEY, KLUIS_SFTP_PASSWORD, or
    /// KLUIS_SFTP_PASSPHRASE for a key file that has one) or, with --stdin, the first line of
    /// standard input — never an argument — and goes to the keyring (or KLUIS_SECRETS_DIR).
    /// An SFTP server's host key is shown and pinned (or must match --sftp-host-key). The
    /// target is tested before it is saved.
    Add {
        /// Its name, such as NAS.
        name: String,
        /// The folder each klant's copies go under (in a folder of their own).
        #[arg(
            long,
            required_unless_present_any = ["s3_endpoint", "sftp_host"],
            conflicts_with_all = ["s3_endpoint", "sftp_host"]
        )]
        folder: Option<PathBuf>,
        #[command(flatten)]
        s3: Box<S3Args>,
        #[command(flatten)]
        sftp: Box<SftpArgs>,
        /// Read the secret (the bucket's secret key, the SFTP password or key passphrase) from
        /// standard input.
        #[arg(long)]
        stdin: bool,
    },
    /// List the copy targets.
    List {
        /// One JSON object per target.
        #[arg(long)]
        json: bool,
    },
    /// Check that a target can be written now
    ///
    /// Check that a target can be written now (a small file written, read back, removed).
    Test {
        /// The target's name.
        name: String,
    },
    /// Set the target's own retention rule for the copies it holds
    ///
    /// Set the target's own retention rule for the copies it holds (e.g. --keep-monthly 84
    /// while this computer keeps the last 14), applied after each copy: only copies Kluis made,
    /// still as made, never the newest good one. --keep-all keeps every copy (the default).
    Keep {
        /// The target's name.
        name: String,
        #[command(flatten)]
        retention: RetentionArgs,
        /// Keep every copy.
        #[arg(long, conflicts_with_all = ["keep_last", "keep_daily", "keep_weekly", "keep_monthly"])]
        keep_all: bool,
    },
    /// Stop copying to a target (the copies already there stay)
    ///
    /// Stop copying to a target (the copies already there stay, and so does their record).
    Remove {
        /// The target's name.
        name: String,
    },
}

/// An S3-compatible bucket as a copy target.
#[derive(clap::Args, Debug)]
pub struct S3Args {
    /// The server's https URL, such as https://s3.eu-central-1.amazonaws.com.
    #[arg(long, requires_all = ["s3_bucket", "s3_access_key_id"])]
    pub s3_endpoint: Option<String>,
    /// The bucket.
    #[arg(long)]
    pub s3_bucket: Option<String>,
    /// The bucket's region (us-east-1 where the provider names none).
    #[arg(long, default_value = "us-east-1")]
    pub s3_region: String,
    /// Put before every key, e.g. the name of this PC when several share one bucket.
    #[arg(long, default_value = "")]
    pub s3_prefix: String,
    /// Path-style addressing (endpoint/bucket/key), as MinIO and most office servers want.
    #[arg(long)]
    pub s3_path_style: bool,
    /// The access key id (the secret key never as an argument: see --stdin).
    #[arg(long)]
    pub s3_access_key_id: Option<String>,
    /// Lock each copy for this many days with Object Lock (the bucket must have it on).
    #[arg(long)]
    pub s3_lock_days: Option<u32>,
    /// The lock's mode: governance (a key with a special permission may delete early) or
    /// compliance (nobody can).
    #[arg(
        long,
        value_enum,
        default_value = "governance",
        requires = "s3_lock_days"
    )]
    pub s3_lock_mode: LockModeArg,
    /// A PEM file with the CA certificate of a server with a CA of its own.
    #[arg(long)]
    pub s3_ca_cert: Option<PathBuf>,
}

/// A folder on an SFTP server as a copy target.
#[derive(clap::Args, Debug)]
pub struct SftpArgs {
    /// The server's name or address, such as nas.office.lan.
    #[arg(long, requires_all = ["sftp_user", "sftp_path"], conflicts_with = "s3_endpoint")]
    pub sftp_host: Option<String>,
    /// The server's SSH port.
    #[arg(long, default_value_t = kluis_copies::sftp::SSH_PORT)]
    pub sftp_port: u16,
    /// The user Kluis logs in as.
    #[arg(long)]
    pub sftp_user: Option<String>,
    /// The folder the copies go in, such as /volume1/kluis (or relative to the user's home).
    #[arg(long)]
    pub sftp_path: Option<String>,
    /// Log in with this private key file (Ed25519 or ECDSA, OpenSSH or PuTTY format) instead
    /// of a password; its passphrase, if it has one, from KLUIS_SFTP_PASSPHRASE or --stdin.
    #[arg(long)]
    pub sftp_key: Option<PathBuf>,
    /// The server's host key fingerprint (SHA256:…, as ssh-keygen -l shows it on the
    /// server): the server must show this one. Without it, the key shown is pinned.
    #[arg(long)]
    pub sftp_host_key: Option<String>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum LockModeArg {
    Governance,
    Compliance,
}

#[derive(Subcommand)]
pub enum MailCommand {
    /// Set up e-mail (the SMTP server, who hears from Kluis, and when)
    ///
    /// Set up e-mail. The password comes from KLUIS_MAIL_PASSWORD or, with --stdin, the first
    /// line of standard input — never an argument — and goes to the keyring (or
    /// KLUIS_SECRETS_DIR). The connection is always encrypted: STARTTLS, or TLS on port 465.
    Set(MailArgs),
    /// Send a test e-mail now, through the saved settings.
    Test,
    /// Send no more e-mail (the saved password is removed too).
    Remove,
}

#[derive(clap::Args)]
pub struct MailArgs {
    /// The mail server's host name, such as smtp.office.nl.
    #[arg(long)]
    pub server: String,
    #[arg(long, default_value_t = kluis_profiles::mail_settings::DEFAULT_PORT)]
    pub port: u16,
    /// The login (none: the server takes mail without one).
    #[arg(long, default_value = "")]
    pub user: String,
    /// The sender, such as kluis@office.nl.
    #[arg(long)]
    pub from: String,
    /// A recipient (repeat, or separate with commas).
    #[arg(long, required = true)]
    pub to: Vec<String>,
    /// One report a day at this local time (HH:MM) instead of a mail for each failure.
    #[arg(long, value_name = "HH:MM")]
    pub daily: Option<String>,
    /// Read the password from standard input.
    #[arg(long)]
    pub stdin: bool,
}

#[derive(Subcommand)]
pub enum ProfilesCommand {
    /// Add a klant (its secrets from the environment or standard input)
    ///
    /// Add a profile. Its api key and password come from KLUIS_API_KEY and KLUIS_PASSWORD, or
    /// with --stdin from two lines on standard input (api key, then password) — never from
    /// arguments — and go to the OS keyring (or KLUIS_SECRETS_DIR). It signs in first.
    Add {
        /// The klant's name, as shown by the app and used for its backup folder.
        name: String,
        /// Read the api key and the password from standard input, one a line.
        #[arg(long)]
        stdin: bool,
    },
    /// Import klanten from a spreadsheet or a password manager's export
    ///
    /// Import klanten from a CSV file or an Excel workbook (.xlsx; its first sheet), as a
    /// spreadsheet or a password manager exports them: its
    /// header row names the columns (name, username, password, api key, base URL, plan,
    /// retention, tags — in English or Dutch, or as Bitwarden and KeePass name them). Each row
    /// is shown first with what it will become; then each klant is signed in (a few at a
    /// time) and only those that sign in are saved, secrets to the keyring (or
    /// KLUIS_SECRETS_DIR). A klant saved already (by name) is updated; a row that gives it
    /// another base URL moves it only with the password and api key the row or the import
    /// gives (never its saved ones). The api key of rows without one comes from
    /// KLUIS_API_KEY; the base URL of new klanten whose row has none from --base-url.
    Import {
        /// The CSV file (UTF-8, UTF-16 or Windows-1252; comma, semicolon or tab) or .xlsx.
        file: PathBuf,
        /// Only show what each row would become; store nothing.
        #[arg(long)]
        dry_run: bool,
        /// Read FIELD from COLUMN (its header name or its number from 1; empty: not at all),
        /// e.g. --map name=Relatie --map tags=
        #[arg(long, value_name = "FIELD=COLUMN")]
        map: Vec<String>,
        /// A password manager's export (Bitwarden CSV or JSON, KeePass/KeePassXC CSV or XML,
        /// 1Password CSV) whose passwords fill the rows that have none: among the logins saved
        /// for the row's service address (host and port), by the klant's name, else by its
        /// username; a login saved for another site, or none, is never used.
        #[arg(long, value_name = "FILE")]
        secrets: Option<PathBuf>,
        /// Klanten signed in at a time.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=32))]
        jobs: u16,
        /// One JSON object per row, one a line.
        #[arg(long)]
        json: bool,
    },
    /// Write the klant list as CSV (no secret)
    ///
    /// Write the klant list as CSV — name, username, base URL, plan, retention, tags; no
    /// secret — to standard output or --out FILE (owner-only). `profiles import` reads it back
    /// (add a password column, or the api key in KLUIS_API_KEY, for a new PC).
    Export {
        /// The file to write (it must not exist yet).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// List the profiles.
    List {
        /// One JSON object per profile, one a line.
        #[arg(long)]
        json: bool,
    },
    /// Send a test ping to the profile's monitor (see `kluis plan --ping`).
    TestPing {
        /// The profile's name or id.
        profile: String,
    },
    /// Remove a profile and its saved secrets (its backups and history stay).
    Remove {
        /// The profile's name or id.
        profile: String,
    },
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("when").args(["daily", "weekdays", "weekly", "every", "manual", "pause", "resume"])))]
#[command(group(clap::ArgGroup::new("monitor").args(["ping", "no_ping"])))]
pub struct PlanArgs {
    /// The profile's name or id.
    #[arg(required_unless_present_any = ["tag", "all"], conflicts_with_all = ["tag", "all"])]
    pub profile: Option<String>,
    /// Instead of one profile: every profile with this tag (see `profiles import`).
    #[arg(long, conflicts_with = "all")]
    pub tag: Option<String>,
    /// Instead of one profile: every profile.
    #[arg(long)]
    pub all: bool,
    /// Every day at HH:MM (local time).
    #[arg(long, value_name = "HH:MM")]
    pub daily: Option<String>,
    /// Monday to Friday at HH:MM.
    #[arg(long, value_name = "HH:MM")]
    pub weekdays: Option<String>,
    /// Once a week: a day (monday … sunday) and HH:MM.
    #[arg(long, num_args = 2, value_names = ["DAY", "HH:MM"])]
    pub weekly: Option<Vec<String>>,
    /// Every N hours, e.g. 6h (or 6).
    #[arg(long, value_name = "HOURS")]
    pub every: Option<String>,
    /// Only when someone asks (no plan).
    #[arg(long)]
    pub manual: bool,
    /// Pause the plan (it is kept).
    #[arg(long)]
    pub pause: bool,
    /// Resume a paused plan.
    #[arg(long)]
    pub resume: bool,
    /// Ping this URL after each unattended backup of the klant, with /fail appended when it
    /// failed (healthchecks.io style), so an outside monitor notices failures and silence.
    #[arg(long, value_name = "URL")]
    pub ping: Option<String>,
    /// Stop pinging the klant's monitor.
    #[arg(long)]
    pub no_ping: bool,
    /// Which backups to keep after each save (deleting the others: see `kluis prune`).
    #[command(flatten)]
    pub retention: RetentionArgs,
    /// Keep every backup (remove the retention rule).
    #[arg(long, conflicts_with_all = ["keep_last", "keep_daily", "keep_weekly", "keep_monthly"])]
    pub keep_all: bool,
    /// Read all the klant's backups again once a month, after a backup (`on` or `off`).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    pub verify_monthly: Option<bool>,
    /// Prove once a month, after a backup, that the klant's newest backup restores (`on`, the
    /// default, or `off`).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    pub restore_test_monthly: Option<bool>,
    /// Copy this klant's backups to these copy targets only (repeat for each; see `kluis
    /// copy-target list`).
    #[arg(long, value_name = "TARGET")]
    pub copy_to: Vec<String>,
    /// Copy this klant's backups to every copy target again (the default).
    #[arg(long, conflicts_with = "copy_to")]
    pub copy_to_all: bool,
}

fn on_off(text: &str) -> std::result::Result<bool, String> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err("say on or off".into()),
    }
}

/// A retention rule from flags: any part given makes a rule (0: not by that part).
#[derive(Args, Clone, Default)]
pub struct RetentionArgs {
    /// Keep the newest N backups.
    #[arg(long, value_name = "N")]
    pub keep_last: Option<u32>,
    /// Keep the newest backup of each of the last N days that have one.
    #[arg(long, value_name = "N")]
    pub keep_daily: Option<u32>,
    /// Keep the newest backup of each of the last N weeks that have one.
    #[arg(long, value_name = "N")]
    pub keep_weekly: Option<u32>,
    /// Keep the newest backup of each of the last N months that have one.
    #[arg(long, value_name = "N")]
    pub keep_monthly: Option<u32>,
}

impl RetentionArgs {
    /// The rule the flags give, if any flag was given.
    pub fn rule(&self) -> Option<kluis_core::retention::Retention> {
        let rule = kluis_core::retention::Retention {
            keep_last: self.keep_last,
            keep_daily: self.keep_daily,
            keep_weekly: self.keep_weekly,
            keep_monthly: self.keep_monthly,
        };
        (rule != kluis_core::retention::Retention::default()).then_some(rule)
    }
}

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
    /// Run `kluis run-due` every 15 minutes (a systemd user timer, a Windows task)
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
    #[arg(long)]
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
    /// Backups running at once (--all, run-due).
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

/// `kluis recover …`: the catalogs and records the lost computer wrote to a copy target, read
/// with the recovery kit's key.
#[derive(Subcommand, Debug)]
pub enum RecoverCommand {
    /// Every backup on the target, with what proves it
    ///
    /// Every backup on the target, newest first per klant: whose (klant and computer), its
    /// name, size, date, encryption, lock and last restore test, and what proves it (its
    /// computer's catalog, else its own record, or nothing: a file by its name alone).
    List {
        #[command(flatten)]
        from: RecoverFrom,
        /// One JSON object per backup, one a line.
        #[arg(long)]
        json: bool,
    },
    /// Restore a klant's backup from the target, checked and decrypted
    ///
    /// A klant's backup (its newest, or --backup NAME) fetched from the target, checked
    /// against its SHA-256, opened with the passphrase sealed in the catalog where it is
    /// encrypted with one, and restored into --to as `kluis restore` does (every safety of it
    /// kept; exit 8 when an entry is left out).
    Restore {
        #[command(flatten)]
        from: RecoverFrom,
        /// The klant, by its name as the list shows it (case aside).
        #[arg(long)]
        klant: String,
        /// The backup's file name (default: the klant's newest).
        #[arg(long)]
        backup: Option<String>,
        /// The folder to restore into (made when its parent exists).
        #[arg(long)]
        to: PathBuf,
        /// Only this path of the backup (repeat for more).
        #[arg(long)]
        only: Vec<String>,
        /// An age identity file, for a backup encrypted to a recipient the office holds.
        #[arg(long)]
        identity: Option<PathBuf>,
        /// Replace files already in the folder (else nothing is written when one would be).
        #[arg(long)]
        overwrite: bool,
    },
    /// Carry on for the lost computer: its klanten, plans and copies
    ///
    /// This computer carries on for the lost one: its klanten become profiles here with their
    /// plans, retention, tags and encryption (no password or api key: give those with
    /// `kluis profiles import` before their next backup), their backups' copies on the target
    /// go into this computer's history (the target's rule and the dashboard go on where they
    /// stopped; nothing is copied twice), and this computer keeps the kit and writes the
    /// catalogs from now on, naming the lost one as adopted. Run again, it adds only what is
    /// new.
    Adopt {
        #[command(flatten)]
        from: RecoverFrom,
        /// The lost computer, by its name in `recover list` (needed when the target holds the
        /// catalogs of several).
        #[arg(long, value_name = "NAME")]
        computer: Option<String>,
        /// This computer's name in the catalogs (default: its host name, or the name it had).
        #[arg(long)]
        pc_name: Option<String>,
        /// Make the kit given this computer's though it keeps another (which then opens
        /// nothing it writes).
        #[arg(long)]
        replace_kit: bool,
    },
}

/// Which target, and the kit's key.
#[derive(clap::Args, Debug)]
pub struct RecoverFrom {
    /// The copy target, by its name in `kluis copy-target list`.
    #[arg(long)]
    pub target: String,
    /// The recovery kit's key file (or KLUIS_RECOVERY_KEY: the key's text or its 24 words).
    #[arg(long, value_name = "FILE")]
    pub recovery_key: Option<PathBuf>,
    /// Go back: each computer's newest catalog written before this day (YYYY-MM-DD, UTC) or
    /// moment (RFC 3339) instead of its newest — past a catalog that is not trusted. Copies
    /// made since are still found by their own records.
    #[arg(long, value_name = "DATE")]
    pub before: Option<String>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every command's summary — the line `kluis --help` (and each `kluis COMMAND --help`) lists
    /// it by — is one line of at most 80 characters; its paragraph is for `kluis help
    /// COMMAND`. (A list of 28 commands each a paragraph long was four screens.)
    #[test]
    fn every_commands_summary_is_one_short_line() {
        fn check(command: &clap::Command, path: &str, long: &mut Vec<String>) {
            for sub in command.get_subcommands() {
                let path = format!("{path} {}", sub.get_name());
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                if about.is_empty() || about.contains('\n') || about.chars().count() > 80 {
                    long.push(format!("{path}: {} characters", about.chars().count()));
                }
                check(sub, &path, long);
            }
        }
        let mut long = Vec::new();
        check(&super::Cli::command(), "kluis", &mut long);
        assert!(
            long.is_empty(),
            "summaries to shorten:\n{}",
            long.join("\n")
        );
    }
}
