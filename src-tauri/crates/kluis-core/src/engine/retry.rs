//! Trying a new backup again after a failure with a passing cause (the service, the network,
//! the file host: [`Code::is_transient`]) — for backups nobody watches (plans, Backup all,
//! `kluis backup --all`), so that a klant is marked failed only when the fault lasts. A wrong
//! password, a refused key, a full disk or a callback that never came fail the same way
//! again and end the job at once.
//!
//! Each try is a job of its own in the history (its own id, its failure recorded), run to
//! the same destination; the engine's handle, its cancel and its event stream stay the
//! same across tries, so a front end follows one job and Cancel reaches it while it waits.

use std::time::Duration;

use tokio::sync::Notify;

use crate::error::{Error, Result};
use crate::job::{BackupJob, BackupRequest, JobEvent};
use crate::Saved;

/// How often, and after how long, a failed try is made again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Tries after the first.
    pub tries: u32,
    /// The wait before the first of them; each next wait is twice as long.
    pub first_delay: Duration,
}

impl Retry {
    /// Tried once (a backup someone watches: they see the failure and choose).
    pub const NONE: Retry = Retry {
        tries: 0,
        first_delay: Duration::ZERO,
    };

    /// Unattended backups, the app's and the CLI's alike: twice more, after 1 and 2 minutes
    /// — long enough for a restarted service or a dropped connection to come back, short
    /// enough that a batch of klanten still ends in the night it started.
    pub const UNATTENDED: Retry = Retry {
        tries: 2,
        first_delay: Duration::from_secs(60),
    };

    /// [`Retry::UNATTENDED`], unless `KLUIS_RETRIES` (tries after the first) or
    /// `KLUIS_RETRY_DELAY` (seconds before the first of them) say otherwise — the same
    /// variables as the CLI's `--retries` and `--retry-delay`. A value that is not a whole
    /// number is said in the log and the default kept.
    pub fn from_env() -> Retry {
        Retry::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Retry {
        let number = |name: &str, default: u64| match var(name) {
            None => default,
            Some(text) => text.trim().parse().unwrap_or_else(|_| {
                tracing::warn!(variable = name, "not a whole number; using {default}");
                default
            }),
        };
        let default = Retry::UNATTENDED;
        Retry {
            tries: number("KLUIS_RETRIES", default.tries.into()).min(u32::MAX.into()) as u32,
            first_delay: Duration::from_secs(number(
                "KLUIS_RETRY_DELAY",
                default.first_delay.as_secs(),
            )),
        }
    }
}

/// Runs `request` with `job`, trying again as `retry` says; `current` is told each try's id
/// before it starts. A cancel during a wait ends it as cancelled (the failed try stays
/// recorded as failed).
pub(super) async fn run(
    job: &BackupJob<'_>,
    request: &BackupRequest,
    retry: Retry,
    cancel: &Notify,
    mut current: impl FnMut(uuid::Uuid),
    events: &mut (dyn FnMut(JobEvent) + Send),
) -> Result<Saved> {
    let mut request = request.clone();
    let mut tries_left = retry.tries;
    let mut delay = retry.first_delay;
    loop {
        match job.run(&request, events).await {
            Err(e) if e.code().is_transient() && tries_left > 0 => {
                events(JobEvent::Retrying {
                    code: e.code(),
                    message: e.to_string(),
                    in_secs: delay.as_secs(),
                });
                tokio::select! {
                    biased;
                    _ = cancel.notified() => return Err(Error::Cancelled),
                    _ = tokio::time::sleep(delay) => {}
                }
                tries_left -= 1;
                delay = delay.saturating_mul(2);
                request.id = uuid::Uuid::new_v4();
                current(request.id);
            }
            ended => return ended,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variables set the tries and the first wait each on its own; a value that is not a
    /// whole number keeps the default.
    #[test]
    fn the_environment_sets_tries_and_delay() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                (pairs.iter())
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Retry::from_vars(vars(&[])), Retry::UNATTENDED);
        let set = Retry::from_vars(vars(&[
            ("KLUIS_RETRIES", "0"),
            ("KLUIS_RETRY_DELAY", " 5 "),
        ]));
        assert_eq!(
            set,
            Retry {
                tries: 0,
                first_delay: Duration::from_secs(5)
            }
        );
        let bad = Retry::from_vars(vars(&[("KLUIS_RETRIES", "many")]));
        assert_eq!(bad, Retry::UNATTENDED);
    }
}
