//! `kluis profiles …`, `plan`, `mail`: the klanten, their plans and retention rules, and who
//! hears from Kluis.

use std::path::PathBuf;

use clap::{Args, Subcommand};

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
    #[arg(long, default_value_t = kluis_reporting::mail_settings::DEFAULT_PORT)]
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
    /// Remove a profile and its secrets (backups and history stay).
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
