//! What the app keeps: a klant's retention rule (with the preview the form shows before it
//! is saved), the rule and the monthly verification applied after each verified save, and
//! "Verify backups" — kluis-core's retention and verify, as `kluis prune` and `kluis verify`
//! use them.

use kluis_core::retention::{prune_in_background, Mode, Retention};
use kluis_core::verify::verify_kept;

use super::*;

/// What "Verify backups" found: how many backups were read, and those that cannot be relied
/// on (each with its `last_check`), newest first.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct VerifyReport {
    pub verified: u32,
    #[ts(type = "number")]
    pub bytes: u64,
    pub problems: Vec<HistoryEntry>,
}

impl DesktopApp {
    /// Sets (or, with `None` or a rule that keeps everything, removes) profile `id`'s
    /// retention rule. Applied from its next save on.
    pub fn set_retention(&self, id: &str, rule: Option<Retention>) -> AppResult<ProfileView> {
        let rule = rule.filter(|r| !r.keeps_everything());
        let profile = self.profiles.update(id, |profile| {
            profile.retention = rule;
            Ok(())
        })?;
        Ok(self.view(&profile))
    }

    /// The backups of profile `id` that `rule` would remove now, newest first: what the form
    /// shows before the rule is saved. (Quick: no file is read. When the rule runs, each file
    /// is checked first and only an intact one is deleted, never the newest intact one.)
    pub fn preview_retention(&self, id: &str, rule: Retention) -> AppResult<Vec<HistoryEntry>> {
        let kept = self.history.kept(Some(id))?;
        let zone = jiff::tz::TimeZone::system();
        Ok(rule.select(kept, &zone).remove)
    }

    /// "Verify this klant's backups once a month" on or off for profile `id`.
    pub fn set_verify_monthly(&self, id: &str, on: bool) -> AppResult<ProfileView> {
        let profile = self.profiles.update(id, |profile| {
            profile.verify_monthly = on;
            Ok(())
        })?;
        Ok(self.view(&profile))
    }

    /// "Verify backups": every kept backup read again (off the async threads), each finding
    /// recorded in the history for the dashboard.
    pub async fn verify_backups(&self) -> AppResult<VerifyReport> {
        let history = self.history.clone();
        let verified = tokio::task::spawn_blocking(move || verify_kept(&history, None))
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
        Ok(VerifyReport {
            verified: verified.len() as u32,
            bytes,
            problems,
        })
    }
}

/// What a klant asks of Kluis after each verified save: its retention rule applied, and its
/// backups read again once a month.
#[derive(Debug, Clone, Default)]
pub(super) struct AfterSave {
    pub retention: Option<Retention>,
    pub verify_monthly: bool,
}

impl AfterSave {
    pub fn of(profile: &Profile) -> AfterSave {
        AfterSave {
            retention: profile.retention.clone(),
            verify_monthly: profile.verify_monthly,
        }
    }
}

/// After a verified save of klant `profile_id` (in its final place), under the klant's turn:
/// applies its rule, if it has one. What cannot be done is logged; the backup stands.
pub(super) async fn apply_rule(history: Arc<History>, profile_id: String, what: &AfterSave) {
    let Some(rule) = what.retention.clone().filter(|r| !r.keeps_everything()) else {
        return;
    };
    match prune_in_background(history, profile_id, rule, Mode::Delete).await {
        Ok(pruned) if !pruned.spared.is_empty() => tracing::warn!(
            left = pruned.spared.len(),
            "the retention rule left backups that are not as saved"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(code = %e.code(), "the retention rule could not be applied"),
    }
}

/// After a save of klant `profile_id`, with its turn given back (reading every backup again
/// can take long, and must not keep the klant's next backup waiting): its monthly
/// verification, when it asks for one and it is due.
pub(super) async fn verify_monthly(history: Arc<History>, profile_id: String, what: &AfterSave) {
    if !what.verify_monthly {
        return;
    }
    let verified = tokio::task::spawn_blocking(move || {
        let now = kluis_core::clock::now_ms();
        kluis_core::verify::verify_if_month_passed(&history, &profile_id, now)
    })
    .await;
    match verified {
        Ok(Ok(Some(verified))) => {
            let problems = verified.iter().filter(|v| v.check.finding.is_problem());
            tracing::info!(problems = problems.count(), "monthly verification done");
        }
        Ok(Ok(None)) => {}
        Ok(Err(e)) => tracing::warn!(code = %e.code(), "the monthly verification failed"),
        Err(_) => tracing::warn!("the monthly verification stopped unexpectedly"),
    }
}
