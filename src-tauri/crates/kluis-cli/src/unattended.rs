//! Backups of saved profiles: `kluis backup --profile NAME`, `kluis backup --all` and
//! `kluis run-due` (from a timer). Each klant's file goes to its own folder under the save
//! folder the app uses (or `--out`), named `<klant> <YYYY-MM-DD HHmm>` and the download's
//! extension.
//!
//! A batch downloads a few klanten at once (`--concurrency`, default 2) while up to two more
//! sign in and ask for their backup or finish their file, so the line does not wait for the
//! service between two klanten (`kluis_core::download::turns`); one that fails stops none
//! of the others; a failure with a passing cause (the service, the network, the file host:
//! [`kluis_core::Code::is_transient`]) is tried again after a growing pause (`--retries`,
//! `--retry-delay`) before the klant counts as failed. Every klant is backed up under its turn
//! (`kluis_profiles::take_turn`): one the app or another run is backing up now is skipped, and
//! `run-due` looks at the plan again under the turn, so a plan never runs twice.
//! A batch's failures are told in one summary through kluis-profiles' `Outbox`, as the app's
//! are: a desktop notification when Settings → *Notifications* is on, an e-mail when e-mail is
//! set to each failure.
//! Ctrl-C cancels every running backup (exit 130); SIGTERM stops them, keeping those that can
//! be resumed for `kluis resume` (exit 75).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use kluis_core::download::{BatchLimits, DownloadTurns};
use kluis_core::encryption::DecryptKey;
use kluis_core::engine::{CallbackChoice, EventSink, ServiceConnection, TransportNeeds};
use kluis_core::{
    Destination, DownloadOptions, Engine, Error, History, JobEvent, Owner, Result, Saved,
};
use kluis_profiles::unattended::{self, AfterSave, Ended, Job};
use kluis_profiles::{KlantTurn, Profile, SecretKind, SecretStore, Turn, UnattendedHost};
use kluis_reporting::{Alert, DesktopNotifier, Failed, Notifier, OfficeMail, Outbox};
use uuid::Uuid;

use crate::args::BatchOptions;
use crate::outcomes::{report_failed, report_saved, report_skipped};
use crate::secrets::{secret, secret_store};

/// What every klant's backup in one run shares.
pub struct Unattended {
    pub engine: Engine,
    secrets: Arc<dyn SecretStore>,
    choice: CallbackChoice,
    /// `--out`: the folder the klanten's folders go in this run, whatever else is set.
    out: Option<PathBuf>,
    /// The office's save folder (the app's Settings), for klanten without a folder of their own.
    root: Option<PathBuf>,
    callback_timeout: Duration,
    /// `--ca-cert` / `KLUIS_CA_CERT`, for profiles without a CA of their own.
    fallback_ca_pem: Option<String>,
    /// `--max-bytes`.
    pub max_bytes: Option<u64>,
    /// The speed limit every download of this run shares (`--limit-rate`, or the app's); set
    /// with [`Unattended::set_bandwidth`].
    bandwidth: Option<Arc<kluis_core::download::bandwidth::Bandwidth>>,
    /// The same limit for the copies' uploads, a budget of its own (the other direction).
    upload_pace: Option<Arc<kluis_core::download::bandwidth::Bandwidth>>,
    /// No backup is asked for while its disk has less free than this.
    pub min_free_bytes: u64,
    running: Mutex<HashSet<Uuid>>,
    /// Set by Ctrl-C: nothing more starts or is tried again.
    stopping: AtomicBool,
    /// Where the batch's failures are told, in one summary: the desktop, e-mail, or nowhere,
    /// as the settings say.
    outbox: Outbox,
    /// The window's language, the batch's alerts told in it.
    language: kluis_profiles::Language,
    /// Settings → how unattended backups' files are named.
    file_names: kluis_profiles::FileNameTemplate,
    /// Where each backup's second copy goes (the settings' copy targets).
    /// Where copies go, each target with its secret ([`crate::copies::with_secrets`]).
    pub copy_targets: Vec<kluis_copies::CopyTarget>,
    /// Copies the batch could not make and restore tests that failed, told with its failures.
    failed_after_save: Mutex<Vec<Failed>>,
    /// What writes the recovery catalogs after the copies (none: no kit made).
    pub catalogs: Option<kluis_profiles::unattended::CatalogsAfter>,
    /// In a batch the catalogs are written once, after its last klant (see [`Unattended::run`]).
    batching: AtomicBool,
    /// The office this PC joined (`kluis office join`): a plan's backup asks the office hub
    /// for the klant's turn first, and every backup saved is told to it.
    pub office: Option<kluis_profiles::Office>,
}

/// How one klant's backup ended.
pub enum Outcome {
    Saved(Uuid, Saved),
    Failed(Error),
    /// Another Kluis process is backing this klant up now.
    Busy,
    /// `run-due`: the plan was no longer due once the klant's turn was had.
    NotDue,
    /// `run-due`: another PC of the office backed the klant up in this slot, or is now.
    Skipped(kluis_profiles::Skipped),
}

impl Unattended {
    /// The limit every download of this run shares (none: no limit), and for the copies'
    /// uploads a budget of the same limit of their own (the line's other direction).
    pub fn set_bandwidth(
        &mut self,
        downloads: Option<Arc<kluis_core::download::bandwidth::Bandwidth>>,
    ) {
        self.upload_pace = upload_budget(&downloads);
        self.bandwidth = downloads;
    }

    /// `fallback_ca_pem`: `--ca-cert` / `KLUIS_CA_CERT`, trusted for profiles without a CA
    /// of their own.
    pub fn new(
        history: Arc<History>,
        settings: &kluis_profiles::Settings,
        out: Option<&Path>,
        callback: Option<CallbackChoice>,
        callback_timeout: Duration,
        fallback_ca_pem: Option<String>,
    ) -> Self {
        let root = settings.save_folder.as_ref().map(PathBuf::from);
        let out = out.map(Path::to_path_buf);
        let secrets = secret_store();
        let snapshot = settings.clone();
        let outbox = Outbox::new(
            Arc::new(DesktopNotifier),
            OfficeMail::new(secrets.clone()),
            Arc::new(move || snapshot.clone()),
        );
        Self {
            engine: Engine::new(history),
            secrets,
            choice: callback.unwrap_or_else(|| settings.callback.clone()),
            out,
            root,
            callback_timeout,
            fallback_ca_pem,
            max_bytes: None,
            bandwidth: None,
            upload_pace: None,
            min_free_bytes: settings.min_free_bytes(),
            running: Mutex::default(),
            stopping: AtomicBool::new(false),
            outbox,
            language: settings.language(),
            file_names: settings.file_names(),
            copy_targets: settings.copy_targets.clone(),
            failed_after_save: Mutex::default(),
            catalogs: None,
            batching: AtomicBool::new(false),
            office: None,
        }
    }

    /// The folder the klanten's folders go in, or what to do to have one.
    /// Refuses `profiles` when one of them has no folder to go to: no `--out`, no folder of
    /// its own, no save folder in the settings.
    fn check_folders(&self, profiles: &[Profile]) -> Result<()> {
        match (profiles.iter()).all(|p| p.backup_folder(self.out.as_deref(), self.root.as_deref()).is_some()) {
            true => Ok(()),
            false => Err(Error::Config(
                "Say where the klanten's backups go: --out FOLDER, or choose a save folder in the app (Settings → Where backups are saved).".into(),
            )),
        }
    }

    /// `profile`'s backup as `job`, under `turn`, by the one path the app takes too
    /// (`kluis_profiles::unattended`), while this run's Ctrl-C can still cancel it.
    pub async fn back_up(&self, profile: &Profile, turn: KlantTurn, job: Job) -> Ended {
        if self.stopping.load(Ordering::SeqCst) {
            return Ended {
                last_try: job.id,
                outcome: Err(Error::Cancelled),
            };
        }
        let id = job.id;
        self.running.lock().unwrap().insert(id);
        let ended = unattended::back_up(&self.engine, self, profile, turn, job).await;
        self.running.lock().unwrap().remove(&id);
        ended
    }

    /// One klant of a batch, under its turn: tried again after passing failures.
    async fn back_up_klant(
        &self,
        profile: &Profile,
        options: &BatchOptions,
        only_due: bool,
        download_turns: &DownloadTurns,
    ) -> Outcome {
        let history = self.engine.history();
        let turn = match KlantTurn::take_in(history, profile, only_due, self.office.as_ref()).await
        {
            Ok(Turn::Taken(turn)) => turn,
            Ok(Turn::Busy) => return Outcome::Busy,
            Ok(Turn::NotDue) => return Outcome::NotDue,
            Ok(Turn::Skipped(skipped)) => return Outcome::Skipped(skipped),
            Err(e) => return Outcome::Failed(e),
        };
        // Tried again by the engine after passing failures, as one job (so Ctrl-C and
        // SIGTERM reach it while it waits); each try is said as it fails.
        let name = profile.name.clone();
        let said: EventSink = Arc::new(move |event| {
            if let JobEvent::Retrying {
                message, in_secs, ..
            } = event
            {
                eprintln!("kluis: {name}: {message} — trying again in {in_secs} s.");
            }
        });
        let job = Job {
            id: Uuid::new_v4(),
            events: said,
            cancel: None,
            retry: options.retry(),
            destination: None,
            download_turns: Some(download_turns.clone()),
        };
        let ended = self.back_up(profile, turn, job).await;
        // The klant's outcome after its tries, not each try: a monitor that flips to "down"
        // for a failure that the next try mends would cry wolf.
        self.tell_monitor(profile, ended.outcome.as_ref()).await;
        match ended.outcome {
            Ok(saved) => Outcome::Saved(ended.last_try, saved),
            Err(e) => Outcome::Failed(e),
        }
    }

    /// Pings `profile`'s monitor (if it has one) for `outcome`; a ping that fails is said,
    /// and changes nothing else.
    pub async fn tell_monitor(
        &self,
        profile: &Profile,
        outcome: std::result::Result<&Saved, &Error>,
    ) {
        let fallback = self.fallback_ca_pem.as_deref();
        if let Err(e) = unattended::ping_monitor(profile, fallback, outcome).await {
            eprintln!("kluis: {}: {e}", profile.name);
        }
    }

    /// `backup --all` and `run-due`: backs up `profiles` (with `only_due`, those whose plan is
    /// still due under their turn) into their folders under the root, until they end or a
    /// signal comes (see [`until_signal`]).
    pub async fn run(
        &self,
        profiles: Vec<Profile>,
        options: &BatchOptions,
        only_due: bool,
        json: bool,
    ) -> Result<()> {
        self.check_folders(&profiles)?;
        // One catalog per target for the whole batch, not one per klant: each is a new object
        // (a new version on a bucket that keeps them all, for its default retention) naming
        // every klant — 200 klanten a night would leave 200.
        self.batching.store(true, Ordering::SeqCst);
        let outcome = until_signal(self, self.batch(profiles, options, only_due, json)).await;
        self.batching.store(false, Ordering::SeqCst);
        // (After Ctrl-C too, for the copies made before it; not when told to stop at once.)
        if !matches!(outcome, Err(Error::Interrupted)) {
            self.write_catalogs().await;
        }
        outcome
    }

    /// The recovery catalogs of every copy target written, each step said (none: no kit).
    async fn write_catalogs(&self) {
        let Some(catalogs) = self.catalogs.clone() else {
            return;
        };
        if self.copy_targets.is_empty() {
            return;
        }
        let history = self.engine.history().clone();
        let targets = self.copy_targets.clone();
        for step in unattended::write_catalogs(history, targets, catalogs).await {
            crate::prune::tell(&kluis_core::KlantKey::profile(""), "", step);
        }
    }

    /// Backs up `profiles`, `options.concurrency` downloading at a time and two klanten more
    /// under way — asking for their backup, or ending (see `kluis_core::download::turns`) —,
    /// reporting each as it ends. Fails with the first failure's error (the exit code tells a
    /// scheduler).
    async fn batch(
        &self,
        profiles: Vec<Profile>,
        options: &BatchOptions,
        only_due: bool,
        json: bool,
    ) -> Result<()> {
        let limits = BatchLimits::new(options.concurrency as usize);
        let mut running: FuturesUnordered<_> = profiles
            .into_iter()
            .map(|profile| {
                let limits = &limits;
                async move {
                    let _place = limits.klant_place().await;
                    let turns = limits.downloads();
                    let outcome = self.back_up_klant(&profile, options, only_due, turns).await;
                    (profile, outcome)
                }
            })
            .collect();
        let mut first_error = None;
        let mut failures = Vec::new();
        while let Some((profile, outcome)) = running.next().await {
            match outcome {
                Outcome::Saved(id, saved) => report_saved(&profile, id, &saved, json),
                Outcome::Failed(error) => {
                    report_failed(&profile, &error, json);
                    failures.extend(Failed::of(&profile.name, &error));
                    first_error.get_or_insert(error);
                }
                Outcome::Busy => eprintln!(
                    "kluis: {}: a backup of this klant is running in another Kluis process; left to it.",
                    profile.name
                ),
                Outcome::NotDue => {}
                Outcome::Skipped(skipped) => report_skipped(&profile, &skipped, json),
            }
        }
        failures.append(&mut self.failed_after_save.lock().unwrap());
        self.notify(&failures).await;
        first_error.map_or(Ok(()), Err)
    }

    /// The batch's failures, in one summary where the settings say. Where it cannot be told
    /// (no desktop session on a server, a mail server that refuses), that is said in a line.
    async fn notify(&self, failures: &[Failed]) {
        let Some(alert) = Alert::failed(failures, self.language) else {
            return;
        };
        if let Err(e) = self.outbox.notify(&alert).await {
            eprintln!("kluis: {e}");
        }
    }

    /// Ctrl-C: nothing more starts, and every running backup ends as cancelled.
    pub fn cancel_all(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        for id in self.running.lock().unwrap().iter() {
            self.engine.cancel(*id);
        }
    }
}

/// The CLI's part of a klant's unattended backup: its secrets from the keyring (or
/// `KLUIS_SECRETS_DIR`), the callback chosen by flags or the app's settings, the klant's folder
/// under `--out` or the app's save folder, and what follows a save said on stderr.
#[async_trait::async_trait]
impl UnattendedHost for Unattended {
    async fn connect(
        &self,
        profile: &Profile,
    ) -> Result<(
        Arc<ServiceConnection>,
        Arc<dyn kluis_core::CallbackTransport>,
    )> {
        let missing = || {
            Error::Config(format!(
                "The profile \"{}\" has no saved api key or password here. Give them with `kluis profiles import FILE` (a row with its name, username and password; the api key in a column or KLUIS_API_KEY), or set KLUIS_SECRETS_DIR to where they are kept.",
                profile.name
            ))
        };
        let api_key = secret(&self.secrets, &profile.id, SecretKind::ApiKey)
            .await?
            .ok_or_else(missing)?;
        let password = secret(&self.secrets, &profile.id, SecretKind::Password)
            .await?
            .ok_or_else(missing)?;
        let config = profile.service_config(api_key, password, self.fallback_ca_pem.as_deref())?;
        let relay_secret = match self.choice {
            CallbackChoice::Relay { .. } => match std::env::var("KLUIS_RELAY_SECRET") {
                Ok(value) => Some(kluis_core::Secret::new(value)),
                Err(_) => {
                    secret(&self.secrets, kluis_profiles::APP, SecretKind::RelaySecret).await?
                }
            },
            _ => None,
        };
        let needs = TransportNeeds {
            relay_secret,
            webhook_site: None,
        };
        // One transport per key for the whole batch, as the app keeps them
        // (`CallbackChoice::cache_key`): a direct listener's address can be bound once, a
        // tunnel is one program to start, and a loopback receiver one certificate to make —
        // built per klant, the second klant under way could not listen on the address.
        let (key, keep) = (
            self.choice.cache_key(&profile.id),
            self.choice.keeps_failures(),
        );
        let build = self.choice.build(&config, needs);
        let transport = (self.engine.transports().get_or_build(&key, keep, build)).await?;
        let encryption = crate::encryption::of_profile(&self.secrets, profile).await?;
        let connection = ServiceConnection::open(
            config,
            DownloadOptions {
                max_bytes: self.max_bytes,
                bandwidth: self.bandwidth.clone(),
                min_free_bytes: self.min_free_bytes,
                encryption,
                ..DownloadOptions::default()
            },
        )?;
        Ok((Arc::new(connection), transport))
    }

    fn destination(&self, profile: &Profile) -> Result<Destination> {
        let now = jiff::Zoned::now();
        profile.unattended_destination(
            self.out.as_deref(),
            self.root.as_deref(),
            &self.file_names,
            &now,
        )
    }

    fn owner(&self) -> Owner {
        Owner::Cli
    }

    fn callback_name(&self) -> &'static str {
        self.choice.name()
    }

    fn callback_timeout(&self) -> Duration {
        self.callback_timeout
    }

    fn monitor_ca_pem(&self) -> Option<String> {
        self.fallback_ca_pem.clone()
    }

    fn pace(&self) -> Option<Arc<kluis_core::download::bandwidth::Bandwidth>> {
        self.upload_pace.clone()
    }

    async fn copy_targets(&self) -> Vec<kluis_copies::CopyTarget> {
        self.copy_targets.clone()
    }

    async fn opener(&self, profile: &Profile) -> Result<Option<DecryptKey>> {
        match &profile.encryption {
            Some(setting) if setting.needs_passphrase() => {
                let kind = SecretKind::EncryptionPassphrase;
                let passphrase = secret(&self.secrets, &profile.id, kind).await?;
                Ok(passphrase.map(DecryptKey::Passphrase))
            }
            _ => Ok(None),
        }
    }

    async fn catalogs(&self) -> Option<kluis_profiles::unattended::CatalogsAfter> {
        match self.batching.load(Ordering::SeqCst) {
            true => None, // written once, after the batch
            false => self.catalogs.clone(),
        }
    }

    fn tell(&self, profile: &Profile, step: AfterSave) {
        if let Some(failed) = Failed::after_save(&profile.name, &step) {
            self.failed_after_save.lock().unwrap().push(failed);
        }
        crate::prune::tell(&profile.key(), &profile.name, step);
    }
}

/// Runs `batch` until it ends or a signal comes: Ctrl-C cancels every backup (and waits for
/// them to end so), SIGTERM stops them (resumable ones stay for `kluis resume`).
async fn until_signal(
    unattended: &Unattended,
    batch: impl std::future::Future<Output = Result<()>>,
) -> Result<()> {
    let mut batch = Box::pin(batch);
    let signal = tokio::select! {
        biased;
        outcome = &mut batch => return outcome,
        signal = crate::stop::requested() => signal,
    };
    match signal {
        crate::stop::Signal::Interrupt => {
            unattended.cancel_all();
            let _ = batch.await;
            Err(Error::Cancelled)
        }
        crate::stop::Signal::Terminate => {
            drop(batch);
            unattended.engine.shutdown().await;
            Err(Error::Interrupted)
        }
    }
}

/// The copies' own budget of the downloads' limit (the line's other direction).
pub fn upload_budget(
    downloads: &Option<Arc<kluis_core::download::bandwidth::Bandwidth>>,
) -> Option<Arc<kluis_core::download::bandwidth::Bandwidth>> {
    downloads.as_ref().map(|d| Arc::new(d.other_direction()))
}
