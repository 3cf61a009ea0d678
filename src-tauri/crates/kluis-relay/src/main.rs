//! `kluis-relay`: serves the relay until stopped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use kluis_relay::{router, Relay, RelayConfig, Store};

/// A self-hostable inbox for webhook callbacks, long-polled by Kluis.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on, e.g. 0.0.0.0:8443 (or 127.0.0.1:8080 behind a reverse proxy).
    #[arg(long)]
    listen: SocketAddr,
    /// Folder for the database.
    #[arg(long)]
    data: PathBuf,
    /// Certificate chain (PEM) to serve TLS directly; without it, plain HTTP for a reverse proxy.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

#[tokio::main]
async fn main() {
    kluis_https::logging::init("info");
    let args = Args::parse();
    let secret = std::env::var("KLUIS_RELAY_SECRET").unwrap_or_default();
    if secret.len() < 24 {
        eprintln!("kluis-relay: set KLUIS_RELAY_SECRET to a random secret of at least 24 characters (clients use the same).");
        std::process::exit(2);
    }
    if let Err(e) = kluis_https::private::create_dir_all(&args.data) {
        eprintln!("kluis-relay: cannot create {}: {e}", args.data.display());
        std::process::exit(2);
    }
    let store = match Store::open(&args.data.join("relay.sqlite3")) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("kluis-relay: {e}");
            std::process::exit(1);
        }
    };
    let relay = Relay::new(store, RelayConfig::new(secret));
    let expiring = relay.clone();
    tokio::spawn(async move {
        loop {
            expiring.expire();
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
    });
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("kluis-relay: cannot listen on {}: {e}", args.listen);
            std::process::exit(1);
        }
    };
    let app = router(relay);
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => match kluis_https::server_config_from_pem(cert, key) {
            Ok(tls) => {
                tracing::info!(addr = %args.listen, "serving HTTPS");
                Some(tls)
            }
            Err(e) => {
                eprintln!("kluis-relay: {e}");
                std::process::exit(2);
            }
        },
        _ => {
            tracing::info!(addr = %args.listen, "serving HTTP (put TLS in front of it)");
            None
        }
    };
    // The same bounds with or without TLS: a connection cap and a header-read timeout.
    let limits = kluis_https::ServeLimits {
        max_connections: 4096,
        ..Default::default()
    };
    kluis_https::serve(listener, tls, app, limits, stop).await;
}
