//! Where an unattended backup's failure, or a klant that became overdue, is told — decided by
//! the settings as they are when it is told: on the desktop while Settings → *Notifications*
//! is on, and by e-mail while e-mail is set to each failure (a daily report tells the rest).
//! The app's failure batches and the CLI's batches both tell through an [`Outbox`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use kluis_profiles::{ProfileResult, Settings};

use crate::alerts::{Alert, Notifier};
use crate::mail::OfficeMail;
use crate::mail_settings;

/// Tells alerts where the settings say.
pub struct Outbox {
    desktop: Arc<dyn Notifier>,
    office: OfficeMail,
    settings: Arc<dyn Fn() -> Settings + Send + Sync>,
}

impl Outbox {
    /// Tells on `desktop` and through `office`'s mail, as `settings` (read at each alert) say.
    pub fn new(
        desktop: Arc<dyn Notifier>,
        office: OfficeMail,
        settings: Arc<dyn Fn() -> Settings + Send + Sync>,
    ) -> Outbox {
        Outbox {
            desktop,
            office,
            settings,
        }
    }

    /// Whether `settings` send failures anywhere at all (else they need not be gathered).
    pub fn wants(settings: &Settings) -> bool {
        settings.notify_desktop || Self::mails(settings)
    }

    fn mails(settings: &Settings) -> bool {
        // Settings that cannot be read may have asked for each failure: tried, and said.
        mail_settings::of(settings).map_or(true, |mail| mail.is_some_and(|m| m.each_failure()))
    }
}

impl Notifier for Outbox {
    /// Both ways are tried; the first failure is returned (the other was still told).
    fn notify<'a>(
        &'a self,
        alert: &'a Alert,
    ) -> Pin<Box<dyn Future<Output = ProfileResult<()>> + Send + 'a>> {
        Box::pin(async move {
            let settings = (self.settings)();
            let desktop = match settings.notify_desktop {
                true => self.desktop.notify(alert).await,
                false => Ok(()),
            };
            let mail = match mail_settings::of(&settings) {
                Ok(Some(mail)) if mail.each_failure() => {
                    async { self.office.mailer(&mail).await?.send(alert).await }.await
                }
                Ok(_) => Ok(()),
                Err(unreadable) => Err(unreadable),
            };
            desktop.and(mail)
        })
    }
}
