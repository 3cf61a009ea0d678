//! `kluis-relay`: serves the relay until stopped, or administers its tenants.
//!
//! Parts and flow: [`Args`] (clap) chooses the store — SQLite in `--data`, or PostgreSQL by
//! `--database-url` — opened by `open_store`; then either `serve` (the HTTP router of the
//! library, its metrics, TLS or not, until a stop signal; the open files raised first) or
//! `tenant` (`admin`: add, list, rotate a key, quota, remove, and offices' PC keys — printed
//! for a person, a new key once).
//! Everything the relay does is the library's (`kluis_relay`); this file only wires it to a
//! process, its flags and its exit codes.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use kluis_relay::storage::postgres::PgStore;
use kluis_relay::storage::Storage;
use kluis_relay::{metrics_router, router, Relay, RelayConfig, SqliteStore};

mod admin;

use admin::{tenant, TenantCommand};

/// A self-hostable inbox for webhook callbacks, long-polled by Kluis: for one office (a shared
/// secret in KLUIS_RELAY_SECRET) or many (a key per tenant: `kluis-relay tenant add NAME`).
#[derive(Parser)]
#[command(version, args_conflicts_with_subcommands = true)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: Serve,
    /// Folder for the SQLite database (one relay instance).
    #[arg(long, global = true, conflicts_with = "database_url")]
    data: Option<PathBuf>,
    /// PostgreSQL for several relay instances: postgres://user@host:5432/db. The password
    /// goes in PGPASSWORD, or the whole URL in KLUIS_RELAY_DATABASE_URL — never on the command
    /// line, where other users can read it.
    #[arg(long, global = true)]
    database_url: Option<String>,
}

#[derive(clap::Args)]
struct Serve {
    /// Address to listen on, e.g. 0.0.0.0:8443 (or 127.0.0.1:8080 behind a reverse proxy).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Address for /metrics (Prometheus) and the health checks, e.g. 127.0.0.1:9464. Kept off
    /// the public listener: its labels name the tenants.
    #[arg(long)]
    metrics_listen: Option<SocketAddr>,
    /// Certificate chain (PEM) to serve TLS directly; without it, plain HTTP for a reverse proxy.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Inbox API requests a second this instance takes from all tenants together (429 beyond).
    #[arg(long, default_value_t = 2000.0)]
    api_per_sec: f64,
    /// Seconds after which a parked long-poll looks at the database again without a wake-up
    /// (a safety net: wake-ups come from this instance, or by NOTIFY from others).
    #[arg(long, default_value_t = 15)]
    recheck_secs: u64,
    /// Log lines as text or as JSON objects (one a line, for a log collector).
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Tenants: each office's own key, inboxes and quota.
    #[command(subcommand)]
    Tenant(TenantCommand),
}

fn fail(message: impl std::fmt::Display, code: u8) -> ExitCode {
    eprintln!("kluis-relay: {message}");
    ExitCode::from(code)
}

/// Connections to PostgreSQL per instance: enough for bursts of callbacks and polls (a parked
/// long-poll holds none while it waits).
const POSTGRES_CONNECTIONS: usize = 32;

async fn open_store(
    data: Option<PathBuf>,
    database_url: Option<String>,
) -> Result<Box<dyn Storage>, ExitCode> {
    if let Some(url) = &database_url {
        let has_password = url
            .parse::<tokio_postgres::Config>()
            .is_ok_and(|c| c.get_password().is_some());
        if has_password {
            return Err(fail("keep the database password off the command line (other users can read it): put it in PGPASSWORD, or the whole URL in KLUIS_RELAY_DATABASE_URL", 2));
        }
    }
    let from_env = std::env::var("KLUIS_RELAY_DATABASE_URL").ok();
    match (data, database_url.or(from_env)) {
        (Some(data), _) => {
            if let Err(e) = kluis_private::files::create_dir_all(&data) {
                return Err(fail(format!("cannot create {}: {e}", data.display()), 2));
            }
            match SqliteStore::open(&data.join("relay.sqlite3")) {
                Ok(store) => Ok(Box::new(store)),
                Err(e) => Err(fail(e, 1)),
            }
        }
        (None, Some(url)) => match PgStore::connect(&url, POSTGRES_CONNECTIONS).await {
            Ok(store) => Ok(Box::new(store)),
            Err(e) => Err(fail(e, 1)),
        },
        (None, None) => Err(fail(
            "say where the database is: --data DIR (SQLite) or --database-url postgres://… (PostgreSQL)",
            2,
        )),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let store = match open_store(args.data, args.database_url).await {
        Ok(store) => store,
        Err(code) => return code,
    };
    match args.command {
        Some(Command::Tenant(command)) => tenant(&*store, command).await,
        None => serve(store, args.serve).await,
    }
}

async fn serve(store: Box<dyn Storage>, args: Serve) -> ExitCode {
    match args.log_format {
        LogFormat::Text => kluis_private::logging::init("info"),
        LogFormat::Json => kluis_private::logging::init_json("info"),
    }
    raise_open_files();
    let Some(listen) = args.listen else {
        return fail(
            "say where to listen: --listen ADDR (or use a subcommand: kluis-relay --help)",
            2,
        );
    };
    let secret = std::env::var("KLUIS_RELAY_SECRET").unwrap_or_default();
    if !secret.is_empty() && secret.len() < 24 {
        return fail("KLUIS_RELAY_SECRET must be a random secret of at least 24 characters (clients use the same).", 2);
    }
    if secret.is_empty() {
        tracing::info!(
            "no KLUIS_RELAY_SECRET: only tenant keys are accepted (kluis-relay tenant add NAME)"
        );
    }
    if let Err(e) = store.warm().await {
        return fail(e, 1);
    }
    let mut config = RelayConfig::new(secret);
    config.api_per_sec = args.api_per_sec;
    config.recheck = Duration::from_secs(args.recheck_secs.max(1));
    let relay = Relay::with_store(store, config);
    let expiring = relay.clone();
    tokio::spawn(async move {
        loop {
            expiring.expire().await;
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
    });
    let listener = match bind(listen) {
        Ok(listener) => listener,
        Err(e) => return fail(format!("cannot listen on {listen}: {e}"), 1),
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => match kluis_https::server_config_from_pem(cert, key) {
            Ok(tls) => Some(tls),
            Err(e) => return fail(e, 2),
        },
        _ => None,
    };
    // Stopping (SIGTERM from systemd, or Ctrl-C): parked long-polls are told to poll again,
    // requests in flight are answered, then the process ends.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopping = relay.clone();
    tokio::spawn(async move {
        stop_signal().await;
        tracing::info!("stopping: parked long-polls are told to poll again");
        stopping.shut_down();
        stop_tx.send_replace(true);
    });
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stop| *stop).await;
    };
    if let Some(addr) = args.metrics_listen {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(metrics) => {
                let addr = metrics.local_addr().map_or(addr, |a| a);
                tracing::info!(%addr, "serving /metrics");
                tokio::spawn(kluis_https::serve(
                    metrics,
                    None,
                    metrics_router(relay.clone()),
                    Default::default(),
                    stopped(stop_rx.clone()),
                ));
            }
            Err(e) => return fail(format!("cannot listen on {addr}: {e}"), 1),
        }
    }
    let addr = listener.local_addr().map_or(listen, |a| a);
    tracing::info!(%addr, engine = relay.store().engine(), tls = tls.is_some(), "serving");
    // The same bounds with or without TLS: a connection cap and a header-read timeout.
    let limits = kluis_https::ServeLimits {
        max_connections: 16_384,
        drain: Duration::from_secs(10),
        ..Default::default()
    };
    kluis_https::serve(listener, tls, router(relay), limits, stopped(stop_rx)).await;
    tracing::info!("stopped");
    ExitCode::SUCCESS
}

/// Listens on `addr` with a long accept queue: when another instance dies, its clients (or the
/// load balancer on their behalf) reconnect here all at once, and connections beyond a short
/// queue would wait a second or more for the SYN to be sent again. The kernel caps the queue
/// at net.core.somaxconn.
fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(16_384)
}

/// Each parked long-poll holds a connection and so a file descriptor: raise the soft limit to
/// the hard one (systemd's default soft limit is 1,024).
fn raise_open_files() {
    #[cfg(unix)]
    // SAFETY: getrlimit and setrlimit with a pointer to a local struct.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max.min(1 << 20);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
