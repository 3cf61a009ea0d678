//! `kluis office …`: this PC in an office of several PCs, around the office hub (kluis-relay).

use std::path::PathBuf;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum OfficeCommand {
    /// Join the office at the hub URL, as this PC
    ///
    /// Join the office whose hub (the office's kluis-relay) is at URL. This PC's key comes
    /// from KLUIS_OFFICE_PC_KEY or, with --stdin, the first line of standard input (the
    /// relay's operator makes it: kluis-relay tenant pc-key add OFFICE NAME). The office key
    /// comes from KLUIS_OFFICE_KEY or the second line of standard input; without one, this PC
    /// is the office's first and makes it (shown once: the office's next PCs join with it).
    /// Both keys go to the keyring (or KLUIS_SECRETS_DIR); the hub never receives the office
    /// key. From then on, a plan's backup asks the hub first: a klant another PC backed up in
    /// this slot is skipped and said.
    Join {
        /// The hub's address, https://…
        url: String,
        /// This PC's name at the hub, as the operator gave its key (RECEPTIE, pc-2).
        #[arg(long)]
        name: String,
        /// A CA certificate (PEM) the hub's certificate is signed by, besides the system's.
        #[arg(long, value_name = "FILE")]
        hub_ca: Option<PathBuf>,
        /// Read the PC key (and the office key) from standard input, one a line.
        #[arg(long)]
        stdin: bool,
    },
    /// This PC's office: the hub, this PC, and the office's PCs
    Status {
        /// One JSON object.
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
    /// Leave the office: this PC's keys removed, its plans alone again
    Leave,
}
