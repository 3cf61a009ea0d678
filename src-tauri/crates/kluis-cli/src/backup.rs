//! `kluis backup` (one klant, `--profile`, or `--all`) and `run-due`: each backup started in
//! kluis-core's engine, watched on the terminal, and said (`--json` for scripts).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kluis_core::ad_hoc::AdHocKlant;
use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::engine::{
    CallbackChoice, EventSink, Launch, Retry, ServiceConnection, TransportNeeds, Work,
};
use kluis_core::{
    BackupRequest, CallbackTransport, Destination, DownloadOptions, Engine, Error, History,
    KlantKey, Owner, Result, Saved, Secret, ServiceConfig,
};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::args::{BackupArgs, BatchArgs, BatchOptions, Cli};
use crate::display::StageDisplay;
use crate::from_args::{open_history, open_profiles};
use crate::unattended::Unattended;
use kluis_profiles::unattended::Job;
use kluis_profiles::{KlantTurn, ProfileStore, Turn};

/// `kluis backup`: every saved profile (`--all`), one saved profile (`--profile`), or the
/// service given by flags and `KLUIS_*`.
pub(crate) async fn backup_command(cli: &Cli, args: &BackupArgs) -> Result<()> {
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
pub(crate) fn label(args: &BackupArgs) -> &str {
    args.profile.as_deref().unwrap_or("default")
}

/// The saved profile `backup --profile NAME` names, with the store it came from. Without one
/// of that name, the service's settings from flags or `KLUIS_*` are used and NAME only labels
/// the history (as before profiles were saved); with neither, the missing profile is the error.
pub(crate) fn saved_profile(
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

/// The unattended runner for `profiles`' klanten as the office's settings say — its save
/// folder, speed limit, free-space floor, copy targets (their secrets read) and recovery
/// catalogs, the settings read once — with this run's own `--out`, callback and timeout
/// (`run`) and `batch` limits over them: `backup --all`, `backup --profile` and `run-due`.
async fn unattended_for(
    cli: &Cli,
    profiles: &ProfileStore,
    history: Arc<History>,
    (out, callback, timeout): (Option<&Path>, Option<CallbackChoice>, u64),
    batch: &BatchOptions,
) -> Result<Unattended> {
    let settings = profiles.settings();
    let timeout = Duration::from_secs(timeout);
    let ca_pem = cli.connection.ca_pem()?;
    let mut unattended = Unattended::new(history, &settings, out, callback, timeout, ca_pem);
    unattended.set_bandwidth(batch.bandwidth(Some(&settings))?);
    unattended.min_free_bytes = batch.min_free_bytes(Some(&settings));
    unattended.office = crate::office::joined(&settings).await;
    unattended.copy_targets = crate::targets::with_secrets(settings.copy_targets).await?;
    unattended.catalogs = crate::recovery::catalogs_after(cli, profiles)?;
    Ok(unattended)
}

/// The callback given on the command line, with `--listen` for `direct=…`; `None`: the app's.
fn chosen_callback(args: &BackupArgs) -> Result<Option<CallbackChoice>> {
    (args.callback.clone())
        .map(|choice| choice.listening_on(args.listen))
        .transpose()
}

/// `kluis backup --all`: every saved profile, a few at a time.
pub(crate) async fn backup_all(cli: &Cli, args: &BackupArgs) -> Result<()> {
    let callback = chosen_callback(args)?;
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let all = crate::profiles::tagged(profiles.list(), args.tag.as_deref())?;
    if all.is_empty() {
        return Err(Error::Config(
            "There are no profiles to back up: add one with `kluis profiles add`.".into(),
        ));
    }
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let run = (args.out.as_deref(), callback, args.timeout);
    let mut unattended = unattended_for(cli, &profiles, history.clone(), run, &args.batch).await?;
    let outcome = unattended.run(all, &args.batch, false, args.json).await;
    crate::mail::daily_report(cli, &profiles, &history).await;
    crate::office::send_report(unattended.office.take().as_ref(), &profiles, &history).await;
    outcome
}

/// `kluis backup --profile NAME`: a saved profile's backup, watched with the progress bar,
/// under the klant's turn.
pub(crate) async fn backup_profile(
    cli: &Cli,
    args: &BackupArgs,
    profile: kluis_profiles::Profile,
    profiles: &kluis_profiles::ProfileStore,
) -> Result<()> {
    let callback = chosen_callback(args)?;
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let run = (None, callback, args.timeout);
    let mut unattended = unattended_for(cli, profiles, history, run, &args.batch).await?;
    unattended.max_bytes = args.max_bytes;
    let history = unattended.engine.history();
    let turn = KlantTurn::take_in(history, &profile, false, unattended.office.as_ref());
    let turn = match turn.await? {
        Turn::Taken(turn) => turn,
        // (By hand, neither a plan nor the office stands in the way: busy is all it can be.)
        Turn::Busy | Turn::NotDue | Turn::Skipped(_) => {
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
        download_turns: None,
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
pub(crate) async fn run_due(cli: &Cli, args: &BatchArgs) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let history = Arc::new(open_history(cli.history_db.as_ref())?);
    let now = jiff::Zoned::now();
    let due: Vec<_> = profiles
        .list()
        .into_iter()
        .filter(|p| kluis_profiles::plan_due(p, &history, &now).is_now())
        .collect();
    let (outcome, office) = match due.is_empty() {
        true => {
            eprintln!("kluis: no plan is due.");
            (Ok(()), crate::office::joined(&profiles.settings()).await)
        }
        false => {
            let run = (args.out.as_deref(), None, args.timeout);
            let mut unattended =
                unattended_for(cli, &profiles, history.clone(), run, &args.batch).await?;
            let outcome = unattended.run(due, &args.batch, true, args.json).await;
            (outcome, unattended.office.take())
        }
    };
    // The timer runs this every 15 minutes: the daily report's heartbeat where no app runs,
    // and this PC's report to the office (at least hourly, as the office view expects).
    crate::mail::daily_report(cli, &profiles, &history).await;
    crate::office::send_report(office.as_ref(), &profiles, &history).await;
    outcome
}

/// Starts a backup in `engine` and waits for it to end; `cancel` (when given) cancels it,
/// even before it has started.
pub(crate) async fn backup(
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
        download_turns: None,
    });
    Ok((key, handle.finished().await?))
}

pub(crate) fn report(id: Uuid, saved: &Saved, json: bool) {
    if json {
        let line = serde_json::json!({
            "job": id, "path": saved.path, "bytes": saved.bytes, "sha256": saved.sha256,
        });
        println!("{line}");
    } else {
        println!("{}", saved.path.display());
    }
}

pub(crate) fn report_failure(id: Uuid, error: &Error, json: bool) {
    if json {
        println!("{}", serde_json::json!({ "job": id, "error": error }));
    } else {
        eprintln!("kluis: backup {id}: {error}");
    }
}

/// The transport of `--callback` (its relay secret from `KLUIS_RELAY_SECRET`).
pub(crate) async fn transport(
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
