//! The subcommands: each a thin host over kluis-core's [`Engine`] — it starts, watches and
//! reports jobs; the engine runs them.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use kluis_core::engine::{
    test_transport, CallbackChoice, Demo, EventSink, Launch, ResumeScope, ServiceConnection,
    TransportNeeds, Work, DEMO_ACCOUNTS,
};
use kluis_core::{
    BackupRequest, CallbackTransport, Destination, DownloadOptions, Engine, Error, Owner, Result,
    Saved, Secret, ServiceClient, ServiceConfig, Session,
};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::display::{self, StageDisplay};
use crate::settings::{open_history, BackupArgs, Cli, Command};

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
            let engine = Engine::new(Arc::new(open_history(cli.history_db.as_ref())?));
            let id = Uuid::new_v4();
            let cancel = Arc::new(Notify::new());
            let job = backup(&engine, config, &args, id, Some(cancel.clone()));
            let saved = crate::stop::backup(&engine, id, &cancel, job).await?;
            report(id, &saved, args.json);
            Ok(())
        }
        Command::Resume { json, include_app } => {
            let config = cli.connection.service_config()?;
            let engine = Engine::new(Arc::new(open_history(cli.history_db.as_ref())?));
            let owner = (!include_app).then_some(Owner::Cli);
            crate::stop::resume(&engine, resume(&engine, config, owner, json)).await
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

/// Starts a backup in `engine` and waits for it to end; `cancel` (when given) cancels it,
/// even before it has started.
async fn backup(
    engine: &Engine,
    config: ServiceConfig,
    args: &BackupArgs,
    id: Uuid,
    cancel: Option<Arc<Notify>>,
) -> Result<Saved> {
    let destination = Destination::from_out(&args.out)?;
    let choice = args.callback.clone().listening_on(args.listen)?;
    let transport = transport(&choice, &config).await?;
    let options = DownloadOptions {
        max_bytes: args.max_bytes,
        ..DownloadOptions::default()
    };
    let request = BackupRequest {
        id,
        profile: args.profile.clone(),
        owner: Owner::Cli,
        destination,
        callback_timeout: Duration::from_secs(args.timeout),
    };
    let stages = Mutex::new(StageDisplay::new(request.callback_timeout));
    let events: EventSink = Arc::new(move |event| stages.lock().unwrap().show(event));
    let handle = engine.start(Launch {
        work: Work::New(request),
        connection: Arc::new(ServiceConnection::open(config, options)?),
        transport,
        events,
        cancel,
    });
    handle.finished().await
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
    engine: &Engine,
    config: ServiceConfig,
    owner: Option<Owner>,
    json: bool,
) -> Result<()> {
    let connection = Arc::new(ServiceConnection::open(
        config.clone(),
        DownloadOptions::default(),
    )?);
    let scope = ResumeScope {
        base_url: config.base_url.to_string(),
        owner,
        relay_secret: std::env::var("KLUIS_RELAY_SECRET").ok().map(Secret::new),
    };
    let connect = |_profile: String| {
        let connection = connection.clone();
        async move { Ok(connection) }
    };
    let quiet: EventSink = Arc::new(|_| {});
    let resumed = engine.resume(scope, connect, |_| quiet.clone()).await?;
    let mut first_error = None;
    for (id, error) in resumed.ended.into_iter().chain(resumed.not_started) {
        report_failure(id, &error, json);
        first_error.get_or_insert(error);
    }
    if resumed.running_elsewhere > 0 {
        eprintln!(
            "kluis: {} backup(s) are still running in another Kluis process; left to it.",
            resumed.running_elsewhere
        );
    }
    if resumed.other_owner > 0 {
        eprintln!(
            "kluis: {} backup(s) were started by the Kluis app; it finishes them at its next start (or use --include-app).",
            resumed.other_owner
        );
    }
    if resumed.other_service > 0 {
        eprintln!(
            "kluis: {} backup(s) belong to another service; resume them with its settings.",
            resumed.other_service
        );
    }
    if resumed.started.is_empty() {
        if first_error.is_none() {
            eprintln!("kluis: no backup to resume.");
        }
        return first_error.map_or(Ok(()), Err);
    }
    let mut running = FuturesUnordered::new();
    for job in resumed.started {
        eprintln!(
            "kluis: resuming backup {} (started {}, {}).",
            job.id,
            kluis_core::history::format_utc(job.started_at_ms),
            job.stage
        );
        let id = job.id;
        running.push(async move { (id, job.handle.finished().await) });
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
    let demo = Demo::start(size_mib * 1024 * 1024, false).await?;
    eprintln!(
        "Demo: a simulated service runs at {} (no real data).",
        demo.base_url()
    );
    std::fs::create_dir_all(out).map_err(|e| Error::io(format!("create {}", out.display()), e))?;
    let config = demo.config(&DEMO_ACCOUNTS[0])?;
    let engine = Engine::new(Arc::new(open_history(history_db)?));
    let session = Session::new(ServiceClient::new(config.clone())?);
    let environment = session.environment().await?;
    eprintln!(
        "Signed in; environment: {}",
        serde_json::to_string(&environment).unwrap_or_default()
    );
    let args = BackupArgs {
        out: out.to_path_buf(),
        callback: CallbackChoice::Loopback,
        listen: None,
        timeout: 60,
        json: false,
        max_bytes: None,
        profile: "demo".into(),
    };
    let id = Uuid::new_v4();
    let saved = backup(&engine, config, &args, id, None).await?;
    eprintln!("Saved {} bytes, SHA-256 {}:", saved.bytes, saved.sha256);
    report(id, &saved, false);
    Ok(())
}

/// The transport of `--callback` (its relay secret from `KLUIS_RELAY_SECRET`).
async fn transport(
    choice: &CallbackChoice,
    config: &ServiceConfig,
) -> Result<Arc<dyn CallbackTransport>> {
    if *choice == CallbackChoice::WebhookSite {
        eprintln!(
            "kluis: note: with --callback webhook-site the service's callback id passes through webhook.site, a third party. \
             It never sees your token or credentials; use a relay to keep even the id in house."
        );
    }
    let needs = TransportNeeds {
        relay_secret: Some(Secret::new(
            std::env::var("KLUIS_RELAY_SECRET").unwrap_or_default(),
        )),
        webhook_site: None,
    };
    choice.build(config, needs).await
}

/// `kluis callback-test`: one test call through the transport, timed.
async fn callback_test(
    choice: &CallbackChoice,
    listen: Option<std::net::SocketAddr>,
    config: ServiceConfig,
) -> Result<()> {
    let choice = choice.clone().listening_on(listen)?;
    let transport = transport(&choice, &config).await?;
    let took = test_transport(&*transport, &config).await?;
    println!(
        "The test call came back through the {} transport in {} ms.",
        transport.name(),
        took.as_millis()
    );
    Ok(())
}
