//! Notifications: a failed unattended backup is told on the desktop (failures close together
//! in one summary, kluis-profiles' `FailureBatch`), and so is a klant that becomes overdue
//! (looked at every few minutes); both only while Settings → *Notifications* is on.

use kluis_profiles::alerts::GATHER_FOR;
use kluis_profiles::{Alert, DesktopNotifier, Failed, FailureBatch, Notifier, OverdueWatch};

use super::*;

/// How often the app looks for klanten that became overdue.
const OVERDUE_EVERY: Duration = Duration::from_secs(5 * 60);

/// What tells one unattended job's failure, given its outcome.
pub(super) type TellFailure = Box<dyn FnOnce(&kluis_core::Result<Saved>) + Send>;

/// The desktop's notifications: failures gather in a batch, told through its notifier.
pub(super) fn desktop_alerts() -> Arc<FailureBatch> {
    FailureBatch::new(Arc::new(DesktopNotifier), GATHER_FOR)
}

impl DesktopApp {
    /// Sends notifications to `notifier`, gathering failures for `gather_for` (tests).
    pub fn with_notifier(mut self, notifier: Arc<dyn Notifier>, gather_for: Duration) -> Self {
        self.alerts = FailureBatch::new(notifier, gather_for);
        self
    }

    /// Settings → *Notifications* on or off.
    pub fn set_notify_desktop(&self, on: bool) -> AppResult<Settings> {
        let mut settings = self.profiles.settings();
        settings.notify_desktop = on;
        self.profiles.set_settings(settings)?;
        Ok(self.settings())
    }

    /// "Send test": a notification now, whatever the setting.
    pub async fn test_notification(&self) -> AppResult<()> {
        Ok(self.alerts.notifier().notify(&Alert::test()).await?)
    }

    /// Looks every few minutes (and at once) for klanten that became overdue, and tells each
    /// lateness once. Runs until the app ends.
    pub async fn watch_overdue(&self) {
        let mut watch = OverdueWatch::default();
        let mut every = tokio::time::interval(OVERDUE_EVERY);
        loop {
            every.tick().await;
            if let Some(alert) = self.newly_overdue(&mut watch) {
                self.show(&alert).await;
            }
        }
    }

    /// Shows `alert` on the desktop; one that cannot be shown is logged, and changes nothing
    /// else.
    pub(super) async fn show(&self, alert: &Alert) {
        if let Err(e) = self.alerts.notifier().notify(alert).await {
            tracing::warn!(code = %e.code(), title = %alert.title, "a notification could not be shown");
        }
    }

    /// The alert for klanten overdue now and not told yet (only when notifications are on).
    pub fn newly_overdue(&self, watch: &mut OverdueWatch) -> Option<Alert> {
        let statuses = self.dashboard().ok()?;
        let names = watch.newly_overdue(&statuses);
        if !self.profiles.settings().notify_desktop {
            return None;
        }
        Alert::overdue(&names)
    }

    /// What tells an unattended job's failure (usable from the job's task): into the batch,
    /// named for klant `klant`, when notifications are on. Cancels and stops say nothing.
    pub(super) fn failure_teller(&self, klant: String) -> TellFailure {
        let (profiles, failures) = (self.profiles.clone(), self.alerts.clone());
        Box::new(move |outcome| {
            let failed = outcome.as_ref().err().and_then(|e| Failed::of(&klant, e));
            if let (Some(failed), true) = (failed, profiles.settings().notify_desktop) {
                failures.add(failed);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let app = DesktopApp::open(
            AppPaths::under(dir.path()),
            Arc::new(MemoryStore::default()),
            None,
        )
        .unwrap()
        .with_notifier(Arc::new(Told(tx)), Duration::from_millis(50));
        let failed = || Err(Error::Network("The service could not be reached.".into()));
        app.set_notify_desktop(false).unwrap();
        (app.failure_teller("Klant A".into()))(&failed());
        app.set_notify_desktop(true).unwrap();
        (app.failure_teller("Klant B".into()))(&failed());
        let alert = told.recv().await.unwrap();
        assert_eq!(alert.title, "Backup of Klant B failed");
        assert_eq!(alert.body, "The service could not be reached.");
    }
}
