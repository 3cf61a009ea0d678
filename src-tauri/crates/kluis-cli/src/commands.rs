//! The subcommands.

use std::path::Path;
use std::time::Duration;

use kluis_core::callback::{RelayTransport, TunnelTransport, WebhookSiteTransport};
use kluis_core::{
    BackupJob, BackupRequest, CallbackTransport, Destination, DownloadOptions, Downloader, Error,
    History, ListenerTransport, Result, Saved, Secret, ServiceClient, ServiceConfig, Session,
};
use kluis_sim::{Sim, SimConfig};

use crate::display::{self, StageDisplay};
use crate::settings::{open_history, BackupArgs, CallbackKind, Cli, Command};

pub async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Environment => {
            let session = Session::new(ServiceClient::new(cli.connection.service_config()?)?);
            let environment = session.environment().await?;
            println!(
                "{}",
                serde_json::to_string_pretty(&environment).expect("JSON values serialise")
            );
            Ok(())
        }
        Command::Backup(args) => {
            let config = cli.connection.service_config()?;
            let history = open_history(cli.history_db.as_ref())?;
            let saved = backup(config, &history, &args).await?;
            report(&saved, args.json);
            Ok(())
        }
        Command::History {
            json,
            profile,
            limit,
        } => {
            let history = open_history(cli.history_db.as_ref())?;
            display::history(&history.list(profile.as_deref(), limit)?, json);
            Ok(())
        }
        Command::CallbackTest { callback, listen } => {
            callback_test(&callback, listen, cli.connection.service_config()?).await
        }
        Command::Demo { out, size_mib } => demo(&out, size_mib, cli.history_db.as_ref()).await,
    }
}

async fn backup(config: ServiceConfig, history: &History, args: &BackupArgs) -> Result<Saved> {
    let destination = Destination::from_out(&args.out)?;
    let transport = transport(&args.callback, args.listen, &config).await?;
    let options = DownloadOptions {
        max_bytes: args.max_bytes,
        ..DownloadOptions::default()
    };
    let downloader = Downloader::new(&config, options)?;
    let session = Session::new(ServiceClient::new(config)?);
    let job = BackupJob {
        session: &session,
        transport: &*transport,
        downloader: &downloader,
        history,
    };
    let request = BackupRequest {
        id: uuid::Uuid::new_v4(),
        profile: args.profile.clone(),
        destination,
        callback_timeout: Duration::from_secs(args.timeout),
    };
    let mut stages = StageDisplay::new(request.callback_timeout);
    job.run(&request, &mut |event| stages.show(event)).await
}

fn report(saved: &Saved, json: bool) {
    if json {
        let line =
            serde_json::json!({ "path": saved.path, "bytes": saved.bytes, "sha256": saved.sha256 });
        println!("{line}");
    } else {
        println!("{}", saved.path.display());
    }
}

/// Starts the simulator in this process and backs up from it, as a newcomer's first try.
async fn demo(out: &Path, size_mib: u64, history_db: Option<&std::path::PathBuf>) -> Result<()> {
    let config = SimConfig {
        payload_size: size_mib * 1024 * 1024,
        ..SimConfig::default()
    };
    let sim = Sim::start(config)
        .await
        .map_err(|e| Error::Io(e.to_string()))?;
    eprintln!(
        "Demo: a simulated service runs at {} (no real data).",
        sim.base_url()
    );
    std::fs::create_dir_all(out).map_err(|e| Error::io(format!("create {}", out.display()), e))?;
    let mut config = ServiceConfig::new(
        sim.base_url().as_str(),
        Secret::new(kluis_sim::config::DEMO_API_KEY.to_string()),
        kluis_sim::config::DEMO_USERNAME.into(),
        Secret::new(kluis_sim::config::DEMO_PASSWORD),
        false,
    )?;
    config.extra_ca_pem = Some(sim.ca_pem().to_string());
    let history = open_history(history_db)?;
    let session = Session::new(ServiceClient::new(config.clone())?);
    let environment = session.environment().await?;
    eprintln!(
        "Signed in; environment: {}",
        serde_json::to_string(&environment).unwrap_or_default()
    );
    let args = BackupArgs {
        out: out.to_path_buf(),
        callback: CallbackKind::Loopback,
        listen: None,
        timeout: 60,
        json: false,
        max_bytes: None,
        profile: "demo".into(),
    };
    let saved = backup(config, &history, &args).await?;
    eprintln!("Saved {} bytes, SHA-256 {}:", saved.bytes, saved.sha256);
    report(&saved, false);
    Ok(())
}

/// The callback transport chosen with `--callback` (and `--listen`).
async fn transport(
    kind: &CallbackKind,
    listen: Option<std::net::SocketAddr>,
    config: &ServiceConfig,
) -> Result<Box<dyn CallbackTransport>> {
    Ok(match kind {
        CallbackKind::Loopback => Box::new(ListenerTransport::loopback().await?),
        CallbackKind::Direct(url) => {
            let listen = listen.ok_or_else(|| {
                Error::Config("--callback direct=… needs --listen ADDR: the local address your reverse proxy forwards the callback to.".into())
            })?;
            Box::new(ListenerTransport::direct(url, listen).await?)
        }
        CallbackKind::Tunnel(program) => {
            Box::new(TunnelTransport::start(std::path::Path::new(program)).await?)
        }
        CallbackKind::WebhookSite => {
            eprintln!(
                "kluis: note: with --callback webhook-site the service's callback id passes through webhook.site, a third party. \
                 It never sees your token or credentials; use a relay to keep even the id in house."
            );
            let base = std::env::var("KLUIS_WEBHOOK_SITE_URL")
                .unwrap_or_else(|_| kluis_core::callback::webhook_site::DEFAULT_BASE.into());
            Box::new(WebhookSiteTransport::new(&base, config)?)
        }
        CallbackKind::Relay(url) => {
            let secret = Secret::new(std::env::var("KLUIS_RELAY_SECRET").unwrap_or_default());
            Box::new(RelayTransport::new(url, secret, config, None)?)
        }
    })
}

/// `kluis callback-test`: one test call through the transport, timed.
async fn callback_test(
    kind: &CallbackKind,
    listen: Option<std::net::SocketAddr>,
    mut config: ServiceConfig,
) -> Result<()> {
    let transport = transport(kind, listen, &config).await?;
    if let Some(pem) = transport.test_trust_pem() {
        config.extra_ca_pem = Some(config.extra_ca_pem.take().unwrap_or_default() + &pem);
    }
    let http = kluis_core::http::build_client(&config, kluis_core::http::RedirectRule::SameOrigin)?;
    let took = kluis_core::callback::test_callback(&*transport, &http).await?;
    println!(
        "The test call came back through the {} transport in {} ms.",
        transport.name(),
        took.as_millis()
    );
    Ok(())
}
