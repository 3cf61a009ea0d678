//! [`Keeping`], what the app keeps: a klant's retention rule (with the preview the form shows before it
//! is saved), the rule and the monthly verification applied after each verified save, and
//! "Verify backups" — kluis-core's retention and verify, as `kluis prune` and `kluis verify`
//! use them.

use std::sync::Arc;

use kluis_core::history::Check;
use kluis_core::retention::Retention;
use kluis_core::verify::verify_kept;
use kluis_core::{Error, HistoryEntry, KlantKey};
use kluis_profiles::unattended::{self, AfterSave, AfterSaveOf};
use kluis_profiles::{KlantTurn, Turn};
use serde::Serialize;

use super::shared::Shared;
use crate::error::{AppError, AppResult};
use crate::events::{AppJobEvent, EventSink};
use crate::profiles::{Profile, ProfileView};

/// What "Verify backups" found: how many backups were read, and those that cannot be relied
/// on (each with its `last_check`), newest first.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct VerifyReport {
    pub verified: u32,
    #[ts(type = "number")]
    pub bytes: u64,
    pub problems: Vec<HistoryEntry>,
    /// How many copies off this computer were looked at (there, with their length).
    pub copies_checked: u32,
    /// Those found missing, changed or unreadable, oldest backup first.
    pub copy_problems: Vec<CopyProblem>,
}

/// A copy off this computer that verification found missing, changed or unreadable.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct CopyProblem {
    /// The klant whose backup it copies.
    pub profile: KlantKey,
    /// The copy target's name.
    pub target: String,
    pub location: Option<String>,
    pub check: Check,
}

/// See the module's text; also the auditors' report (`reports.rs`) and the dashboard
/// (`dashboard.rs`), which read what is kept.
pub struct Keeping {
    pub(super) shared: Arc<Shared>,
}

impl Keeping {
    /// Sets (or, with `None` or a rule that keeps everything, removes) profile `id`'s
    /// retention rule. Applied from its next save on.
    pub fn set_retention(&self, id: &str, rule: Option<Retention>) -> AppResult<ProfileView> {
        let rule = rule.filter(|r| !r.keeps_everything());
        let profile = self.shared.profiles.update(id, |profile| {
            profile.retention = rule;
            Ok(())
        })?;
        Ok(self.shared.view(&profile))
    }

    /// The backups of profile `id` that `rule` would remove now, newest first: what the form
    /// shows before the rule is saved. (Quick: no file is read. When the rule runs, each file
    /// is checked first and only an intact one is deleted, never the newest intact one.)
    pub fn preview_retention(&self, id: &str, rule: Retention) -> AppResult<Vec<HistoryEntry>> {
        let kept = self.shared.history.kept(Some(&KlantKey::profile(id)))?;
        let zone = jiff::tz::TimeZone::system();
        Ok(rule.select(kept, &zone).remove)
    }

    /// Which copy targets profile `id`'s backups go to (`None`: every one, also those added
    /// later); an id that is not a target is refused.
    pub fn set_copy_to(&self, id: &str, targets: Option<Vec<String>>) -> AppResult<ProfileView> {
        let all = self.shared.settings().copy_targets;
        if let Some(unknown) = (targets.iter().flatten()).find(|t| !all.iter().any(|a| &a.id == *t))
        {
            return Err(AppError::NotFound(format!(
                "The copy target {} is no longer set; choose again.",
                unknown.chars().take(40).collect::<String>()
            )));
        }
        let profile = self.shared.profiles.update(id, |profile| {
            profile.copy_to = targets;
            Ok(())
        })?;
        Ok(self.shared.view(&profile))
    }

    /// "Verify this klant's backups once a month" on or off for profile `id`.
    pub fn set_verify_monthly(&self, id: &str, on: bool) -> AppResult<ProfileView> {
        let profile = self.shared.profiles.update(id, |profile| {
            profile.verify_monthly = on;
            Ok(())
        })?;
        Ok(self.shared.view(&profile))
    }

    /// "Test a restore of this klant's newest backup once a month" on or off for profile `id`.
    pub fn set_restore_test_monthly(&self, id: &str, on: bool) -> AppResult<ProfileView> {
        let profile = self.shared.profiles.update(id, |profile| {
            profile.restore_test_monthly = on;
            Ok(())
        })?;
        Ok(self.shared.view(&profile))
    }

    /// The copies that could not be made after their backup (a copy target that was away),
    /// made now, klant by klant under each one's turn — at the app's start, as `kluis copy
    /// --pending` does. What still cannot be made is logged (the dashboard shows it). Returns
    /// how many copies were made.
    pub async fn copy_pending(&self) -> usize {
        let targets = self.shared.copy_targets().await;
        if targets.is_empty() {
            return 0;
        }
        let history = self.shared.history.clone();
        let targets = unattended::targets_by_klant(self.shared.profiles.list(), targets);
        let pending = match unattended::copy_pending(
            history,
            None,
            targets,
            Some(self.shared.upload_pace.clone()),
        )
        .await
        {
            Ok(pending) => pending,
            Err(e) => {
                tracing::warn!(code = %e.code(), "the pending copies could not be looked at");
                return 0;
            }
        };
        let copied = pending
            .into_iter()
            .flat_map(|klant| klant.copied.unwrap_or_default());
        let mut made = 0;
        for copy in copied {
            match copy.outcome {
                Ok(_) => made += 1,
                Err(e) => tracing::warn!(code = %e.code(), "a pending copy could not be made"),
            }
        }
        made
    }

    /// "Verify backups": every kept backup read again and each of its copies off this computer
    /// looked at (off the async threads), each finding recorded in the history for the
    /// dashboard (a copy found missing is made again after its klant's next backup).
    pub async fn verify_backups(&self) -> AppResult<VerifyReport> {
        let history = self.shared.history.clone();
        let targets = self.shared.copy_targets().await;
        let (verified, copies) = tokio::task::spawn_blocking(move || {
            let verified = verify_kept(&history, None)?;
            let copies = kluis_copies::check_copies(&history, &targets, None, false)?;
            Ok::<_, Error>((verified, copies))
        })
        .await
        .map_err(|e| Error::Io(format!("Verification stopped unexpectedly ({e}).")))??;
        let bytes = verified.iter().filter_map(|v| v.entry.bytes).sum();
        let mut problems: Vec<HistoryEntry> = (verified.iter())
            .filter(|v| v.check.finding.is_problem())
            .map(|v| HistoryEntry {
                last_check: Some(v.check.clone()),
                ..v.entry.clone()
            })
            .collect();
        problems.reverse();
        let copy_problems = (copies.iter())
            .filter(|c| c.check.finding.is_problem())
            .map(|c| CopyProblem {
                profile: c.entry.profile.clone(),
                target: c.target.name.clone(),
                location: c.record.location.clone(),
                check: c.check.clone(),
            })
            .collect();
        Ok(VerifyReport {
            verified: verified.len() as u32,
            bytes,
            problems,
            copies_checked: copies.len() as u32,
            copy_problems,
        })
    }
}

/// After klant `profile_id`'s backup was saved in its final place by someone watching (a
/// backup to the save folder, a save through the dialog, a resumed one): its turn is taken and
/// what follows any save follows (`kluis_profiles::unattended::after_save`: the retention rule,
/// then the monthly verification). While another backup of the klant runs (it holds the turn),
/// that backup's end does it instead. What cannot be done is logged; the backup stands.
/// The window hears which targets are being copied to (`sink`), before the copies are made.
pub(crate) async fn after_save(shared: &Shared, profile_id: &str, sink: Option<&EventSink>) {
    let (history, profiles) = (shared.history.clone(), &shared.profiles);
    let Ok(profile) = profiles.get(profile_id) else {
        return; // a job of no profile of the app's (the CLI's, a removed one's)
    };
    match KlantTurn::take(&history, &profile, false) {
        Ok(Turn::Taken(turn)) => {
            let targets = shared.copy_targets().await;
            let names: Vec<String> = (profile.copy_targets(&targets).into_iter())
                .map(|t| t.name)
                .collect();
            if let (Some(sink), false) = (sink, names.is_empty()) {
                sink(AppJobEvent::Copying { targets: names });
            }
            let after = AfterSaveOf {
                history,
                targets,
                pace: Some(shared.upload_pace.clone()),
                opener: shared.opener(&profile).await,
                catalogs: shared.catalogs_after(),
            };
            unattended::after_save(after, &profile, turn, &log).await
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(code = %e.code(), "the klant's turn could not be taken"),
    }
}

/// How the app tells what followed a save: in its log (the history and the dashboard show
/// what was removed and found).
pub(crate) fn log(_: &Profile, step: AfterSave) {
    match step {
        AfterSave::Pruned { pruned, .. } if !pruned.spared.is_empty() => tracing::warn!(
            left = pruned.spared.len(),
            "the retention rule left backups that are not as saved"
        ),
        AfterSave::Pruned { .. } => {}
        AfterSave::PruneFailed(e) => {
            tracing::warn!(code = %e.code(), "the retention rule could not be applied")
        }
        AfterSave::Verified { verified, copies } => {
            let problems = verified.iter().filter(|v| v.check.finding.is_problem());
            let copy_problems = copies.iter().filter(|c| c.check.finding.is_problem());
            tracing::info!(
                problems = problems.count(),
                copy_problems = copy_problems.count(),
                "monthly verification done"
            );
        }
        AfterSave::VerifyFailed(e) => {
            tracing::warn!(code = %e.code(), "the monthly verification failed")
        }
        AfterSave::RestoreTested(test) if test.record.passed => {
            let (entries, copy) = (test.record.entries, test.copy_on.is_some());
            tracing::info!(entries, copy, "monthly restore test passed")
        }
        AfterSave::RestoreTested(test) => {
            let (entries, copy) = (test.record.entries, test.copy_on.is_some());
            tracing::warn!(entries, copy, "the monthly restore test failed")
        }
        AfterSave::RestoreTestFailed(e) => {
            tracing::warn!(code = %e.code(), "the monthly restore test could not run")
        }
        AfterSave::Copied { .. } => tracing::info!("a backup was copied to a copy target"),
        AfterSave::TargetPruned { pruned, .. } => tracing::info!(
            removed = pruned.removed.len(),
            left = pruned.spared.len(),
            locked = pruned.locked.len(),
            renewed = pruned.renewed,
            "a copy target's rule was applied"
        ),
        AfterSave::TargetPruneFailed { target, error } => {
            tracing::warn!(code = %error.code(), %target, "a copy target's rule could not be applied")
        }
        AfterSave::CopyFailed { target, error } => {
            tracing::warn!(code = %error.code(), %target, "a backup could not be copied")
        }
        AfterSave::CatalogWritten {
            number,
            records,
            other_kit,
            target,
        } => {
            tracing::info!(
                ?number,
                records,
                "a copy target's recovery catalog was written"
            );
            if let Some(theirs) = other_kit {
                tracing::warn!(%target, %theirs, "the copy target names another recovery kit than this computer's: join the office's new kit (Settings → Recovery kit)");
            }
        }
        AfterSave::CatalogFailed { target, error } => {
            tracing::warn!(code = %error.code(), %target, "a copy target's recovery catalog could not be written")
        }
    }
}
