//! One klant's unattended backup — the app's plans and Backup all, and `kluis backup
//! --profile`, `--all` and `run-due` — written once. The steps:
//!
//! 1. [`KlantTurn::take`]: the klant's turn ([`crate::turn`]), and under it the plan looked at
//!    again when only a due plan should run: another process that has just backed the klant
//!    up leaves it not due, so a plan never runs twice. In an office, [`KlantTurn::take_in`]
//!    then asks the office hub ([`crate::office`]): another PC may have it.
//! 2. [`start`]: the host's connection and callback transport for the klant (its secrets are
//!    read now: when they cannot be, the klant fails, recorded in the history so that its
//!    standing says why), its destination, and the job in kluis-core's engine, tried again
//!    after passing failures as its [`Retry`] says.
//! 3. [`finish`]: once saved, under the turn still, the copies off this computer the klant's
//!    backups lack (kluis-copies: each copy target, newest backup first), then the klant's
//!    retention rule ([`copies`]); then, with the turn given back (reading every backup again can take long, and must not hold up the
//!    klant's next backup), its monthly verification when it asks for one and one is due
//!    ([`after_save`], which a save through the app's dialog goes through too).
//!
//! [`back_up`] is 2 and 3 for a host that waits (the CLI); the app starts the job and finishes
//! it on a task of its own, so that the window hears of it at once.
//! 4. [`ping_monitor`]: the klant's outside monitor told how it ended (the host chooses
//!    whether to wait for it).
//!
//! What differs between the hosts is passed in as an [`UnattendedHost`]: how to reach the
//! klant's service, where its file goes, and how each step is told — the CLI on stderr, the app
//! in its log. Where the job's events go, its id, its cancel signal and its retries are the
//! host's too ([`Job`]).

use std::sync::Arc;
use std::time::Duration;

use kluis_copies::CopyTarget;
use kluis_core::claims::Claim;
use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::download::DownloadTurns;
use kluis_core::encryption::DecryptKey;
use kluis_core::engine::{EventSink, JobHandle, Launch, Retry, ServiceConnection, Work};
use kluis_core::retention::{prune_in_background, Mode, Pruned, Retention};
use kluis_core::verify::Verified;
use kluis_core::{
    BackupRequest, CallbackTransport, Destination, Engine, Error, History, KlantKey, Owner, Result,
    Saved,
};
use uuid::Uuid;

use crate::office::{Office, OfficeEnd, OfficeTurn, Skipped};
use crate::{plan_due, take_turn, Monitor, Profile, Ran};

mod copies;

pub use copies::{
    copy_missing, copy_pending, prune_targets, targets_by_klant, write_catalogs, CatalogsAfter,
    PendingCopies, EVERY_COPY_TARGET,
};

/// What a host supplies for its klanten's unattended backups.
#[async_trait::async_trait]
pub trait UnattendedHost: Send + Sync {
    /// `profile`'s service connection (with its secrets) and the callback transport its job
    /// uses.
    async fn connect(
        &self,
        profile: &Profile,
    ) -> Result<(Arc<ServiceConnection>, Arc<dyn CallbackTransport>)>;
    /// Where `profile`'s backup goes when the job does not say (its folder under the host's
    /// save folder, named by klant and date).
    fn destination(&self, profile: &Profile) -> Result<Destination>;
    /// The program that runs the job (journalled: it finishes the job after a restart).
    fn owner(&self) -> Owner;
    /// The name of the callback transport the host uses, for a job that could not start.
    fn callback_name(&self) -> &'static str;
    /// Longest wait for the service's callback.
    fn callback_timeout(&self) -> Duration;
    /// A CA the klant's monitor is trusted by besides the system's (`--ca-cert`).
    fn monitor_ca_pem(&self) -> Option<String>;
    /// Where the office keeps a second copy of each backup (the settings' copy targets).
    async fn copy_targets(&self) -> Vec<CopyTarget>;
    /// The budget uploads draw on (the download limit's rate, a budget of its own), if any.
    fn pace(&self) -> Option<Arc<Bandwidth>>;
    /// Tells what a step after the save did, or could not do; the backup stands either way.
    fn tell(&self, profile: &Profile, step: AfterSave);
    /// What opens `profile`'s passphrase-encrypted backups for their monthly restore test
    /// (its passphrase, from where the host keeps it); none when they are not encrypted with a
    /// passphrase.
    async fn opener(&self, profile: &Profile) -> Result<Option<DecryptKey>>;
    /// What writes the recovery catalogs after the copies (see [`crate::catalogs`]); none
    /// until the office's recovery kit is made.
    async fn catalogs(&self) -> Option<CatalogsAfter>;
}

/// What a step after a save did, for the host to tell its way.
#[derive(Debug)]
pub enum AfterSave {
    /// The retention rule was applied: what it removed and left.
    Pruned { rule: Retention, pruned: Pruned },
    /// The retention rule could not be applied.
    PruneFailed(Error),
    /// The monthly verification read the klant's backups again, and its copies off this
    /// computer back from their targets.
    Verified {
        verified: Vec<Verified>,
        copies: Vec<kluis_copies::CopyChecked>,
    },
    /// The monthly verification could not run.
    VerifyFailed(Error),
    /// A backup was copied to a copy target (`location` there).
    Copied { target: String, location: String },
    /// A backup could not be copied to a copy target: it is tried again after the klant's
    /// next backup, or by `kluis copy --pending`.
    CopyFailed { target: String, error: Error },
    /// A copy target's own rule was applied to the klant's copies on it.
    TargetPruned {
        target: String,
        rule: Retention,
        pruned: Pruned,
    },
    /// A copy target's own rule could not be applied.
    TargetPruneFailed { target: String, error: Error },
    /// The monthly restore test of the klant's newest backup, or of its copy on a copy
    /// target, ran (passed or failed, as recorded in the history).
    RestoreTested(crate::restore_round::RoundTest),
    /// The monthly restore test could not run.
    RestoreTestFailed(Error),
    /// A copy target's recovery catalog was written (`number`; none: nothing had changed),
    /// with `records` new records beside its copies.
    CatalogWritten {
        target: String,
        number: Option<u64>,
        records: usize,
        /// Another kit the target names (see `catalogs::CatalogWritten`).
        other_kit: Option<String>,
    },
    /// A copy target's recovery catalog could not be written: tried again after the next
    /// run of copies; the copies stand.
    CatalogFailed { target: String, error: Error },
}

/// A klant's turn, taken: while it is held, no other Kluis backs the klant up or prunes its
/// backups — nor, in an office, another PC ([`crate::office`]).
pub struct KlantTurn {
    /// Held for its drop: the OS releases the lock however the process ends.
    _claim: Claim,
    /// What to tell the office hub when the backup ends (none: this PC is in no office).
    office: Option<OfficeEnd>,
}

/// What taking a klant's turn came to.
pub enum Turn {
    Taken(KlantTurn),
    /// Another Kluis process (or task) is backing the klant up now.
    Busy,
    /// Only a due plan was to run, and under the turn it is no longer due.
    NotDue,
    /// Only a due plan was to run, and another PC of the office has backed the klant up in
    /// this slot, or is backing it up now.
    Skipped(Skipped),
}

impl KlantTurn {
    /// Takes `profile`'s turn and, with `only_due`, looks at its plan again under it.
    pub fn take(history: &History, profile: &Profile, only_due: bool) -> Result<Turn> {
        let Some(claim) = take_turn(history, &profile.key())? else {
            return Ok(Turn::Busy);
        };
        if only_due && !plan_due(profile, history, &jiff::Zoned::now()).is_now() {
            return Ok(Turn::NotDue);
        }
        Ok(Turn::Taken(KlantTurn {
            _claim: claim,
            office: None,
        }))
    }

    /// [`KlantTurn::take`], then, when this PC is in `office`, the office's say: with
    /// `only_due` (a plan) the klant's office-wide turn, which may leave it to another PC;
    /// otherwise (started by hand) it runs, and the hub is told once it is saved.
    pub async fn take_in(
        history: &History,
        profile: &Profile,
        only_due: bool,
        office: Option<&Office>,
    ) -> Result<Turn> {
        let mut turn = match Self::take(history, profile, only_due)? {
            Turn::Taken(turn) => turn,
            other => return Ok(other),
        };
        if let Some(office) = office {
            match office
                .ask(history, profile, only_due, &jiff::Zoned::now())
                .await?
            {
                OfficeTurn::Go(end) => turn.office = Some(end),
                OfficeTurn::Skip(skipped) => return Ok(Turn::Skipped(skipped)),
            }
        }
        Ok(Turn::Taken(turn))
    }

    /// Tells the office hub, if this PC is in an office, whether the klant was `backed_up`
    /// (what it was told of recorded in `history`).
    pub async fn end_in_office(&mut self, backed_up: bool, history: &History) {
        if let Some(end) = self.office.take() {
            end.end(backed_up, history).await;
        }
    }
}

/// The host's part of one job: its id (chosen by the host, so it can cancel or show it while
/// it runs), where its events go, its cancel signal, its retries, and where its file goes when
/// not to the host's default.
pub struct Job {
    pub id: Uuid,
    pub events: EventSink,
    pub cancel: Option<Arc<tokio::sync::Notify>>,
    pub retry: Retry,
    pub destination: Option<Destination>,
    /// The batch's download turns (none: downloads as soon as it can; see
    /// `kluis_core::download::turns`).
    pub download_turns: Option<DownloadTurns>,
}

/// How a klant's backup ended: the last try's id in the history (a retried job's earlier
/// tries each failed for a passing reason), and the outcome.
pub struct Ended {
    pub last_try: Uuid,
    pub outcome: Result<Saved>,
}

/// Steps 2 and 3 of the module: `profile`'s backup as `job`, under `turn` (given back before
/// the monthly verification). [`start`] and [`finish`] in one, for a host that waits for it.
pub async fn back_up(
    engine: &Engine,
    host: &dyn UnattendedHost,
    profile: &Profile,
    turn: KlantTurn,
    job: Job,
) -> Ended {
    let id = job.id;
    match start(engine, host, profile, job).await {
        Ok(handle) => {
            let tell = |profile: &Profile, step| host.tell(profile, step);
            let after = AfterSaveOf {
                history: engine.history().clone(),
                targets: host.copy_targets().await,
                pace: host.pace(),
                opener: host.opener(profile).await,
                catalogs: host.catalogs().await,
            };
            finish(after, profile, turn, handle, &tell).await
        }
        Err(e) => {
            let mut turn = turn;
            turn.end_in_office(false, engine.history()).await;
            Ended {
                last_try: id,
                outcome: Err(e),
            }
        }
    }
}

/// Step 2: the host's connection, transport and destination for `profile`, and `job` started
/// in the engine. When it cannot start, that is recorded in the history as the job failed.
pub async fn start(
    engine: &Engine,
    host: &dyn UnattendedHost,
    profile: &Profile,
    job: Job,
) -> Result<JobHandle> {
    // The secrets first: a klant that cannot sign in (a locked keyring) leaves no folder.
    let prepared = async {
        let (connection, transport) = host.connect(profile).await?;
        let destination = match job.destination {
            Some(destination) => destination,
            None => host.destination(profile)?,
        };
        Ok::<_, Error>((connection, transport, destination))
    };
    let (connection, transport, destination) = match prepared.await {
        Ok(prepared) => prepared,
        Err(e) => {
            record_unstarted(engine.history(), profile, job.id, host.callback_name(), &e);
            return Err(e);
        }
    };
    let request = BackupRequest {
        id: job.id,
        profile: profile.key(),
        owner: host.owner(),
        destination,
        callback_timeout: host.callback_timeout(),
    };
    Ok(engine.start(Launch {
        work: Work::New(request),
        connection,
        transport,
        events: job.events,
        cancel: job.cancel,
        retry: job.retry,
        download_turns: job.download_turns,
    }))
}

/// Step 3: waits for `handle`'s job to end (after its tries), then [`after_save`].
pub async fn finish(
    after: AfterSaveOf,
    profile: &Profile,
    turn: KlantTurn,
    handle: JobHandle,
    tell: &(dyn Fn(&Profile, AfterSave) + Send + Sync),
) -> Ended {
    let mut turn = turn;
    let (last_try, outcome) = handle.finished_try().await;
    // The backup is what the office's other PCs wait on; its copies are this PC's own.
    turn.end_in_office(outcome.is_ok(), &after.history).await;
    if outcome.is_ok() {
        after_save(after, profile, turn, tell).await;
    }
    Ended { last_try, outcome }
}

/// What the steps after a save read: the history, and the copy targets the office set.
pub struct AfterSaveOf {
    pub history: Arc<History>,
    pub targets: Vec<CopyTarget>,
    /// The bandwidth budget the copies' uploads draw on.
    pub pace: Option<Arc<Bandwidth>>,
    /// What opens the klant's passphrase-encrypted backups for their restore test (see
    /// [`UnattendedHost::opener`]), or why it could not be had.
    pub opener: Result<Option<DecryptKey>>,
    /// What writes the recovery catalogs (none: no kit made).
    pub catalogs: Option<CatalogsAfter>,
}

/// What follows `profile`'s saved backup, whoever saved it (a plan, `kluis backup`, the app's
/// save dialog): under `turn`, the copies its backups lack, the targets' rules, then the
/// klant's retention rule; then, with the turn given back, its monthly verification and
/// restore test when it asks for them and they are due; last the recovery catalogs (when the
/// host writes them per backup). Each step is told through `tell`.
pub async fn after_save(
    after: AfterSaveOf,
    profile: &Profile,
    turn: KlantTurn,
    tell: &(dyn Fn(&Profile, AfterSave) + Send + Sync),
) {
    let AfterSaveOf {
        history,
        targets,
        pace,
        opener,
        catalogs,
    } = after;
    let targets = profile.copy_targets(&targets);
    // Before the rule: a copy is made while the newest backups are all still here.
    for step in copy_missing(history.clone(), &profile.key(), targets.clone(), pace).await {
        tell(profile, step);
    }
    for step in prune_targets(history.clone(), &profile.key(), &targets).await {
        tell(profile, step);
    }
    if let Some(step) = apply_rule(history.clone(), &profile.key(), profile.retention.clone()).await
    {
        tell(profile, step);
    }
    drop(turn); // the klant's next backup may start
    if profile.verify_monthly {
        if let Some(step) = verify_monthly(history.clone(), profile.key(), targets.clone()).await {
            tell(profile, step);
        }
    }
    if profile.restore_test_monthly {
        let tested = restore_test_monthly(history.clone(), profile.key(), targets.clone(), opener);
        for step in tested.await {
            tell(profile, step);
        }
    }
    // Last: the catalogs then name this run's copies, removals, renewed locks and restore test.
    if let Some(catalogs) = catalogs {
        for step in write_catalogs(history, targets, catalogs).await {
            tell(profile, step);
        }
    }
}

/// The klant's newest backup restore-tested when a month has passed since it last was one
/// (see `kluis_core::History::restore_test_due`) — the saved file and its copies on `targets`
/// (see [`crate::restore_round`]) — each test recorded in the history; an encrypted one
/// opened with `opener`, the klant's passphrase. A backup encrypted to a recipient is left for
/// `kluis restore-test --identity` (only its holder has the identity): the klant's standing
/// says its test is overdue until then.
async fn restore_test_monthly(
    history: Arc<History>,
    key: KlantKey,
    targets: Vec<CopyTarget>,
    opener: Result<Option<DecryptKey>>,
) -> Vec<AfterSave> {
    let tested = tokio::task::spawn_blocking(move || {
        if !history.restore_test_due(&key, kluis_core::clock::now_ms())? {
            return Ok(Vec::new());
        }
        let Some(newest) = history.kept(Some(&key))?.pop() else {
            return Ok(Vec::new());
        };
        let opener = match &newest.encrypted {
            None => None,
            Some(_) => match opener? {
                Some(opener) => Some(opener),
                None => return Ok(Vec::new()),
            },
        };
        crate::restore_round::restore_test_round(&history, &newest, &targets, opener.as_ref())
    })
    .await
    .unwrap_or_else(|e| {
        Err(Error::Io(format!(
            "The monthly restore test stopped ({e})."
        )))
    });
    match tested {
        Ok(tests) => tests.into_iter().map(AfterSave::RestoreTested).collect(),
        Err(e) => vec![AfterSave::RestoreTestFailed(e)],
    }
}

/// Klant `key`'s retention `rule`, if it has one that removes anything, applied (its caller
/// holds the klant's turn): what it did, for the host to tell.
pub async fn apply_rule(
    history: Arc<History>,
    key: &KlantKey,
    rule: Option<Retention>,
) -> Option<AfterSave> {
    let rule = rule.filter(|r| !r.keeps_everything())?;
    let pruned = prune_in_background(history, key.clone(), rule.clone(), Mode::Delete).await;
    Some(match pruned {
        Ok(pruned) => AfterSave::Pruned { rule, pruned },
        Err(e) => AfterSave::PruneFailed(e),
    })
}

/// The klant's backups read again when a month has passed since they last were.
async fn verify_monthly(
    history: Arc<History>,
    key: KlantKey,
    targets: Vec<CopyTarget>,
) -> Option<AfterSave> {
    let verified = tokio::task::spawn_blocking(move || {
        let now = kluis_core::clock::now_ms();
        let Some(verified) = kluis_core::verify::verify_if_month_passed(&history, &key, now)?
        else {
            return Ok(None);
        };
        // The copies are read back in full once a month, with the backups here.
        let copies = kluis_copies::check_copies(&history, &targets, Some(&key), true)?;
        Ok(Some((verified, copies)))
    })
    .await
    .unwrap_or_else(|e| {
        Err(Error::Io(format!(
            "The monthly verification stopped ({e})."
        )))
    });
    match verified {
        Ok(Some((verified, copies))) => Some(AfterSave::Verified { verified, copies }),
        Ok(None) => None,
        Err(e) => Some(AfterSave::VerifyFailed(e)),
    }
}

/// Step 4: `profile`'s monitor, if it has one, told how its backup ended (a cancelled or
/// interrupted one is not told: it did not fail). The ping owns what it needs, so a host may
/// wait for it or leave it to a task of its own; one that fails is returned for the host to
/// say, and changes nothing else.
pub fn ping_monitor(
    profile: &Profile,
    fallback_ca_pem: Option<&str>,
    outcome: std::result::Result<&Saved, &Error>,
) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
    let ping = Monitor::of(profile, fallback_ca_pem).zip(Ran::of(outcome));
    async move {
        match ping {
            Some((monitor, ran)) => monitor.ping(&ran).await,
            None => Ok(()),
        }
    }
}

/// Records job `id` of `profile` as failed before it asked the service anything, so the
/// klant's standing says why it has no backup.
fn record_unstarted(history: &History, profile: &Profile, id: Uuid, callback: &str, error: &Error) {
    let recorded = history
        .start(id, &profile.key(), callback)
        .and_then(|()| history.failed(id, kluis_core::stage::Stage::Requested, error));
    if let Err(e) = recorded {
        tracing::warn!(code = e.code().as_str(), "a failure could not be recorded");
    }
}
