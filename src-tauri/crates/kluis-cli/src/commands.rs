//! The subcommands.

use std::path::Path;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use kluis_core::callback::{Reattacher, RelayTransport, TunnelTransport, WebhookSiteTransport};
use kluis_core::{
    BackupJob, BackupRequest, CallbackTransport, Destination, DownloadOptions, Downloader, Error,
    History, ListenerTransport, Owner, Result, Saved, Secret, ServiceClient, ServiceConfig,
    Session,
};
use kluis_sim::{Sim, SimConfig};
use uuid::Uuid;

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
            let id = Uuid::new_v4();
            let cancel = tokio::sync::Notify::new();
            let job = backup(config, &history, &args, id, Some(&cancel));
            let saved = crate::stop::backup(&history, id, &cancel, job).await?;
            report(id, &saved, args.json);
            Ok(())
        }
        Command::Resume { json, include_app } => {
            let config = cli.connection.service_config()?;
            let history = open_history(cli.history_db.as_ref())?;
            let owner = (!include_app).then_some(Owner::Cli);
            crate::stop::resume(resume(config, &history, owner, json)).await
        }
        Command::Cancel { job } => {
            let history = open_history(cli.history_db.as_ref())?;
            let Some(_claim) = history.claim(job)? else {
                return Err(Error::Config(
                    "That backup is running in another Kluis process; stop it there.".into(),
                ));
            };
            match history.get(job)? {
                None => Err(Error::Config(
                    "There is no backup with that id (see `kluis history`).".into(),
                )),
                Some(entry) if entry.reached().is_final() => {
                    Err(Error::Config("That backup has already ended.".into()))
                }
                Some(_) => {
                    history.abandon(job, &Error::Cancelled)?;
                    eprintln!("kluis: the backup was cancelled.");
                    Ok(())
                }
            }
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

async fn backup(
    config: ServiceConfig,
    history: &History,
    args: &BackupArgs,
    id: Uuid,
    cancel: Option<&tokio::sync::Notify>,
) -> Result<Saved> {
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
        cancel,
    };
    let request = BackupRequest {
        id,
        profile: args.profile.clone(),
        owner: Owner::Cli,
        destination,
        callback_timeout: Duration::from_secs(args.timeout),
    };
    let mut stages = StageDisplay::new(request.callback_timeout);
    job.run(&request, &mut |event| stages.show(event)).await
}

fn report(id: Uuid, saved: &Saved, json: bool) {
    if json {
        let line = serde_json::json!({
            "job": id, "path": saved.path, "bytes": saved.bytes, "sha256": saved.sha256,
        });
        println!("{line}");
    } else {
        println!("{}", saved.path.display());
    }
}

fn report_failure(id: Uuid, error: &Error, json: bool) {
    if json {
        println!("{}", serde_json::json!({ "job": id, "error": error }));
    } else {
        eprintln!("kluis: backup {id}: {error}");
    }
}

/// `kluis resume`: ends what can never finish, then finishes the rest side by side, reporting
/// each as it ends. Fails with the first failure's error, so the exit code tells a scheduler.
async fn resume(
    config: ServiceConfig,
    history: &History,
    owner: Option<Owner>,
    json: bool,
) -> Result<()> {
    let sweep = history.sweep(config.base_url.as_str(), owner)?;
    let mut first_error = None;
    for (id, error) in sweep.ended {
        report_failure(id, &error, json);
        first_error.get_or_insert(error);
    }
    if sweep.running_elsewhere > 0 {
        eprintln!(
            "kluis: {} backup(s) are still running in another Kluis process; left to it.",
            sweep.running_elsewhere
        );
    }
    if sweep.other_owner > 0 {
        eprintln!(
            "kluis: {} backup(s) were started by the Kluis app; it finishes them at its next start (or use --include-app).",
            sweep.other_owner
        );
    }
    if sweep.other_service > 0 {
        eprintln!(
            "kluis: {} backup(s) belong to another service; resume them with its settings.",
            sweep.other_service
        );
    }
    if sweep.resumable.is_empty() {
        if first_error.is_none() {
            eprintln!("kluis: no backup to resume.");
        }
        return first_error.map_or(Ok(()), Err);
    }
    let relay_secret = std::env::var("KLUIS_RELAY_SECRET").ok().map(Secret::new);
    let mut reattacher = Reattacher::new(config.clone(), relay_secret);
    let downloader = Downloader::new(&config, DownloadOptions::default())?;
    let session = Session::new(ServiceClient::new(config)?);
    let mut running = FuturesUnordered::new();
    for job in &sweep.resumable {
        let spec = job.journal.as_ref().and_then(|j| j.callback.clone());
        let transport = match spec {
            Some(spec) => reattacher.transport(&spec).await,
            None => continue, // the sweep only keeps jobs with one
        };
        let (session, downloader) = (&session, &downloader);
        eprintln!(
            "kluis: resuming backup {} (started {}, {}).",
            job.id(),
            kluis_core::history::format_utc(job.entry.started_at_ms),
            job.entry.stage
        );
        running.push(async move {
            let outcome = match transport {
                Ok(transport) => {
                    let run = BackupJob {
                        session,
                        transport: &*transport,
                        downloader,
                        history,
                        cancel: None, // signals only stop a resume: the jobs stay kept
                    };
                    run.resume(job, &mut |_| {}).await
                }
                Err(e) => Err(e),
            };
            (job.id(), outcome)
        });
    }
    while let Some((id, outcome)) = running.next().await {
        match outcome {
            Ok(saved) => report(id, &saved, json),
            Err(error) => {
                report_failure(id, &error, json);
                first_error.get_or_insert(error);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
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
    let id = Uuid::new_v4();
    let saved = backup(config, &history, &args, id, None).await?;
    eprintln!("Saved {} bytes, SHA-256 {}:", saved.bytes, saved.sha256);
    report(id, &saved, false);
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
