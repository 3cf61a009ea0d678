//! Command-line flags and environment variables.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use kluis_core::{CallbackChoice, Error, History, Result, Secret, ServiceConfig};

/// Back up an organisation's data from the service's webservice_v2 API.
#[derive(Parser)]
#[command(name = "kluis", version)]
pub struct Cli {
    #[command(flatten)]
    pub connection: ServiceArgs,
    /// The history database (default: the platform's data folder).
    #[arg(long, env = "KLUIS_HISTORY_DB", global = true)]
    pub history_db: Option<PathBuf>,
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
        /// Only this profile's backups.
        #[arg(long)]
        profile: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
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

#[derive(Args)]
pub struct BackupArgs {
    /// A folder to save in (the file keeps the service's name) or a file path.
    #[arg(long)]
    pub out: PathBuf,
    /// How the service's callback reaches this computer: `loopback` (a listener on 127.0.0.1,
    /// for the simulator), `relay=URL` (a kluis-relay inbox; secret in KLUIS_RELAY_SECRET) or
    /// `direct=https://public.example/kluis` (your reverse proxy forwards it to --listen) or
    /// `tunnel=cloudflared` (a Cloudflare quick tunnel; the value is the program or its path) or
    /// `webhook-site` (no server; webhook.site sees the callback id, never your credentials).
    #[arg(long, value_parser = CallbackChoice::parse, default_value = "loopback")]
    pub callback: CallbackChoice,
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
    /// Name recorded in the history.
    #[arg(long, env = "KLUIS_PROFILE", default_value = "default")]
    pub profile: String,
}

impl ServiceArgs {
    /// The service settings, with a clear error naming each missing one.
    pub fn service_config(&self) -> Result<ServiceConfig> {
        let missing = |what: &str, var: &str| {
            Error::Config(format!(
                "The {what} is not set. Use --{} or {var}.",
                what.replace(' ', "-")
            ))
        };
        let base_url = self
            .base_url
            .as_deref()
            .ok_or_else(|| missing("base url", "KLUIS_BASE_URL"))?;
        let api_key = self
            .api_key
            .clone()
            .ok_or_else(|| missing("api key", "KLUIS_API_KEY"))?;
        let username = self
            .username
            .clone()
            .ok_or_else(|| missing("username", "KLUIS_USERNAME"))?;
        let password = self
            .password
            .clone()
            .ok_or_else(|| missing("password", "KLUIS_PASSWORD"))?;
        let mut config = ServiceConfig::new(
            base_url,
            Secret::new(api_key),
            username,
            Secret::new(password),
            self.allow_http_loopback,
        )?;
        if let Some(path) = &self.ca_cert {
            let pem = std::fs::read_to_string(path).map_err(|e| {
                Error::Config(format!(
                    "Could not read the CA certificate {}: {e}.",
                    path.display()
                ))
            })?;
            config.extra_ca_pem = Some(pem);
        }
        Ok(config)
    }
}

pub fn open_history(path: Option<&PathBuf>) -> Result<History> {
    match path {
        Some(path) => History::open(path),
        None => History::open(&History::default_path()?),
    }
}
