//! `kluis recover …`: a lost computer's copies read with the recovery kit.

use std::path::PathBuf;

use clap::Subcommand;

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
