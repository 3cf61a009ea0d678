//! [`OfficeHub`]: Settings → *Office* and the dashboard's *Office* — this PC in an office of
//! several PCs around the office hub (kluis-profiles' `office`; the settings file and keyring
//! the CLI shares, so `kluis office join` and the app see one membership): join, leave, the
//! office view, and this PC's report to the office, hourly and after each unattended backup.
//!
//! For the app's plans, [`Shared::office`] reads the office's keys once and again only when
//! the membership changes; the plans then ask the hub for each klant's turn. What the hub could
//! not do goes to the app's log, its absence once until it is back.

use std::sync::Arc;

use std::time::Duration;

use kluis_core::{Error, Secret};
use kluis_office::{Membership, OfficeError, OfficeView};
use kluis_profiles::office::JoinRequest;
use kluis_profiles::secrets::off_thread;
use kluis_profiles::Office;
use serde::{Deserialize, Serialize};

use super::shared::Shared;
use crate::error::AppResult;

/// How often this PC tells the office its klanten while the app runs (and after each
/// unattended backup): the office view flags a PC silent for a day.
pub const REPORT_EVERY: Duration = Duration::from_secs(60 * 60);
/// How long after a change the office hears of it (see [`OfficeHub::keep_telling_every`]).
pub const TELL_AFTER_CHANGE: Duration = Duration::from_secs(2);
/// The shortest time between two reports sent because something changed.
pub const TELL_AT_MOST_EVERY: Duration = Duration::from_secs(2 * 60);

/// The office this PC joined, as Settings → *Office* shows it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct OfficeMembership {
    pub hub: String,
    pub pc: String,
    #[ts(type = "number")]
    pub joined_ms: i64,
}

/// Joining, as typed in Settings → *Office*: the hub's address, this PC's name and key there
/// (from the hub's operator), and the office key (empty for the office's first PC, which makes
/// it). The hub's certificate is trusted by the system's CAs and `KLUIS_CA_CERT`, or, with
/// `own_ca`, by the office's own CA, whose certificate is picked in the native dialog.
/// With `code` (a join code another PC of the office made), the rest is not read.
#[derive(Deserialize, ts_rs::TS)]
pub struct OfficeJoinInput {
    pub code: Option<String>,
    pub hub: String,
    pub pc: String,
    pub pc_key: String,
    pub office_key: Option<String>,
    pub own_ca: bool,
}

// (No derived Debug: the keys are in it.)
impl std::fmt::Debug for OfficeJoinInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OfficeJoinInput({}, {}, …)", self.hub, self.pc)
    }
}

/// A join done: the membership, the office's PCs, and the office key when this PC made it —
/// shown once, for the office's next PCs (it is kept nowhere the window can read again).
#[derive(Serialize, ts_rs::TS)]
pub struct OfficeJoined {
    pub membership: OfficeMembership,
    pub pcs: Vec<String>,
    pub made_key: Option<String>,
}

// (No derived Debug: the office key may be in it.)
impl std::fmt::Debug for OfficeJoined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OfficeJoined({:?}, {:?}, …)", self.membership, self.pcs)
    }
}

/// *Add a PC*: the join code for the office's next PC, shown once (see kluis-office's
/// `JoinCode`).
#[derive(Serialize, ts_rs::TS)]
pub struct OfficeInvite {
    pub pc: String,
    pub code: String,
}

/// See the module.
#[derive(Clone)]
pub struct OfficeHub {
    shared: Arc<Shared>,
}

impl OfficeHub {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// The office this PC joined, if any.
    pub fn membership(&self) -> Option<OfficeMembership> {
        self.shared
            .profiles
            .settings()
            .office
            .map(|m| OfficeMembership {
                hub: m.hub,
                pc: m.pc,
                joined_ms: m.joined_ms,
            })
    }

    /// Joins the office `input` names (see kluis-profiles' `office::join`), then tells it this
    /// PC's klanten at once. None when the CA's dialog was cancelled (nothing joined).
    pub async fn join(&self, input: OfficeJoinInput) -> AppResult<Option<OfficeJoined>> {
        let (profiles, keyring) = (&self.shared.profiles, self.shared.keyring.clone());
        if let Some(code) = input.code.filter(|c| !c.trim().is_empty()) {
            let code = Secret::new(code);
            let joined = kluis_profiles::office::join_with_code(profiles, keyring, &code).await?;
            return Ok(Some(self.joined(joined).await));
        }
        let hub_ca_pem = match input.own_ca {
            true => {
                let Some(path) = self.shared.dialogs().pick_certificate().await else {
                    return Ok(None);
                };
                let pem = super::accounts::read_certificate_file(&path)?;
                kluis_core::trust::describe(&pem)?;
                Some(pem)
            }
            false => self.shared.env_ca_pem.clone(),
        };
        let office_key = input.office_key.filter(|k| !k.trim().is_empty());
        let request = JoinRequest {
            hub: input.hub,
            pc: input.pc.trim().to_string(),
            pc_key: Secret::new(input.pc_key.trim()),
            office_key: office_key.map(|k| Secret::new(k.trim())),
            hub_ca_pem,
        };
        let joined = kluis_profiles::office::join(profiles, keyring, request).await?;
        Ok(Some(self.joined(joined).await))
    }

    /// A join done: the office hears this PC's klanten at once.
    async fn joined(&self, joined: kluis_profiles::office::Joined) -> OfficeJoined {
        self.shared.tell_office().await;
        let m = joined.membership;
        OfficeJoined {
            membership: OfficeMembership {
                hub: m.hub,
                pc: m.pc,
                joined_ms: m.joined_ms,
            },
            pcs: joined.pcs,
            made_key: joined.made_key.map(|k| k.text().expose().to_string()),
        }
    }

    /// *Add a PC*: a join code for a new PC named `pc` (it works once, for a day).
    pub async fn invite(&self, pc: &str) -> AppResult<OfficeInvite> {
        let (profiles, keyring) = (&self.shared.profiles, self.shared.keyring.clone());
        let code = kluis_profiles::office::invite(profiles, keyring, pc.trim()).await?;
        Ok(OfficeInvite {
            pc: pc.trim().to_string(),
            code: code.text().expose().to_string(),
        })
    }

    /// Leaves the office: this PC's key revoked at the hub, its keys removed, its plans alone
    /// again. Why its key could not be revoked at the hub, if it could not (a PC of the office
    /// revokes it then).
    pub async fn leave(&self) -> AppResult<Option<String>> {
        let (profiles, keyring) = (&self.shared.profiles, self.shared.keyring.clone());
        let (revoked, _) = kluis_profiles::office::leave(profiles, keyring).await?;
        Ok(revoked.err())
    }

    /// The office view: every klant of every PC, what needs attention flagged.
    pub async fn view(&self) -> AppResult<OfficeView> {
        let office = self.shared.office().await.ok_or_else(|| {
            Error::Config("This PC is in no office (or its office keys cannot be read): join one in Settings → Office.".into())
        })?;
        let view = office
            .view()
            .await
            .map_err(|e| Error::Network(e.to_string()))?;
        Ok(view)
    }

    /// Tells the office this PC's klanten now, then [`Self::keep_telling_every`]
    /// [`REPORT_EVERY`]. Runs until the app ends.
    pub async fn keep_telling(&self) {
        self.shared.tell_office().await;
        self.keep_telling_every(REPORT_EVERY).await
    }

    /// Tells the office this PC's klanten `every` so long, and soon after something the report
    /// says changed (a backup ended, a plan set, a restore tested): [`TELL_AFTER_CHANGE`]
    /// after it, and never sooner than [`TELL_AT_MOST_EVERY`] after the last — a burst of
    /// changes (ten klanten planned at once, a night's round of 200 backups) is a report a
    /// couple of minutes, not one per change: 10,000 PCs' nights stay a load the hub carries.
    pub async fn keep_telling_every(&self, every: Duration) {
        let mut hourly = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let mut last: Option<tokio::time::Instant> = None;
        // A change from before (a klant added while the app started) is in the report that
        // came before this; not one more at once. (A timeout of zero still polls once: it
        // takes a stored wake-up and waits for none.)
        let changed = self.shared.office_changed.notified();
        let _ = tokio::time::timeout(Duration::ZERO, changed).await;
        loop {
            tokio::select! {
                _ = hourly.tick() => {}
                _ = self.shared.office_changed.notified() => {
                    let soonest = last.map(|t| t + TELL_AT_MOST_EVERY);
                    let after_change = tokio::time::Instant::now() + TELL_AFTER_CHANGE;
                    tokio::time::sleep_until(soonest.map_or(after_change, |s| s.max(after_change)))
                        .await;
                }
            }
            self.shared.tell_office().await;
            last = Some(tokio::time::Instant::now());
            hourly.reset();
        }
    }
}

/// The office as last read: the membership it was read for, and the office (none: its keys
/// could not be read — said once in the log).
pub(crate) type OfficeRead = Option<(Membership, Option<Arc<Office>>)>;

impl Shared {
    /// The office this PC joined, if any and its keys can be read.
    pub async fn office(&self) -> Option<Arc<Office>> {
        let membership = self.profiles.settings().office?;
        let mut read = self.office.lock().await;
        if let Some((seen, office)) = read.as_ref() {
            if *seen == membership {
                return office.clone();
            }
        }
        let settings = self.profiles.settings();
        let tell: kluis_profiles::office::TellHub = Arc::new(|e: &OfficeError| {
            tracing::warn!(code = e.code(), "office hub: {e}");
        });
        let office = off_thread(self.keyring.clone(), move |store| {
            Office::of(&settings, store, tell)
        })
        .await;
        let office = match office {
            Ok(office) => office.map(Arc::new),
            Err(e) => {
                tracing::warn!(
                    code = e.code(),
                    "the office's keys could not be read; plans run alone: {e}"
                );
                None
            }
        };
        *read = Some((membership, office.clone()));
        office
    }

    /// This PC's report of its klanten sent to the office it joined (nothing when none): what
    /// cannot be sent goes to the log, once until the hub answers again.
    pub async fn tell_office(&self) {
        let Some(office) = self.office().await else {
            return;
        };
        if let Err(e) = office.send_report(&self.profiles, &self.history).await {
            tracing::warn!(
                code = e.code().as_str(),
                "the office report could not be made"
            );
        }
    }
}
