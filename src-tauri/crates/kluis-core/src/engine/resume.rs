//! [`Engine::resume`]: the one resume loop of every front end (`kluis resume`, the app at
//! start). It sweeps the history's unfinished jobs of one service — ending those that can
//! never finish, leaving those of another program, service or running process — and starts
//! the rest, each on the transport its journal names.

use std::future::Future;
use std::sync::Arc;

use uuid::Uuid;

use super::{Engine, EventSink, JobHandle, Launch, Retry, ServiceConnection, Transports, Work};
use crate::callback::Reattacher;
use crate::download::Destination;
use crate::encryption::EncryptionSetting;
use crate::error::{Error, Result};
use crate::journal::Owner;
use crate::klant_key::KlantKey;
use crate::secret::Secret;
use crate::stage::Stage;

/// Which unfinished jobs to take, and what resuming them needs.
pub struct ResumeScope {
    /// The service the jobs were started against.
    pub base_url: String,
    /// Only this program's jobs (`None`: every owner's).
    pub owner: Option<Owner>,
    /// The relay's secret, for jobs waiting at a relay.
    pub relay_secret: Option<Secret>,
}

/// A job [`Engine::resume`] started.
pub struct ResumedJob {
    pub id: Uuid,
    pub profile: KlantKey,
    /// The stage it had reached.
    pub stage: Stage,
    pub started_at_ms: i64,
    /// Where it saves (from its journal).
    pub destination: Destination,
    pub handle: JobHandle,
}

/// What [`Engine::resume`] did with each unfinished job.
#[derive(Default)]
pub struct Resumed {
    /// Started; each ends through its handle.
    pub started: Vec<ResumedJob>,
    /// Ended now as failed (`not_resumable`), with the reason.
    pub ended: Vec<(Uuid, Error)>,
    /// Could not be started now (no connection for its profile, its transport failed); kept
    /// for a later resume.
    pub not_started: Vec<(Uuid, Error)>,
    pub running_elsewhere: usize,
    pub other_owner: usize,
    pub other_service: usize,
}

impl Engine {
    /// Resumes the unfinished jobs in `scope`. `connect` gives the connection of a job's
    /// profile, encrypting as the job's journal says it began (a job begun encrypted is refused
    /// by a connection that does not encrypt); `events` the sink of a job's events.
    pub async fn resume<C, F>(
        &self,
        scope: ResumeScope,
        mut connect: C,
        events: impl Fn(Uuid) -> EventSink,
    ) -> Result<Resumed>
    where
        C: FnMut(KlantKey, Option<EncryptionSetting>) -> F,
        F: Future<Output = Result<Arc<ServiceConnection>>>,
    {
        let sweep = self.history().sweep(&scope.base_url, scope.owner)?;
        let mut resumed = Resumed {
            ended: sweep.ended,
            running_elsewhere: sweep.running_elsewhere,
            other_owner: sweep.other_owner,
            other_service: sweep.other_service,
            ..Resumed::default()
        };
        for job in sweep.resumable {
            let id = job.id();
            let Some((reattach, destination)) = job
                .journal
                .as_ref()
                .and_then(|j| Some((j.reattach.clone()?, j.destination.clone())))
            else {
                continue; // the sweep only keeps jobs with one
            };
            let profile = job.entry.profile.clone();
            let encryption = job.journal.as_ref().and_then(|j| j.encryption.clone());
            let connection = match connect(profile.clone(), encryption).await {
                Ok(connection) => connection,
                Err(error) => {
                    resumed.not_started.push((id, error));
                    continue;
                }
            };
            let reattacher =
                Reattacher::new(connection.config().clone(), scope.relay_secret.clone());
            let key = Transports::reattach_key(&reattach, profile.as_str());
            let build = async { reattacher.build(&reattach).await };
            let transport = match self.transports().get_or_build(&key, false, build).await {
                Ok(transport) => transport,
                Err(error) => {
                    resumed.not_started.push((id, error));
                    continue;
                }
            };
            let (stage, started_at_ms) = (job.stage(), job.entry.started_at_ms);
            let handle = self.start(Launch {
                work: Work::Resume(Box::new(job)),
                connection,
                transport,
                events: events(id),
                cancel: None,
                retry: Retry::NONE,
                download_turns: None,
            });
            resumed.started.push(ResumedJob {
                id,
                profile,
                stage,
                started_at_ms,
                destination,
                handle,
            });
        }
        Ok(resumed)
    }
}
