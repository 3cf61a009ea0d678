//! The subcommands: each a thin host over kluis-core's [`Engine`] — it starts, watches and
//! reports jobs; the engine runs them.

use std::path::Path;
use std::sync::Arc;

use futures_util::stream::{FuturesUnordered, StreamExt};
use kluis_core::encryption::EncryptionSetting;
use kluis_core::engine::{
    test_transport, CallbackChoice, EventSink, ResumeScope, ServiceConnection,
};
use kluis_core::{
    DownloadOptions, Engine, Error, KlantKey, Owner, Result, Secret, ServiceClient, ServiceConfig,
    Session,
};
use kluis_demo::{Demo, DEMO_ACCOUNTS};
use uuid::Uuid;

use crate::args::{BackupArgs, BatchOptions, Cli, Command};
use crate::backup::{backup, backup_command, report, report_failure, run_due, transport};
use crate::display;
use crate::from_args::{open_history, open_profiles};

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
        Command::Office(ref command) => crate::office::run(&cli, command).await,
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
    // The demo's own history (as the app's demo keeps one: `demo` beside Kluis's data), unless
    // one is named: a demo backup is not one of the office's.
    let history_db = match history_db {
        Some(path) => path.clone(),
        None => {
            kluis_profiles::KluisPaths::platform()
                .map_err(kluis_profiles::ProfileError::into_core)?
                .demo()
                .history_db
        }
    };
    let engine = Engine::new(Arc::new(open_history(Some(&history_db))?));
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
