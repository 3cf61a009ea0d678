//! Settings → *E-mail*: the office's SMTP server, saved with its password in the keyring;
//! "Send test"; and the daily report, sent when due (looked at with the overdue klanten, every
//! few minutes, and once between the app and `kluis run-due`). Failures are mailed by the
//! failure batch's outbox (see `alerts`).

use kluis_core::{Error, Secret};
use kluis_reporting::mail::{self, test_mail};
use kluis_reporting::{mail_settings, MailSettings};
use serde::Deserialize;

use super::alerts::Alerts;
use crate::error::AppResult;

/// What Settings → *E-mail* sends: the settings, and the password when it is entered or
/// changed (empty or absent: keep the saved one).
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct MailInput {
    pub settings: MailSettings,
    pub password: Option<String>,
}

/// Shows whether a password was given, never its value.
impl std::fmt::Debug for MailInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailInput")
            .field("settings", &self.settings)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .finish()
    }
}

impl Alerts {
    /// The e-mail settings as saved (none: e-mail is not set up). The settings file keeps
    /// them as kluis-reporting writes them; the UI reads them here, typed.
    ///
    /// Settings the file holds but cannot be read as e-mail settings are an error that says
    /// so (the form then offers to set them anew).
    pub fn mail(&self) -> AppResult<Option<MailSettings>> {
        Ok(mail_settings::of(&self.shared.profiles.settings())?)
    }

    /// Saves the e-mail settings (checked first, the reason said when refused) and a newly
    /// entered password into the keyring; the settings as saved.
    pub async fn set_mail(&self, input: MailInput) -> AppResult<Option<MailSettings>> {
        let password = input.password.filter(|p| !p.is_empty()).map(Secret::new);
        mail::save(
            &self.shared.profiles,
            self.keyring.clone(),
            input.settings,
            password,
        )
        .await?;
        self.mail()
    }

    /// No more e-mail: the settings and the saved password are removed.
    pub async fn remove_mail(&self) -> AppResult<()> {
        mail::remove(&self.shared.profiles, self.keyring.clone()).await?;
        Ok(())
    }

    /// "Send test": a mail now, through the saved settings, whatever they send otherwise.
    pub async fn test_mail(&self) -> AppResult<()> {
        let mail = self.mail()?.ok_or_else(|| {
            Error::Config("Save the e-mail settings first, then send a test.".into())
        })?;
        Ok(self
            .office
            .mailer(&mail)
            .await?
            .send(&test_mail(self.shared.language()))
            .await?)
    }

    /// Sends the daily report when e-mail asks for one and it is due; whether it sent.
    pub async fn send_daily_report_if_due(&self) -> AppResult<bool> {
        let report = kluis_reporting::DailyReport::beside(&self.shared.paths.history_db);
        let now = jiff::Zoned::now();
        let sent = report
            .send_if_due(
                &self.office,
                &self.shared.profiles,
                &self.shared.history,
                &now,
            )
            .await?;
        Ok(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::sync::Arc;

    use crate::secrets::{SecretKind, SecretStore, APP};
    use crate::{AppPaths, DesktopApp, MemoryStore};
    use kluis_reporting::MailWhen;

    fn app(dir: &Path, keyring: Arc<MemoryStore>) -> DesktopApp {
        DesktopApp::open(AppPaths::under(dir), keyring, None).unwrap()
    }

    fn input(port: u16, password: Option<&str>) -> MailInput {
        MailInput {
            settings: MailSettings {
                server: "127.0.0.1".into(),
                port,
                username: "kluis".into(),
                password_saved: false,
                from: "kluis@office.test".into(),
                to: vec!["beheer@office.test".into()],
                when: MailWhen::EachFailure,
            },
            password: password.map(str::to_string),
        }
    }

    /// The password goes to the keyring, never to the settings file; a login without a saved
    /// password is refused; saving again without one keeps it; removing forgets both.
    #[tokio::test]
    async fn the_mail_password_lives_in_the_keyring() {
        let dir = tempfile::tempdir().unwrap();
        let keyring = Arc::new(MemoryStore::default());
        let app = app(dir.path(), keyring.clone());
        let refused = app.alerts.set_mail(input(587, None)).await.unwrap_err();
        assert!(refused.to_string().contains("password"), "{refused}");

        let saved = app
            .alerts
            .set_mail(input(587, Some("mail-pw-7")))
            .await
            .unwrap();
        assert!(saved.unwrap().password_saved);
        let stored = keyring.get(APP, SecretKind::MailPassword).unwrap().unwrap();
        assert_eq!(stored.expose(), "mail-pw-7");
        let file = std::fs::read_to_string(dir.path().join("profiles.json")).unwrap();
        assert!(
            file.contains("127.0.0.1") && !file.contains("mail-pw-7"),
            "{file}"
        );

        let again = app.alerts.set_mail(input(2525, None)).await.unwrap();
        let again = again.unwrap();
        assert_eq!(again.port, 2525);
        assert!(again.password_saved, "the saved password is kept");
        assert_eq!(
            app.alerts.mail().unwrap(),
            Some(again),
            "what the UI reads is what was saved"
        );
        assert!(
            app.settings.current().mail.is_none(),
            "the window's settings leave the section out: it reads it typed, through mail"
        );

        app.alerts.remove_mail().await.unwrap();
        assert_eq!(app.alerts.mail().unwrap(), None);
        assert!(keyring
            .get(APP, SecretKind::MailPassword)
            .unwrap()
            .is_none());
    }

    /// "Send test" says what to do before e-mail is set up, and a server that cannot be
    /// reached as a `mail` error naming the server.
    #[tokio::test]
    async fn send_test_says_what_went_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path(), Arc::new(MemoryStore::default()));
        let first = app.alerts.test_mail().await.unwrap_err();
        assert!(
            first.to_string().contains("Save the e-mail settings first"),
            "{first}"
        );

        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        app.alerts
            .set_mail(input(port, Some("mail-pw-8")))
            .await
            .unwrap();
        let error = app.alerts.test_mail().await.unwrap_err();
        assert_eq!(error.code().as_str(), "mail");
        let text = error.to_string();
        assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
        assert!(!text.contains("mail-pw-8"), "{text}");
    }
}
