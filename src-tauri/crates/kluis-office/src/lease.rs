//! [`Lease`]: a klant's office-wide turn this PC holds while it backs the klant up. The hub
//! gives it for [`HOLD`]; a task renews it every third of that, so a backup of hours keeps it
//! while a PC that crashed or lost its network gives it back within [`HOLD`]. Ending it says
//! whether the klant was backed up. A lease dropped without being ended (a task cancelled) is
//! ended as not backed up, in the background, when a runtime is there to do it; otherwise the
//! hub lets it run out.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::OfficeResult;
use crate::hub::{Hub, TurnAnswer};
use crate::key::KlantId;

/// How long a turn is asked for, and renewed for each time.
pub const HOLD: Duration = Duration::from_secs(10 * 60);

/// A klant's turn, held (see the module).
pub struct Lease {
    hub: Hub,
    klant: KlantId,
    renewing: tokio::task::JoinHandle<()>,
    /// Another PC has the turn now (this one's ran out while the hub could not be reached):
    /// its name.
    taken_over: Arc<Mutex<Option<String>>>,
    ended: bool,
}

impl Lease {
    /// The turn the hub just gave this PC for `klant` (a [`TurnAnswer::Yours`]), held from now
    /// on: renewed every third of [`HOLD`] until ended.
    pub fn hold(hub: Hub, klant: KlantId) -> Self {
        Self::renewed_every(hub, klant, HOLD, HOLD / 3)
    }

    /// [`Lease::hold`] with its renewal asked for `hold` at a time, every `every` (a test's
    /// quicker rhythm).
    pub fn renewed_every(hub: Hub, klant: KlantId, hold: Duration, every: Duration) -> Self {
        let taken_over = Arc::new(Mutex::new(None));
        let renewal = renew(hub.clone(), klant.clone(), hold, every, taken_over.clone());
        let renewing = tokio::spawn(renewal);
        Lease {
            hub,
            klant,
            renewing,
            taken_over,
            ended: false,
        }
    }

    /// The PC that took the turn over while this one could not renew it, if one did.
    pub fn taken_over_by(&self) -> Option<String> {
        self.taken_over.lock().unwrap().clone()
    }

    /// Ends the turn: with `backed_up`, the hub records this PC's backup of the klant now (the
    /// office's other PCs skip it within their slot). Whether this PC still had the turn.
    pub async fn end(mut self, backed_up: bool) -> OfficeResult<bool> {
        self.renewing.abort();
        self.ended = true;
        self.hub.end(&self.klant, backed_up).await
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewing.abort();
        if self.ended {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (hub, klant) = (self.hub.clone(), self.klant.clone());
            runtime.spawn(async move {
                if let Err(e) = hub.end(&klant, false).await {
                    tracing::debug!(code = e.code(), "a turn left behind runs out at the hub");
                }
            });
        }
    }
}

/// Renews `klant`'s turn for `hold` each `every`; a renewal the hub does not answer is tried
/// at the next (at the usual rhythm, two more before the turn runs out).
async fn renew(
    hub: Hub,
    klant: KlantId,
    hold: Duration,
    every: Duration,
    taken_over: Arc<Mutex<Option<String>>>,
) {
    let mut every = tokio::time::interval(every);
    every.tick().await; // the first tick is now: the turn was just given
    loop {
        every.tick().await;
        match hub.take(&klant, hold, Duration::ZERO).await {
            Ok(TurnAnswer::Yours { .. }) => {}
            Ok(TurnAnswer::Held { by, .. } | TurnAnswer::Done { by, .. }) => {
                tracing::warn!(by = %by, "this PC's office turn ran out and another PC took it over");
                *taken_over.lock().unwrap() = Some(by);
            }
            Err(e) => tracing::warn!(code = e.code(), "the office turn could not be renewed: {e}"),
        }
    }
}
