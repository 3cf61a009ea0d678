//! The office hub in a klant's backup (kluis-office): when this PC joined an office, a plan's
//! backup first asks the hub for the klant's office-wide turn ([`Office::ask`]):
//!
//! - the turn is this PC's: it backs the klant up, renewing the turn while it runs, and says
//!   when it ends whether it did ([`OfficeEnd`]);
//! - another PC backed the klant up since this PC's slot began: skipped, and that backup
//!   recorded in this PC's history (its plan counts from it, its standing says it) — its file,
//!   copies and restore tests stay with the PC that made it ([`Skipped::Done`]) — unless this
//!   PC made no backup of it for a week ([`OWN_BACKUP_AT_LEAST_MS`]: a hub or PC that says
//!   "done" without a backup made cannot leave a klant backed up by nobody);
//! - another PC is backing it up now: skipped, said ([`Skipped::Held`]); the next run asks
//!   again — with the same safety net;
//! - the hub cannot be reached, is slow or refuses, or answers outside its API's bounds (a
//!   backup "done" before this PC's slot began, a turn held longer than any is): said once
//!   (until it answers again) and the PC goes on alone — not asking a hub that did not answer
//!   in time again for [`AWAY_FOR`]. The hub is never a reason to miss a backup: a klant may
//!   then be backed up twice, never zero times.
//!
//! A backup someone starts by hand always runs; it only tells the hub once it is saved, so the
//! office's other PCs skip the klant within their slot.
//!
//! [`join`] and [`leave`] (`join.rs`): this PC into the office and out of it.
//!
//! [`Office::send_report`] tells the office this PC's klanten (sealed with the office key:
//! kluis-office's `report` and `sealed`); [`Office::view`] reads every PC's back, opened, as
//! the office view.

mod join;

pub use join::{invite, join, join_with_code, leave, JoinRequest, Joined};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use jiff::Zoned;
use kluis_core::office_backups::OfficeBackup;
use kluis_core::{History, KlantKey};
use kluis_office::{
    Hub, KlantId, KlantReport, Lease, OfficeError, OfficeKey, OfficeView, PcReport, TurnAnswer,
    REPORT_VERSION,
};

use crate::error::{ProfileError, ProfileResult};
use crate::secrets::{SecretKind, SecretStore, APP};
use crate::settings::Settings;
use crate::status::{klant_status, KlantStatus};
use crate::store::{Profile, ProfileStore};

/// A backup made while the hub was away is told to it later within this (the longest slot the
/// hub takes, kluis-relay's `MAX_SLOT_AGE_MS`); an older one skips no PC's slot anyway.
const TOLD_LATER_WITHIN_MS: i64 = 35 * 24 * 60 * 60 * 1000;

/// How a host says what the office hub could not do (the CLI on stderr, the app in its log).
pub type TellHub = Arc<dyn Fn(&OfficeError) + Send + Sync>;

/// The office this PC joined, ready to ask for turns.
pub struct Office {
    hub: Hub,
    key: OfficeKey,
    /// This PC's name at the hub.
    pc: String,
    said: Said,
}

/// What the hub could not do, said once until it answers again: a run of 200 klanten with the
/// hub away says so once, not 200 times.
#[derive(Clone)]
struct Said {
    tell: TellHub,
    /// The hub's failure was said, and it has not answered since.
    failure_said: Arc<AtomicBool>,
    /// When the hub last did not answer in time (see [`AWAY_FOR`]).
    away_since: Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

impl Said {
    fn failed(&self, e: &OfficeError) {
        if matches!(e, OfficeError::Unreachable { .. }) {
            *self.away_since.lock().unwrap() = Some(std::time::Instant::now());
        }
        if !self.failure_said.swap(true, Ordering::SeqCst) {
            (self.tell)(e);
        }
    }

    fn answered(&self) {
        self.failure_said.store(false, Ordering::SeqCst);
        *self.away_since.lock().unwrap() = None;
    }

    /// The hub did not answer in time within [`AWAY_FOR`]: it is left alone.
    fn away(&self) -> bool {
        (self.away_since.lock().unwrap()).is_some_and(|t| t.elapsed() < AWAY_FOR)
    }
}

/// How long a hub that did not answer in time is left alone before it is asked again.
pub const AWAY_FOR: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// However often another PC is said to have backed a klant up, this PC backs up a klant it
/// plans itself at least this often (see [`Office::ask`]).
pub const OWN_BACKUP_AT_LEAST_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// The longest a turn may be held (the hub's own bound), and a little for clocks.
const MOST_HELD_MS: i64 = 60 * 60 * 1000 + 60 * 1000;

/// `answer` checked against the hub's API: a backup "done" before this PC's slot began, or a
/// turn held longer than any turn is, is not the hub's word but a broken or hostile hub's — an
/// error, and the PC goes on alone.
fn checked(answer: TurnAnswer, slot_age: std::time::Duration) -> Result<TurnAnswer, OfficeError> {
    let slot_ms = i64::try_from(slot_age.as_millis()).unwrap_or(i64::MAX);
    let fine = match &answer {
        TurnAnswer::Yours { .. } => true,
        TurnAnswer::Held { left_ms, .. } => (0..=MOST_HELD_MS).contains(left_ms),
        TurnAnswer::Done { ago_ms, .. } => (0..=slot_ms).contains(ago_ms),
    };
    match fine {
        true => Ok(answer),
        false => Err(OfficeError::Unexpected(
            "a turn outside the bounds of the hub's API".into(),
        )),
    }
}

/// When this PC itself last backed `profile` up, verified (ms since the epoch).
fn last_own_backup(history: &History, profile: &Profile) -> Option<i64> {
    let saved = history.list(Some(&profile.key()), 1000).ok()?;
    (saved.iter())
        .find(|e| e.stage == kluis_core::Stage::Saved)
        .map(|e| e.started_at_ms)
}

/// What the office said about one klant's backup.
pub enum OfficeTurn {
    /// This PC backs the klant up; what to tell the hub when it ends.
    Go(OfficeEnd),
    /// Another PC has it (see [`Skipped`]).
    Skip(Skipped),
}

/// Why a klant's planned backup is left to another PC of the office.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    /// That PC backed it up since this PC's slot began (recorded in this PC's history).
    Done(OfficeBackup),
    /// That PC is backing it up now.
    Held { by: String },
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skipped::Done(backup) => {
                let at = jiff::Timestamp::from_millisecond(backup.at_ms)
                    .map(|t| {
                        t.to_zoned(jiff::tz::TimeZone::system())
                            .strftime("%Y-%m-%d %H:%M")
                            .to_string()
                    })
                    .unwrap_or_default();
                write!(
                    f,
                    "backed up at {at} by {} (the office hub said so)",
                    backup.by
                )
            }
            Skipped::Held { by } => {
                write!(f, "being backed up by {by} now (the office hub said so)")
            }
        }
    }
}

/// What this PC tells the hub when a klant's backup ends: under a turn it holds, the turn
/// ended; without one (the hub was away, or the backup was started by hand), only a backup
/// made.
pub struct OfficeEnd {
    hub: Hub,
    /// The klant in this PC's history (what the hub was told of is recorded there).
    profile: KlantKey,
    /// None: nothing to tell (the klant's service address makes no id, or the hub could not
    /// be asked).
    klant: Option<KlantId>,
    lease: Option<Lease>,
    said: Said,
}

impl OfficeEnd {
    /// Tells the hub whether the klant was `backed_up` (a failure to reach it is said; a
    /// backup the hub was not told of — it was away — is told with the next report, see
    /// [`Office::send_report`]). A backup told is recorded in `history` as told.
    pub async fn end(self, backed_up: bool, history: &History) {
        // (Only a call the hub answered says it is back.)
        let told = match (self.lease, &self.klant) {
            (Some(lease), _) => lease.end(backed_up).await.map(drop),
            (None, Some(klant)) if backed_up => self.hub.end(klant, true).await.map(drop),
            (None, _) => return,
        };
        match told {
            Ok(()) => {
                self.said.answered();
                // (A mark not kept only tells the hub of this backup once more.)
                if backed_up {
                    let _ = history.told_office(&self.profile, kluis_core::clock::now_ms());
                }
            }
            Err(e) => self.said.failed(&e),
        }
    }
}

impl Office {
    /// The office `settings` say this PC joined, with its two keys from `secrets` (blocking:
    /// call it off the async threads); none when it joined none. A PC whose keys are gone from
    /// the keyring is an error to say; its backups go on alone.
    pub fn of(
        settings: &Settings,
        secrets: &dyn SecretStore,
        tell: TellHub,
    ) -> ProfileResult<Option<Office>> {
        let Some(membership) = &settings.office else {
            return Ok(None);
        };
        let missing = || {
            ProfileError::NotFound(
                "This PC's office keys are not in the keyring: join the office again (kluis office join).".into(),
            )
        };
        let pc_key = secrets
            .get(APP, SecretKind::OfficePcKey)?
            .ok_or_else(missing)?;
        let key = secrets
            .get(APP, SecretKind::OfficeKey)?
            .ok_or_else(missing)?;
        let key = OfficeKey::parse(key.expose()).map_err(office_error)?;
        Ok(Some(Office {
            hub: Hub::new(membership, pc_key).map_err(office_error)?,
            key,
            pc: membership.pc.clone(),
            said: Said {
                tell,
                failure_said: Arc::default(),
                away_since: Arc::default(),
            },
        }))
    }

    /// The office's say on `profile`'s backup at `now`: with `planned`, its turn asked for
    /// (see the module); otherwise (a backup started by hand) it goes ahead and the hub is
    /// told once it is saved. A skip because another PC backed the klant up is recorded in
    /// `history`.
    pub async fn ask(
        &self,
        history: &History,
        profile: &Profile,
        planned: bool,
        now: &Zoned,
    ) -> kluis_core::Result<OfficeTurn> {
        let klant = match KlantId::of(&self.key, &profile.base_url, &profile.username) {
            Ok(klant) => klant,
            Err(e) => {
                (self.said.tell)(&e);
                return Ok(OfficeTurn::Go(self.end_for(profile, None, None)));
            }
        };
        let slot_age = profile.plan.as_ref().and_then(|p| p.slot_age(now));
        let (true, Some(slot_age)) = (planned, slot_age) else {
            return Ok(OfficeTurn::Go(self.end_for(profile, Some(klant), None)));
        };
        // A hub that did not answer in time is not asked again for a while: each klant of a
        // run would wait its bound on a hub that accepts and never answers.
        if self.said.away() {
            return Ok(OfficeTurn::Go(self.end_for(profile, None, None)));
        }
        let answer = self
            .hub
            .take(&klant, kluis_office::lease::HOLD, slot_age)
            .await
            .and_then(|answer| checked(answer, slot_age));
        let answer = match answer {
            Ok(answer) => {
                self.said.answered();
                answer
            }
            Err(e) => {
                // Alone: the hub is not told of this backup either (it is not there to hear).
                self.said.failed(&e);
                return Ok(OfficeTurn::Go(self.end_for(profile, None, None)));
            }
        };
        // The safety net: a klant this PC plans gets a backup of its own at least weekly,
        // whatever the hub says — a hub (or a PC) that says "done" or "held" each slot without
        // a backup made would otherwise leave it backed up by nobody. (Counted from the plan's
        // setting when this PC never backed it up.)
        let now_ms = now.timestamp().as_millisecond();
        let set_at = profile.plan.as_ref().map_or(now_ms, |p| p.set_at_ms);
        let own = last_own_backup(history, profile).unwrap_or(set_at);
        let own_due = now_ms.saturating_sub(own) > OWN_BACKUP_AT_LEAST_MS;
        Ok(match answer {
            TurnAnswer::Yours { .. } => {
                let lease = Lease::hold(self.hub.clone(), klant.clone());
                OfficeTurn::Go(self.end_for(profile, Some(klant), Some(lease)))
            }
            TurnAnswer::Held { .. } | TurnAnswer::Done { .. } if own_due => {
                OfficeTurn::Go(self.end_for(profile, Some(klant), None))
            }
            TurnAnswer::Held { by, .. } => OfficeTurn::Skip(Skipped::Held { by }),
            TurnAnswer::Done { by, ago_ms } => {
                let backup = OfficeBackup {
                    at_ms: now_ms - ago_ms,
                    by,
                };
                history.backed_up_elsewhere(&profile.key(), &backup)?;
                OfficeTurn::Skip(Skipped::Done(backup))
            }
        })
    }

    /// This PC's report of its klanten (each profile of `profiles` with its standing in
    /// `history`) sealed and sent to the hub, in place of its last: after a run of backups,
    /// and at least hourly — for the CLI and the app alike. A hub that cannot take it is said
    /// as any hub failure (once), and changes nothing here; a history that cannot be read is
    /// the `Err`, for the host to say.
    pub async fn send_report(
        &self,
        profiles: &ProfileStore,
        history: &History,
    ) -> kluis_core::Result<()> {
        let (now, targets) = (jiff::Zoned::now(), profiles.settings().copy_targets);
        let mut klanten = Vec::new();
        let mut hub_away = false;
        for profile in profiles.list() {
            let status = klant_status(&profile, history, &profile.copy_targets(&targets), &now)?;
            if !hub_away {
                hub_away = !self.tell_untold(history, &profile, &status).await?;
            }
            klanten.extend(self.klant_report(&profile, &status));
        }
        let report = PcReport {
            version: REPORT_VERSION,
            pc: self.pc.clone(),
            sent_ms: kluis_core::clock::now_ms(),
            klanten,
        };
        let plain = serde_json::to_vec(&report).expect("a report serialises");
        let sent = match kluis_office::sealed::seal(&self.key, &self.pc, &plain) {
            Ok(sealed) => self.hub.put_report(sealed).await,
            Err(e) => Err(e),
        };
        match sent {
            Ok(()) => self.said.answered(),
            Err(e) => self.said.failed(&e),
        }
        Ok(())
    }

    /// `profile`'s newest own backup, when the hub was not told of it (made while the hub was
    /// away, or its answer lost on the way): told now, with when it was made, so the office's
    /// other PCs skip the klant within their slot. `false` when the hub could not be told
    /// (said; the rest wait for the next report).
    async fn tell_untold(
        &self,
        history: &History,
        profile: &Profile,
        status: &KlantStatus,
    ) -> kluis_core::Result<bool> {
        let Some(at) = status.last_success_ms else {
            return Ok(true);
        };
        let key = profile.key();
        let ago = kluis_core::clock::now_ms().saturating_sub(at);
        let told = history.told_office_at(&key)?.is_some_and(|told| told >= at);
        let klant = KlantId::of(&self.key, &profile.base_url, &profile.username);
        let (false, true, Ok(klant)) = (told, (0..=TOLD_LATER_WITHIN_MS).contains(&ago), klant)
        else {
            return Ok(true);
        };
        if self.said.away() {
            return Ok(false);
        }
        let ago = std::time::Duration::from_millis(ago as u64);
        match self.hub.told_done(&klant, ago).await {
            Ok(_) => {
                self.said.answered();
                history.told_office(&key, at)?;
                Ok(true)
            }
            Err(e) => {
                self.said.failed(&e);
                Ok(false)
            }
        }
    }

    /// The office as its PCs last reported it (each report opened with the office key).
    /// A live PC of the office that sent no report yet is said as such (a PC that joined and
    /// never ran is not safe to count on).
    pub async fn view(&self) -> Result<OfficeView, OfficeError> {
        OfficeView::read(&self.hub, &self.key).await
    }

    /// `profile` as this PC reports it (none when its service address makes no id).
    fn klant_report(&self, profile: &Profile, status: &KlantStatus) -> Option<KlantReport> {
        let klant = KlantId::of(&self.key, &profile.base_url, &profile.username).ok()?;
        let plan = (profile.plan.as_ref())
            .filter(|p| !p.paused && p.schedule != kluis_core::plan::Schedule::Manual)
            .map(|p| p.in_words());
        Some(KlantReport {
            klant: klant.as_str().to_string(),
            name: profile.name.clone(),
            service: profile.base_url.clone(),
            username: profile.username.clone(),
            plan,
            last_backup_ms: status.last_success_ms,
            backed_up_elsewhere: (status.office_backup.as_ref()).map(|b| (b.at_ms, b.by.clone())),
            last_error: (status.last_error.as_ref()).map(|e| {
                e.message
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(200)
                    .collect()
            }),
            overdue: status.overdue,
            next_due_ms: status.next_due_ms,
            copies: status.copies.as_ref().map(|c| (c.made, c.wanted)),
            restore_test_failed: status.restore_test_failed.is_some(),
            restore_test_overdue: status.restore_test_overdue,
        })
    }

    /// What to tell the hub at the end (nothing for a klant without an id).
    fn end_for(
        &self,
        profile: &Profile,
        klant: Option<KlantId>,
        lease: Option<Lease>,
    ) -> OfficeEnd {
        OfficeEnd {
            hub: self.hub.clone(),
            profile: profile.key(),
            klant,
            lease,
            said: self.said.clone(),
        }
    }
}

/// A hub's error as this crate's: out of reach is the network's (worth trying again), the rest
/// a setting to change.
fn office_error(e: OfficeError) -> ProfileError {
    ProfileError::Core(match e {
        OfficeError::Unreachable { .. } => kluis_core::Error::Network(e.to_string()),
        other => kluis_core::Error::Config(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hub's answer outside its API's bounds is refused (the PC then goes on alone): a
    /// backup "done" before this PC's slot began or in the future, a turn held longer than any
    /// turn is or for a negative time.
    #[test]
    fn a_turn_outside_the_hub_s_bounds_is_refused() {
        let hour = std::time::Duration::from_secs(3600);
        let by = || "BALIE".to_string();
        for fine in [
            TurnAnswer::Yours { hold_ms: 600_000 },
            TurnAnswer::Held {
                by: by(),
                left_ms: 600_000,
            },
            TurnAnswer::Done {
                by: by(),
                ago_ms: 0,
            },
            TurnAnswer::Done {
                by: by(),
                ago_ms: 3_600_000,
            },
        ] {
            assert!(checked(fine.clone(), hour).is_ok(), "{fine:?}");
        }
        for hostile in [
            TurnAnswer::Held {
                by: by(),
                left_ms: 2 * 3_600_000,
            },
            TurnAnswer::Held {
                by: by(),
                left_ms: -1,
            },
            TurnAnswer::Done {
                by: by(),
                ago_ms: 3_600_001,
            },
            TurnAnswer::Done {
                by: by(),
                ago_ms: -5,
            },
        ] {
            assert!(checked(hostile.clone(), hour).is_err(), "{hostile:?}");
        }
    }
}
