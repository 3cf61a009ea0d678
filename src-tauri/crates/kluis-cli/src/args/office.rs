//! `kluis office …`: this PC in an office of several PCs, around the office hub (kluis-relay).

use std::path::PathBuf;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum OfficeCommand {
    /// Join the office: with a join code, or at the hub URL with a PC key
    ///
    /// Join the office. With --code: the join code a PC of the office made (kluis office
    /// invite; Settings → Office → Add a PC), from KLUIS_OFFICE_JOIN_CODE or, with --stdin,
    /// standard input. Otherwise at the hub URL, with this PC's key from the hub's operator
    /// (kluis-relay tenant pc-key add OFFICE NAME) in KLUIS_OFFICE_PC_KEY or the first line of
    /// standard input with --stdin, and the office key in KLUIS_OFFICE_KEY or the second line —
    /// none only for the office's first PC, which makes it (shown once). Keys are never
    /// arguments; they go to the keyring (or KLUIS_SECRETS_DIR); the hub never receives the
    /// office key. From then on, a plan's backup asks the hub first: a klant another PC backed
    /// up in this slot is skipped and said.
    Join {
        /// The hub's address, https://… (not with --code: the code holds it).
        #[arg(required_unless_present = "code", conflicts_with = "code")]
        url: Option<String>,
        /// This PC's name at the hub (default: the one its key was made for).
        #[arg(long)]
        name: Option<String>,
        /// Join with a join code (from KLUIS_OFFICE_JOIN_CODE, or standard input with --stdin).
        #[arg(long)]
        code: bool,
        /// A CA certificate (PEM) the hub's certificate is signed by, besides the system's.
        #[arg(long, value_name = "FILE")]
        hub_ca: Option<PathBuf>,
        /// Read the keys (or the code) from standard input, one a line.
        #[arg(long)]
        stdin: bool,
    },
    /// Make a join code for the office's next PC (shown once)
    ///
    /// Make a join code for a new PC of the office named NAME: the hub's address, a one-time
    /// enrolment token the hub issues for it (it works once, for a day) and the office key,
    /// as one line on standard output — shown once, to paste on that PC (kluis office join
    /// --code, or Settings → Office). It never passes through the hub.
    Invite {
        /// The new PC's name (RECEPTIE, pc-2).
        name: String,
    },
    /// The office view: every PC and klant, what needs attention
    ///
    /// The office view: the office's PCs (when each was last heard of), then every klant of
    /// every PC, those needing attention first with why. Exits 0 either way: a script reads
    /// `all_safe` in --json.
    Status {
        /// One JSON object (`all_safe`, `pcs`, `klanten` with their `flags`).
        #[arg(long)]
        json: bool,
    },
    /// End a PC's key at the hub (a stolen or retired PC)
    ///
    /// End a PC's key at the office hub (a stolen or retired PC), from any PC of the office.
    Revoke {
        /// The PC's name at the hub.
        name: String,
    },
    /// Leave the office: this PC's key revoked at the hub, its keys removed
    ///
    /// Leave the office: this PC's key revoked at the hub (the office view says it left), its
    /// two keys removed from the keyring; its plans run alone again. To come back it needs a
    /// new join code.
    Leave,
}
