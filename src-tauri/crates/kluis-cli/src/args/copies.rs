//! `kluis copy-target …`: where the copies off this computer go (a folder, an S3 bucket, an
//! SFTP server) and their flags.

use std::path::PathBuf;

use clap::Subcommand;

use super::RetentionArgs;

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
