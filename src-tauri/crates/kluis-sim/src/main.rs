//! `kluis-sim`: runs the service simulator until interrupted and prints how to reach it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, DEMO_USERNAME, RESTRICTED_API_KEY};
use kluis_sim::{Sim, SimConfig};

/// A local simulator of the service's webservice_v2 API, over HTTPS on loopback.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address of the service origin.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Address of the file (download) origin.
    #[arg(long, default_value = "127.0.0.1:0")]
    files_listen: SocketAddr,
    /// Where to write the CA certificate clients must trust.
    #[arg(long, default_value_os_t = std::env::temp_dir().join("kluis-sim-ca.pem"))]
    ca_out: PathBuf,
    /// Size in bytes of each backup file.
    #[arg(long, default_value_t = 256 * 1024)]
    payload_size: u64,
    /// Milliseconds between the 202 and the callback.
    #[arg(long, default_value_t = 300)]
    callback_delay_ms: u64,
    /// Minutes a token stays valid.
    #[arg(long, default_value_t = 30)]
    token_minutes: u64,
    /// Do not send Repr-Digest with downloads.
    #[arg(long)]
    no_digest: bool,
    /// Serve downloads at this many bytes per second (a slow file host).
    #[arg(long)]
    download_bytes_per_sec: Option<u64>,
    /// Also stand in for the desktop's notification service on the D-Bus session bus (Linux),
    /// appending each notification shown to this file as a JSON line `{app, summary, body}`.
    #[arg(long)]
    notifications_out: Option<PathBuf>,
    /// Also this many klanten of the demo key: usernames klant-001 …, passwords
    /// wachtwoord-001 … (an office's list to import).
    #[arg(long, default_value_t = 0)]
    klanten: usize,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    kluis_private::logging::init("warn");
    let args = Args::parse();
    let mut config = SimConfig {
        payload_size: args.payload_size,
        token_lifetime: Duration::from_secs(args.token_minutes * 60),
        ..SimConfig::default()
    };
    config.faults.callback_delay = Duration::from_millis(args.callback_delay_ms);
    config.faults.send_digest = !args.no_digest;
    config.faults.download_rate = args.download_bytes_per_sec;
    config
        .accounts
        .extend((1..=args.klanten).map(kluis_sim::config::Account::klant));
    let sim = Sim::start_on(config, args.listen, args.files_listen).await?;
    let _notifications = match &args.notifications_out {
        Some(path) => Some(record_notifications(path.clone()).await?),
        None => None,
    };
    std::fs::write(&args.ca_out, sim.ca_pem())?;
    // One `key=value` a line, so scripts can read it; these are demo credentials, not secrets.
    println!("base_url={}", sim.base_url());
    println!("ca_cert={}", args.ca_out.display());
    println!("api_key={DEMO_API_KEY}");
    println!("restricted_api_key={RESTRICTED_API_KEY}");
    println!("username={DEMO_USERNAME}");
    println!("password={DEMO_PASSWORD}");
    println!("file_url={}", sim.file_url(args.payload_size));
    println!("webhook_site_url={}", sim.webhook_site_url());
    println!("ready");
    tokio::signal::ctrl_c().await?;
    Ok(())
}

/// Serves the stand-in notification service until the returned connection is dropped, each
/// notification appended to `path` as it arrives.
#[cfg(target_os = "linux")]
async fn record_notifications(
    path: PathBuf,
) -> Result<zbus::Connection, Box<dyn std::error::Error>> {
    use std::io::Write;
    let (tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let bus = kluis_sim::notifications::serve(tx).await?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    tokio::spawn(async move {
        while let Some(notification) = heard.recv().await {
            let line = serde_json::to_string(&notification).expect("serialises");
            if writeln!(file, "{line}").is_err() {
                tracing::warn!("a notification could not be recorded");
            }
        }
    });
    Ok(bus)
}

#[cfg(not(target_os = "linux"))]
async fn record_notifications(_path: PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    Err("--notifications-out stands in for a D-Bus service: Linux only".into())
}
