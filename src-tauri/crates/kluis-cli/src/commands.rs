//! The subcommands: each a thin host over kluis-core's [`Engine`] — it starts, watches and
//! reports jobs; the engine runs them.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use kluis_core::ad_hoc::AdHocKlant;
use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::encryption::EncryptionSetting;
use kluis_core::engine::{
    test_transport, CallbackChoice, EventSink, Launch, ResumeScope, Retry, ServiceConnection,
    TransportNeeds, Work,
};
use kluis_core::{
    BackupRequest, CallbackTransport, Destination, DownloadOptions, Engine, Error, KlantKey, Owner,
    Result, Saved, Secret, ServiceClient, ServiceConfig, Session,
};
use kluis_demo::{Demo, DEMO_ACCOUNTS};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::args::{BackupArgs, BatchArgs, BatchOptions, Cli, Command};
use crate::display::{self, StageDisplay};
use crate::from_args::{open_history, open_profiles};
use crate::unattended::Unattended;
use kluis_profiles::unattended::Job;
use kluis_profiles::{KlantTurn, Turn};

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
        Command::Backup(ref args) => backup_command(&cli, args).await,
        Command::Resume { json, include_app } => {
            let config = cli.connection.service_config()?;
            let engine = Engine::new(Arc::new(open_history(cli.history_db.as_ref())?));
            let owner = (!include_app).then_some(Owner::Cli);
            let profiles = cli.profiles_file.as_ref();
            crate::stop::resume(&engine, resume(&engine, config, profiles, owner, json)).await
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
            let saved = (open_profiles(cli.profiles_file.as_ref()).ok())
                .map(|p| p.list())
                .unwrap_or_default();
            let find = |name: String| kluis_profiles::find_klant(&saved, &history, &name);
            let klant = profile.map(find).transpose()?;
            let entries = history.list(klant.map(|k| k.key()).as_ref(), limit)?;
            let names = kluis_profiles::klant_names(&saved, &history)?;
            display::history(&entries, &names, json);
            Ok(())
        }
        Command::CallbackTest { callback, listen } => {
            callback_test(&callback, listen, cli.connection.service_config()?).await
        }
        Command::Profiles(ref command) => crate::profiles::run(&cli, command).await,
        Command::Plan(ref args) => crate::profiles::plan(&cli, args),
        Command::Status { json, ref tag } => crate::profiles::status(&cli, json, tag.as_deref()),
        Command::Report {
            csv: _,
            html,
            ref from,
            ref to,
            ref profile,
            ref out,
        } => {
            let period = (from.as_deref(), to.as_deref());
            crate::report::run(&cli, period, profile.as_deref(), html, out.as_deref())
        }
        Command::Prune {
            ref profile,
            ref rule,
            dry_run,
            json,
        } => crate::prune::run(&cli, profile.as_deref(), rule, dry_run, json).await,
        Command::Encryption {
            ref profile,
            passphrase,
            stdin,
            ref recipient,
            off,
        } => {
            use crate::encryption::Change;
            let change = match (passphrase, recipient, off) {
                (true, _, _) => Change::Passphrase { stdin },
                (_, Some(recipient), _) => Change::Recipient(recipient.clone()),
                (_, None, true) => Change::Off,
                _ => {
                    return Err(Error::Config(
                        "Say how: --passphrase, --recipient age1… or --off.".into(),
                    ))
                }
            };
            crate::encryption::set(&cli, profile, change).await
        }
        Command::Decrypt {
            ref file,
            ref out,
            ref identity,
        } => crate::encryption::decrypt_file(&cli, file, out, identity.as_deref()).await,
        Command::Verify {
            json,
            ref profile,
            read_back_copies,
        } => crate::verify::run(&cli, profile.as_deref(), read_back_copies, json).await,
        Command::Contents {
            ref file,
            ref profile,
            ref copy,
            ref identity,
            json,
            ..
        } => {
            let which = match (file, profile) {
                (Some(file), _) => crate::restore::Which::File(file),
                (None, Some(profile)) => crate::restore::Which::Newest(profile),
                (None, None) => unreachable!("clap requires one"),
            };
            let what = crate::restore::Listed {
                which,
                copy: copy.as_deref(),
                json,
            };
            crate::restore::contents(&cli, what, identity.as_deref()).await
        }
        Command::Restore {
            ref file,
            ref identity,
            ref to,
            ref only,
            overwrite,
        } => {
            let options = kluis_restore::RestoreOptions {
                only: only.clone(),
                overwrite,
                ..Default::default()
            };
            crate::restore::restore(&cli, file, identity.as_deref(), to, options).await
        }
        Command::RestoreTest {
            ref file,
            ref profile,
            ref identity,
            json,
        } => {
            let which = match (file, profile) {
                (Some(file), _) => crate::restore::Which::File(file),
                (None, Some(profile)) => crate::restore::Which::Newest(profile),
                (None, None) => unreachable!("clap requires one"),
            };
            crate::restore::test(&cli, which, identity.as_deref(), json).await
        }
        Command::RunDue(ref args) => run_due(&cli, args).await,
        #[cfg(windows)]
        Command::Schedule(ref command) => crate::task_scheduler::run(&cli, command),
        #[cfg(not(windows))]
        Command::Schedule(ref command) => crate::schedule::run(command),
        Command::Mail(ref command) => crate::mail::run(&cli, command).await,
        Command::CopyTarget(ref command) => crate::copies::target(&cli, command).await,
        Command::Copy {
            pending: _,
            ref profile,
            json,
        } => crate::copies::pending(&cli, profile.as_deref(), json).await,
        Command::Update(ref command) => crate::update::run(&cli, command).await,
        Command::Recover(ref command) => crate::recover::run(&cli, command).await,
        Command::RecoveryKit {
            join: true,
            ref recovery_key,
            ref pc_name,
            ..
        } => crate::recovery::join(&cli, recovery_key.as_deref(), pc_name.clone()).await,
        Command::RecoveryKit {
            ref key_file,
            ref pc_name,
            with_target_secrets,
            ..
        } => {
            let page = crate::recovery::KitPage {
                key_file: key_file.as_deref(),
                pc_name: pc_name.clone(),
                with_target_secrets,
            };
            crate::recovery::kit(&cli, page).await
        }
        Command::Demo { out, size_mib } => demo(&out, size_mib, cli.history_db.as_ref()).await,
    }
}

/// `kluis backup`: every saved profile (`--all`), one saved profile (`--profile`), or the
/// service given by flags and `KLUIS_*`.
async fn backup_command(cli: &Cli, args: &BackupArgs) -> Result<()> {
    if args.all {
        return backup_all(cli, args).await;
    }
    if let Some((profiles, profile)) = saved_profile(cli, args)? {
        return backup_profile(cli, args, profile, &profiles).await;
    }
    let config = cli.connection.service_config()?;
    let engine = Engine::new(Arc::new(open_history(cli.history_db.as_ref())?));
    let id = Uuid::new_v4();
    let cancel = Arc::new(Notify::new());
    // The app's limit too, when there is a profiles file to read it from: one office line.
    let settings = open_profiles(cli.profiles_file.as_ref())
        .ok()
        .map(|p| p.settings());
    let bandwidth = args.batch.bandwidth(settings.as_ref())?;
    let min_free = args.batch.min_free_bytes(settings.as_ref());
    let job = backup(
        &engine,
        config,
        args,
        id,
        Some(cancel.clone()),
        bandwidth.clone(),
        min_free,
    );
    let (klant, saved) = crate::stop::backup(&engine, id, &cancel, job).await?;
    report(id, &saved, args.json);
    // Only this klant's backups (the same label, service, username and folder), under its
    // turn: never beside another Kluis's pruning of them. Its copies first, as for a saved
    // profile (`kluis_profiles::unattended::after_save`).
    let history = engine.history();
    let targets = settings.map(|s| s.copy_targets).unwrap_or_default();
    let targets = crate::targets::with_secrets(targets).await?;
    let settings_targets = targets.clone();
    match kluis_profiles::take_turn(history, &klant)? {
        Some(_turn) => {
            let copies = kluis_profiles::unattended::copy_missing(
                history.clone(),
                &klant,
                targets,
                crate::unattended::upload_budget(&bandwidth),
            );
            for step in copies.await {
                crate::prune::tell(&klant, label(args), step);
            }
            let all = settings_targets.as_slice();
            for step in kluis_profiles::unattended::prune_targets(history.clone(), &klant, all).await {
                crate::prune::tell(&klant, label(args), step);
            }
            crate::recovery::write_after_copies(cli, history.clone(), settings_targets.clone()).await;
            let rule = args.retention.rule();
            crate::prune::apply_rule(history, &klant, label(args), rule).await;
        }
        None if args.retention.rule().is_some() || !targets.is_empty() => eprintln!(
            "kluis: another Kluis is busy with this klant's backups; its copies and retention rule follow its next backup."
        ),
        None => {}
    }
    Ok(())
}

/// The label of a backup of the service given by flags: `--profile`'s, or "default". The
/// history records it under the ad-hoc klant's key ([`AdHocKlant`]).
fn label(args: &BackupArgs) -> &str {
    args.profile.as_deref().unwrap_or("default")
}

/// The saved profile `backup --profile NAME` names, with the store it came from. Without one
/// of that name, the service's settings from flags or `KLUIS_*` are used and NAME only labels
/// the history (as before profiles were saved); with neither, the missing profile is the error.
fn saved_profile(
    cli: &Cli,
    args: &BackupArgs,
) -> Result<Option<(kluis_profiles::ProfileStore, kluis_profiles::Profile)>> {
    let Some(name) = &args.profile else {
        return Ok(None);
    };
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    match profiles.find(name) {
        Ok(profile) => Ok(Some((profiles, profile))),
        Err(_) if cli.connection.base_url.is_some() => Ok(None),
        Err(e) => Err(e.into_core()),
    }
}

/// `kluis backup --all`: every saved profile, a few at a time.
async fn backup_all(cli: &Cli, args: &BackupArgs) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let all = crate::profiles::tagged(profiles.list(), args.tag.as_deref())?;
    if all.is_empty() {
        return Err(Error::Config(
            "There are no profiles to back up: add one with `kluis profiles add`.".into(),
        ));
    }
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let mut unattended = Unattended::new(
        history.clone(),
        &profiles.settings(),
        args.out.as_deref(),
        args.callback.clone(),
        Duration::from_secs(args.timeout),
        cli.connection.ca_pem()?,
    );
    unattended.set_bandwidth(args.batch.bandwidth(Some(&profiles.settings()))?);
    unattended.min_free_bytes = args.batch.min_free_bytes(Some(&profiles.settings()));
    unattended.copy_targets =
        crate::targets::with_secrets(profiles.settings().copy_targets).await?;
    unattended.catalogs = crate::recovery::catalogs_after(cli, &profiles)?;
    let outcome = unattended.run(all, &args.batch, false, args.json).await;
    crate::mail::daily_report(cli, &profiles, &history).await;
    outcome
}

/// `kluis backup --profile NAME`: a saved profile's backup, watched with the progress bar,
/// under the klant's turn.
async fn backup_profile(
    cli: &Cli,
    args: &BackupArgs,
    profile: kluis_profiles::Profile,
    profiles: &kluis_profiles::ProfileStore,
) -> Result<()> {
    let callback = match &args.callback {
        Some(choice) => Some(choice.clone().listening_on(args.listen)?),
        None => None,
    };
    let mut unattended = Unattended::new(
        Arc::new(open_history(cli.history_db.as_ref())?),
        &profiles.settings(),
        None,
        callback,
        Duration::from_secs(args.timeout),
        cli.connection.ca_pem()?,
    );
    unattended.max_bytes = args.max_bytes;
    unattended.set_bandwidth(args.batch.bandwidth(Some(&profiles.settings()))?);
    unattended.min_free_bytes = args.batch.min_free_bytes(Some(&profiles.settings()));
    unattended.copy_targets =
        crate::targets::with_secrets(profiles.settings().copy_targets).await?;
    unattended.catalogs = crate::recovery::catalogs_after(cli, profiles)?;
    let turn = match KlantTurn::take(unattended.engine.history(), &profile, false)? {
        Turn::Taken(turn) => turn,
        Turn::Busy | Turn::NotDue => {
            return Err(Error::Config(format!(
                "A backup of \"{}\" is running in another Kluis process; wait for it to end.",
                profile.name
            )))
        }
    };
    // A rule given here applies instead of the saved one, for this backup.
    let mut profile = profile;
    if let Some(rule) = args.retention.rule() {
        profile.retention = Some(rule);
    }
    let id = Uuid::new_v4();
    let cancel = Arc::new(Notify::new());
    let stages = Mutex::new(StageDisplay::new(Duration::from_secs(args.timeout)));
    // Someone watches this one: a failure is said at once, for them to choose what next.
    let job = Job {
        id,
        events: Arc::new(move |event| stages.lock().unwrap().show(event)),
        cancel: Some(cancel.clone()),
        retry: Retry::NONE,
        destination: args.out.as_deref().map(Destination::from_out).transpose()?,
    };
    let ended = unattended.back_up(&profile, turn, job);
    let ended =
        crate::stop::backup(&unattended.engine, id, &cancel, async { Ok(ended.await) }).await?;
    unattended
        .tell_monitor(&profile, ended.outcome.as_ref())
        .await;
    report(id, &ended.outcome?, args.json);
    Ok(())
}

/// `kluis run-due`: every profile whose plan is due, once.
async fn run_due(cli: &Cli, args: &BatchArgs) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let now = jiff::Zoned::now();
    let due: Vec<_> = profiles
        .list()
        .into_iter()
        .filter(|p| kluis_profiles::plan_due(p, &history, &now).is_now())
        .collect();
    let outcome = match due.is_empty() {
        true => {
            eprintln!("kluis: no plan is due.");
            Ok(())
        }
        false => {
            let mut unattended = Unattended::new(
                history.clone(),
                &profiles.settings(),
                args.out.as_deref(),
                None,
                Duration::from_secs(args.timeout),
                cli.connection.ca_pem()?,
            );
            unattended.set_bandwidth(args.batch.bandwidth(Some(&profiles.settings()))?);
            unattended.min_free_bytes = args.batch.min_free_bytes(Some(&profiles.settings()));
            unattended.copy_targets =
                crate::targets::with_secrets(profiles.settings().copy_targets).await?;
            unattended.catalogs = crate::recovery::catalogs_after(cli, &profiles)?;
            unattended.run(due, &args.batch, true, args.json).await
        }
    };
    // The timer runs this every 15 minutes: the daily report's heartbeat where no app runs.
    crate::mail::daily_report(cli, &profiles, &history).await;
    outcome
}

/// Starts a backup in `engine` and waits for it to end; `cancel` (when given) cancels it,
/// even before it has started.
async fn backup(
    engine: &Engine,
    config: ServiceConfig,
    args: &BackupArgs,
    id: Uuid,
    cancel: Option<Arc<Notify>>,
    bandwidth: Option<Arc<Bandwidth>>,
    min_free_bytes: u64,
) -> Result<(KlantKey, Saved)> {
    let out = args.out.as_deref().ok_or_else(|| {
        Error::Config("Say where to save the backup: --out FOLDER (or a file path).".into())
    })?;
    let destination = Destination::from_out(out)?;
    let klant = AdHocKlant::new(
        label(args),
        config.base_url.as_str(),
        &config.username,
        destination.folder(),
    );
    let key = engine.history().ad_hoc_klant(&klant)?;
    let choice = args
        .callback
        .clone()
        .unwrap_or_default()
        .listening_on(args.listen)?;
    let transport = transport(&choice, &config).await?;
    let options = DownloadOptions {
        max_bytes: args.max_bytes,
        bandwidth,
        min_free_bytes,
        encryption: crate::encryption::of_flags(
            args.encrypt_to.as_deref(),
            args.encrypt_passphrase,
        )?,
        ..DownloadOptions::default()
    };
    let request = BackupRequest {
        id,
        profile: key.clone(),
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
        retry: Retry::NONE,
    });
    Ok((key, handle.finished().await?))
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
    profiles_file: Option<&std::path::PathBuf>,
    owner: Option<Owner>,
    json: bool,
) -> Result<()> {
    let plain = Arc::new(ServiceConnection::open(
        config.clone(),
        DownloadOptions::default(),
    )?);
    let scope = ResumeScope {
        base_url: config.base_url.to_string(),
        owner,
        relay_secret: std::env::var("KLUIS_RELAY_SECRET").ok().map(Secret::new),
    };
    // A job that began encrypted is finished encrypted the same way (its journal says how),
    // on a connection of its own; the others share one.
    let connect = |profile: KlantKey, encryption: Option<EncryptionSetting>| {
        let (plain, config) = (plain.clone(), config.clone());
        async move {
            let Some(setting) = encryption else {
                return Ok(plain);
            };
            let options = DownloadOptions {
                encryption: Some(
                    crate::encryption::to_resume(&setting, profile.as_str(), profiles_file).await?,
                ),
                ..DownloadOptions::default()
            };
            Ok(Arc::new(ServiceConnection::open(config, options)?))
        }
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
        out: Some(out.to_path_buf()),
        all: false,
        tag: None,
        batch: BatchOptions {
            concurrency: 1,
            retries: 0,
            retry_delay: 0,
            limit_rate: None,
            office_hours: None,
            min_free_mib: None,
        },
        callback: Some(CallbackChoice::Loopback),
        listen: None,
        timeout: 60,
        json: false,
        max_bytes: None,
        profile: Some("demo".into()),
        retention: Default::default(),
        encrypt_to: None,
        encrypt_passphrase: false,
    };
    let id = Uuid::new_v4();
    let min_free = args.batch.min_free_bytes(None);
    let (_, saved) = backup(&engine, config, &args, id, None, None, min_free).await?;
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
