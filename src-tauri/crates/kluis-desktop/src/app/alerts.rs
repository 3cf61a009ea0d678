//! [`Alerts`]: a failed unattended backup is told (failures close together in one summary,
//! kluis-reporting's `FailureBatch`), and so is a klant that becomes overdue (looked at every
//! few minutes, when the daily report is looked at too) — through kluis-reporting's `Outbox`:
//! on the desktop while Settings → *Notifications* is on, by e-mail while it mails each
//! failure. Settings → *E-mail* and the daily report are in `mail.rs`.

use std::sync::Arc;
use std::time::Duration;

use kluis_core::Saved;
use kluis_profiles::klant_statuses;
use kluis_profiles::unattended::AfterSave;
use kluis_reporting::{Alert, Failed, FailureBatch, Notifier, OfficeMail, Outbox, OverdueWatch};

use super::shared::Shared;
use crate::error::AppResult;
use crate::profiles::{ProfileStore, Settings};
use crate::secrets::SecretStore;

/// How often the app looks for klanten that became overdue.
const OVERDUE_EVERY: Duration = Duration::from_secs(5 * 60);

/// What tells one unattended job's failure, given its outcome.
pub(crate) type TellFailure = Box<dyn FnOnce(&kluis_core::Result<Saved>) + Send>;

/// What tells what of the steps after klant `.0`'s save failed (`.1`; see
/// `Failed::after_save`).
pub(crate) type TellAfterSave = Arc<dyn Fn(&str, &AfterSave) + Send + Sync>;

/// Failures gather in a batch for `gather_for`, then are told through an outbox: on `desktop`
/// and by `office`'s mail as `profiles`' settings say at the time, in their language.
fn outbox_batch(
    desktop: Arc<dyn Notifier>,
    office: OfficeMail,
    profiles: &Arc<ProfileStore>,
    gather_for: Duration,
) -> Arc<FailureBatch> {
    let (settings, language) = (profiles.clone(), profiles.clone());
    let outbox = Outbox::new(desktop, office, Arc::new(move || settings.settings()));
    let language = Arc::new(move || language.settings().language());
    FailureBatch::new(Arc::new(outbox), gather_for, language)
}

/// See the module's text.
pub struct Alerts {
    pub(super) shared: Arc<Shared>,
    /// The OS keyring, where the office's mail password is kept.
    pub(super) keyring: Arc<dyn SecretStore>,
    /// Failures, gathered and told through an outbox (the desktop and/or e-mail, as the
    /// settings say); overdue klanten are told through the same outbox.
    failures: Arc<FailureBatch>,
    /// The desktop's notifications (the tray's own messages, "Send test").
    desktop: Arc<dyn Notifier>,
    /// The office's e-mail (password from the keyring).
    pub(super) office: OfficeMail,
}

impl Alerts {
    /// Alerts shown by `desktop` (and mailed as the settings say), failures gathered for
    /// `gather_for`.
    pub(super) fn new(
        shared: Arc<Shared>,
        keyring: Arc<dyn SecretStore>,
        desktop: Arc<dyn Notifier>,
        gather_for: Duration,
    ) -> Alerts {
        let office = OfficeMail::new(keyring.clone());
        Alerts {
            failures: outbox_batch(
                desktop.clone(),
                office.clone(),
                &shared.profiles,
                gather_for,
            ),
            shared,
            keyring,
            desktop,
            office,
        }
    }

    /// Settings → *Notifications* on or off.
    pub fn set_notify_desktop(&self, on: bool) -> AppResult<Settings> {
        self.shared.profiles.update_settings(|settings| {
            settings.notify_desktop = on;
            Ok(())
        })?;
        Ok(self.shared.settings())
    }

    /// "Send test": a notification now, whatever the setting.
    pub async fn test_notification(&self) -> AppResult<()> {
        Ok(self
            .desktop
            .notify(&Alert::test(self.shared.language()))
            .await?)
    }

    /// Looks every few minutes (and at once) for klanten that became overdue, telling each
    /// lateness once, and sends the daily report when it is due. Runs until the app ends.
    pub async fn watch_overdue(&self) {
        let mut watch = OverdueWatch::default();
        let mut every = tokio::time::interval(OVERDUE_EVERY);
        loop {
            every.tick().await;
            if let Some(alert) = self.newly_overdue(&mut watch) {
                if let Err(e) = self.failures.notifier().notify(&alert).await {
                    tracing::warn!(code = %e.code(), "overdue klanten could not be told");
                }
            }
            if let Err(e) = self.send_daily_report_if_due().await {
                tracing::warn!(code = %e.code(), "the daily report could not be sent");
            }
        }
    }

    /// Shows `alert` on the desktop; one that cannot be shown is logged, and changes nothing
    /// else.
    pub(super) async fn show(&self, alert: &Alert) {
        if let Err(e) = self.desktop.notify(alert).await {
            tracing::warn!(code = %e.code(), title = %alert.title, "a notification could not be shown");
        }
    }

    /// The alert for klanten overdue now and not told yet (only when they would be told
    /// somewhere: the desktop, or e-mail on each failure).
    pub fn newly_overdue(&self, watch: &mut OverdueWatch) -> Option<Alert> {
        let now = jiff::Zoned::now();
        let statuses = klant_statuses(&self.shared.profiles, &self.shared.history, &now).ok()?;
        let names = watch.newly_overdue(&statuses);
        if !Outbox::wants(&self.shared.profiles.settings()) {
            return None;
        }
        Alert::overdue(&names, self.shared.language())
    }

    /// What tells that a klant's saved backup could not be copied to a copy target, or failed
    /// its restore test: gathered with the failures, and told where they are.
    pub(super) fn after_save_teller(&self) -> TellAfterSave {
        let (profiles, failures) = (self.shared.profiles.clone(), self.failures.clone());
        Arc::new(move |klant, step| {
            let failed = Failed::after_save(klant, step);
            if let (Some(failed), true) = (failed, Outbox::wants(&profiles.settings())) {
                failures.add(failed);
            }
        })
    }

    /// What tells an unattended job's failure (usable from the job's task): into the batch,
    /// named for klant `klant`, when failures are told anywhere. Cancels and stops say nothing.
    pub(super) fn failure_teller(&self, klant: String) -> TellFailure {
        let (profiles, failures) = (self.shared.profiles.clone(), self.failures.clone());
        Box::new(move |outcome| {
            let failed = outcome.as_ref().err().and_then(|e| Failed::of(&klant, e));
            if let (Some(failed), true) = (failed, Outbox::wants(&profiles.settings())) {
                failures.add(failed);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AppPaths, DesktopApp, Language, MemoryStore};
    use kluis_core::Error;
    use tokio::sync::mpsc;

    struct Told(mpsc::UnboundedSender<Alert>);

    impl Notifier for Told {
        fn notify<'a>(
            &'a self,
            alert: &'a Alert,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = kluis_profiles::ProfileResult<()>> + Send + 'a>,
        > {
            let _ = self.0.send(alert.clone());
            Box::pin(async { Ok(()) })
        }
    }

    /// A failure while notifications are off is not told: the next one, within the same
    /// gathering time, is told alone (had the first been kept, they would be told as two).
    #[tokio::test]
    async fn no_failure_is_told_while_turned_off() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, mut told) = mpsc::unbounded_channel();
        let app = DesktopApp::builder(
            AppPaths::under(dir.path()),
            Arc::new(MemoryStore::default()),
        )
        .notifier(Arc::new(Told(tx)), Duration::from_millis(50))
        .open()
        .unwrap();
        app.settings.set_language(Language::En).unwrap(); // (not this machine's locale)
        let alerts = &app.alerts;
        let failed = || Err(Error::Network("The service could not be reached.".into()));
        alerts.set_notify_desktop(false).unwrap();
        (alerts.failure_teller("Klant A".into()))(&failed());
        alerts.set_notify_desktop(true).unwrap();
        (alerts.failure_teller("Klant B".into()))(&failed());
        let alert = told.recv().await.unwrap();
        assert_eq!(alert.title, "Backup of Klant B failed");
        assert_eq!(alert.body, "The service could not be reached.");
    }
}
