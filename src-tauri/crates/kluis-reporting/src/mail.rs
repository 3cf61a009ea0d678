//! E-mail through the office's own SMTP server, for the administrator who is not at the
//! computer where the backups run: either each failure (the same summary the desktop shows,
//! and klanten that became overdue), or one report a day of every klant's standing.
//!
//! - [`MailSettings`] ([`crate::mail_settings`]): server, port, login, sender, recipients and
//!   `MailWhen`; the password lives in the keyring.
//! - [`Mailer`] sends an [`Alert`] as a plain-text mail (lettre). The connection is always
//!   encrypted and the server's certificate checked against the system's CAs: STARTTLS is
//!   required (a server that does not offer it is refused, never spoken to in plain text),
//!   and port 465 speaks TLS from the first byte (SMTPS).
//! - [`daily_report`] writes the day's report from the klanten's [`KlantStatus`];
//!   [`DailyReport`] says whether it is due (its time has passed today and it was not sent
//!   today) and remembers that it was sent, in a file beside the history, so the app and
//!   `kluis run-due` send it once between them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use jiff::civil::Date;
use jiff::Zoned;
use kluis_core::{History, Secret};
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use kluis_profiles::secrets::{off_thread, SecretKind, SecretStore, APP};
use kluis_profiles::status::{klant_statuses, KlantStatus};
use kluis_profiles::turn::take_report_turn;
use kluis_profiles::{Language, ProfileError, ProfileResult, ProfileStore};

use crate::alerts::{Alert, Notifier};
use crate::mail_settings::{self, invalid, mailbox, MailSettings, MailWhen};
use crate::report_texts::{Attention, ReportWords};

/// The port where TLS starts before SMTP does (RFC 8314).
const SMTPS_PORT: u16 = 465;
/// A server that does not answer within this is given up on (the next failure tries again).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Sends mail through the office's server.
#[derive(Clone)]
pub struct Mailer {
    settings: MailSettings,
    password: Option<Secret>,
    /// CAs trusted besides the system's (a test's own CA).
    extra_ca_pem: Option<String>,
}

impl Mailer {
    /// A mailer for `settings`, logging in with `password` when the settings name a user.
    pub fn new(settings: MailSettings, password: Option<Secret>) -> Mailer {
        Mailer {
            settings,
            password,
            extra_ca_pem: None,
        }
    }

    /// Also trusts the CA `ca_pem` (an office's private CA; a test's).
    pub fn trusting(mut self, ca_pem: Option<String>) -> Mailer {
        self.extra_ca_pem = ca_pem;
        self
    }

    /// Sends `alert` to every recipient: its title as the subject, its body as the text.
    pub async fn send(&self, alert: &Alert) -> ProfileResult<()> {
        let s = &self.settings;
        let mut message = Message::builder()
            .from(mailbox(&s.from, "sender")?)
            .subject(format!("[Kluis] {}", alert.title));
        for to in &s.to {
            message = message.to(mailbox(to, "recipient")?);
        }
        let body = format!(
            "{}\n\n-- \nSent by Kluis. Change or stop these e-mails in Kluis: Settings, E-mail.\n",
            alert.body
        );
        let message = message
            .header(ContentType::TEXT_PLAIN)
            .body(body)
            .map_err(|e| invalid(format!("The e-mail could not be written: {e}.")))?;
        self.transport()?
            .send(message)
            .await
            .map_err(|e| self.failed(&e))?;
        Ok(())
    }

    fn transport(&self) -> ProfileResult<AsyncSmtpTransport<Tokio1Executor>> {
        let s = &self.settings;
        let mut tls = TlsParameters::builder(s.server.clone());
        if let Some(pem) = &self.extra_ca_pem {
            let ca = Certificate::from_pem(pem.as_bytes())
                .map_err(|e| invalid(format!("The extra CA certificate is not valid: {e}.")))?;
            tls = tls.add_root_certificate(ca);
        }
        let tls = tls.build_rustls().map_err(|e| self.failed(&e))?;
        let tls = if s.port == SMTPS_PORT {
            Tls::Wrapper(tls)
        } else {
            Tls::Required(tls)
        };
        let mut transport = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&s.server)
            .port(s.port)
            .tls(tls)
            .timeout(Some(TIMEOUT));
        if !s.username.is_empty() {
            let password = self.password.as_ref().ok_or_else(|| {
                ProfileError::Mail(
                    "The mail server's password is not saved. Enter it in Settings, E-mail, or leave the user name empty for a server without a login.".into(),
                )
            })?;
            transport = transport.credentials(Credentials::new(
                s.username.clone(),
                password.expose().to_string(),
            ));
        }
        Ok(transport.build())
    }

    /// What went wrong, and what to look at. lettre's text names the step and the server's
    /// answer — which a careless server makes an echo of the password it refused — so it is
    /// scrubbed here, while this mailer's password is still known to the scrubber (the error
    /// is shown after the mailer is gone).
    fn failed(&self, e: &lettre::transport::smtp::Error) -> ProfileError {
        let hint = if e.is_permanent() {
            "The server refused it: check the user name, password and sender."
        } else if e.is_tls() {
            "The connection could not be encrypted: the server must offer STARTTLS (or TLS on port 465) with a valid certificate."
        } else {
            "Check the server's name and port, and that this computer may reach it."
        };
        let message = format!(
            "The e-mail could not be sent through {}:{} ({e}). {hint}",
            self.settings.server, self.settings.port
        );
        ProfileError::Mail(kluis_private::scrub::scrub(&message).into_owned())
    }
}

impl Notifier for Mailer {
    fn notify<'a>(
        &'a self,
        alert: &'a Alert,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ProfileResult<()>> + Send + 'a>> {
        Box::pin(self.send(alert))
    }
}

/// The office's mail for this process: the password from the keyring when a mailer is made,
/// and the CAs `KLUIS_MAIL_CA_CERT` names (a PEM file: an office's private CA) trusted
/// besides the system's.
#[derive(Clone)]
pub struct OfficeMail {
    secrets: Arc<dyn SecretStore>,
    ca_pem: Option<String>,
}

impl OfficeMail {
    pub fn new(secrets: Arc<dyn SecretStore>) -> OfficeMail {
        let ca_pem = std::env::var_os("KLUIS_MAIL_CA_CERT")
            .and_then(|path| std::fs::read_to_string(path).ok());
        OfficeMail { secrets, ca_pem }
    }

    /// Trusts `ca_pem` instead of `KLUIS_MAIL_CA_CERT`'s (tests).
    pub fn trusting(mut self, ca_pem: Option<String>) -> OfficeMail {
        self.ca_pem = ca_pem;
        self
    }

    /// A mailer for `mail`, with the password the keyring keeps for it (when it names a user).
    pub async fn mailer(&self, mail: &MailSettings) -> ProfileResult<Mailer> {
        let password = match mail.username.is_empty() {
            true => None,
            false => {
                off_thread(self.secrets.clone(), |s| {
                    s.get(APP, SecretKind::MailPassword)
                })
                .await?
            }
        };
        Ok(Mailer::new(mail.clone(), password).trusting(self.ca_pem.clone()))
    }
}

/// Saves `mail` (checked first, the reason said when refused) as the office's e-mail, and
/// `password`, when given, into `secrets`. A login with no password saved now or before is
/// refused.
pub async fn save(
    profiles: &ProfileStore,
    secrets: Arc<dyn SecretStore>,
    mail: MailSettings,
    password: Option<Secret>,
) -> ProfileResult<()> {
    let mut mail = mail.checked()?;
    let password_given = password.is_some();
    if let Some(password) = password {
        off_thread(secrets, move |s| {
            s.set(APP, SecretKind::MailPassword, &password)
        })
        .await?;
    }
    profiles.update_settings(|settings| {
        // (Settings that cannot be read are replaced: their password must be entered again.)
        let saved_before = (mail_settings::of(settings).ok().flatten())
            .is_some_and(|m| m.password_saved);
        mail.password_saved = password_given || saved_before;
        if !mail.username.is_empty() && !mail.password_saved {
            return Err(invalid(
                "Enter the mail server's password, or leave the user name empty for a server without a login.",
            ));
        }
        mail_settings::put(settings, Some(&mail))
    })?;
    Ok(())
}

/// No more e-mail: the settings and the saved password are removed.
pub async fn remove(profiles: &ProfileStore, secrets: Arc<dyn SecretStore>) -> ProfileResult<()> {
    off_thread(secrets, |s| s.delete(APP, SecretKind::MailPassword)).await?;
    profiles.update_settings(|settings| mail_settings::put(settings, None))?;
    Ok(())
}

/// "Send test", in `language`.
pub fn test_mail(language: Language) -> Alert {
    ReportWords(language).test_mail().into()
}

/// The day's report of `statuses` in `language`: the klanten that need attention (a failure
/// since their last verified backup, overdue, planned and never backed up, kept backups that
/// verification found damaged, or a last backup that a copy target does not hold yet) first,
/// with the reason, then the others with their last verified backup.
pub fn daily_report(
    statuses: &[KlantStatus],
    tz: &jiff::tz::TimeZone,
    language: Language,
) -> Alert {
    let words = ReportWords(language);
    let when = |ms: i64| {
        jiff::Timestamp::from_millisecond(ms)
            .map(|t| {
                t.to_zoned(tz.clone())
                    .strftime("%Y-%m-%d %H:%M")
                    .to_string()
            })
            .unwrap_or_default()
    };
    // Another PC of the office's backup, when newer than this PC's own, is the klant's last.
    let last = |k: &KlantStatus| match (&k.office_backup, k.last_success_ms) {
        (Some(b), _) => words.last_by_office(&when(b.at_ms), &b.by),
        (None, Some(ms)) => words.last_verified(&when(ms)),
        (None, None) => words.never().into(),
    };
    let needs_attention = |k: &KlantStatus| {
        k.overdue
            || k.last_error.is_some()
            || (k.plan.is_some() && k.last_success_ms.is_none() && k.office_backup.is_none())
            || k.damaged > 0
            || k.copies.as_ref().is_some_and(|c| c.made < c.wanted)
            || k.restore_test_failed.is_some()
            || k.restore_test_overdue
    };
    let (attention, fine): (Vec<&KlantStatus>, Vec<&KlantStatus>) =
        statuses.iter().partition(|k| needs_attention(k));
    let mut body = String::new();
    if !attention.is_empty() {
        body.push_str(words.needs_attention());
        body.push('\n');
        for k in &attention {
            let failed = k.last_error.as_ref().map(|e| (e, when(e.at_ms)));
            let why = match &failed {
                Some((e, at)) => Attention::Failed {
                    when: at,
                    code: e.code,
                    message: e.message.lines().next().unwrap_or_default(),
                },
                None if k.overdue => Attention::Overdue,
                None if k.damaged > 0 => Attention::Damaged(k.damaged),
                None => match &k.copies {
                    Some(copies) if copies.made < copies.wanted => Attention::NotCopied {
                        made: copies.made,
                        wanted: copies.wanted,
                        why: (copies.last_error.as_deref()).and_then(|e| e.lines().next()),
                    },
                    _ => match (&k.restore_test_failed, k.restore_test_overdue) {
                        (Some(what), _) => Attention::RestoreTestFailed(what.lines().next()),
                        (None, true) => Attention::RestoreTestOverdue,
                        (None, false) => Attention::NotYet,
                    },
                },
            };
            body.push_str(&format!(
                "- {}: {}; {}\n",
                k.name,
                words.reason(why),
                last(k)
            ));
        }
        body.push('\n');
    }
    if !fine.is_empty() {
        body.push_str(words.backed_up());
        body.push('\n');
        for k in &fine {
            let size = (k.last_success_bytes)
                .map(|b| format!(", {}", words.size(b)))
                .unwrap_or_default();
            body.push_str(&format!("- {}: {}{size}\n", k.name, last(k)));
        }
    }
    if statuses.is_empty() {
        body.push_str(words.no_klanten());
        body.push('\n');
    }
    Alert {
        title: words.title(attention.len(), statuses.len()),
        body: body.trim_end().to_string(),
    }
}

/// When the daily report was last sent, kept in a small file (the local date it was sent on)
/// that every Kluis process on this computer shares.
pub struct DailyReport {
    mark: PathBuf,
}

impl DailyReport {
    /// The record kept beside the history database `history_db`.
    pub fn beside(history_db: &std::path::Path) -> DailyReport {
        DailyReport {
            mark: history_db.with_file_name("daily-report.sent"),
        }
    }

    /// The local date the report was last sent, if ever (an unreadable record counts as
    /// never: one report too many beats one too few).
    pub fn last_sent(&self) -> Option<Date> {
        std::fs::read_to_string(&self.mark)
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Whether `settings` ask for a daily report and it is due at `now`: its time has passed
    /// today and none was sent today. A computer that was off at that time sends it at the
    /// first chance later that day; a day it was off all day has no report.
    pub fn due(&self, settings: Option<&MailSettings>, now: &Zoned) -> bool {
        let Some(MailWhen::Daily { at }) = settings.map(|s| &s.when) else {
            return false;
        };
        now.time() >= at.time() && self.last_sent().is_none_or(|sent| sent < now.date())
    }

    /// Sends the report of `profiles`' klanten through `office`'s server when their e-mail
    /// settings ask for one and it is due at `now`, once between every Kluis process here:
    /// under the report's turn, looking again once it is had (another process may have just
    /// sent it). Whether it sent.
    pub async fn send_if_due(
        &self,
        office: &OfficeMail,
        profiles: &ProfileStore,
        history: &History,
        now: &Zoned,
    ) -> ProfileResult<bool> {
        let settings = profiles.settings();
        let mail = mail_settings::of(&settings)?;
        let Some(mail) = mail.filter(|mail| self.due(Some(mail), now)) else {
            return Ok(false);
        };
        let Some(_turn) = take_report_turn(history)? else {
            return Ok(false);
        };
        if !self.due(Some(&mail), now) {
            return Ok(false);
        }
        let statuses = klant_statuses(profiles, history, now)?;
        let report = daily_report(&statuses, now.time_zone(), settings.language());
        office.mailer(&mail).await?.send(&report).await?;
        self.sent(now)?;
        Ok(true)
    }

    /// Records that the report for `now`'s date was sent.
    pub fn sent(&self, now: &Zoned) -> ProfileResult<()> {
        let io = |e| kluis_core::Error::io(format!("write {}", self.mark.display()), e);
        kluis_private::files::write_atomic(&self.mark, now.date().to_string().as_bytes())
            .map_err(io)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail_settings::tests::settings;
    use kluis_core::plan::ClockTime;
    use kluis_core::Code;
    use kluis_profiles::status::LastError;

    fn at(text: &str) -> Zoned {
        let tz = jiff::tz::TimeZone::get("Europe/Amsterdam").unwrap();
        text.parse::<jiff::civil::DateTime>()
            .unwrap()
            .to_zoned(tz)
            .unwrap()
    }

    /// The daily report is due once its time has passed, once a day: not before 08:00, at
    /// 08:00 or later that day until it is sent, and again the next day.
    #[test]
    fn the_daily_report_is_due_once_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let report = DailyReport::beside(&dir.path().join("history.sqlite3"));
        let daily = settings(MailWhen::Daily {
            at: ClockTime::parse("08:00").unwrap(),
        });
        assert!(!report.due(Some(&daily), &at("2026-11-23T07:59")));
        assert!(
            report.due(Some(&daily), &at("2026-11-23T13:10")),
            "a late start still sends"
        );
        report.sent(&at("2026-11-23T13:10")).unwrap();
        assert!(
            !report.due(Some(&daily), &at("2026-11-23T23:59")),
            "once a day"
        );
        assert!(report.due(Some(&daily), &at("2026-11-24T08:00")));
        assert!(
            !report.due(
                Some(&settings(MailWhen::EachFailure)),
                &at("2026-11-24T09:00")
            ),
            "not asked for"
        );
        assert!(
            !report.due(None, &at("2026-11-24T09:00")),
            "no e-mail set up"
        );
    }

    fn klant(name: &str) -> KlantStatus {
        KlantStatus {
            profile_id: name.into(),
            name: name.into(),
            plan: None,
            last_success_ms: Some(at("2026-11-23T02:01").timestamp().as_millisecond()),
            last_success_bytes: Some(14_200_000),
            last_success_path: Some("/backups/secret-path.zip".into()),
            last_error: None,
            running: false,
            next_due_ms: None,
            overdue: false,
            days: Vec::new(),
            damaged: 0,
            copies: None,
            restore_test_failed: None,
            restore_test_overdue: false,
            office_backup: None,
        }
    }

    /// One klant backed up and six that need attention, each for another reason.
    fn seven_klanten() -> [KlantStatus; 7] {
        let failed = KlantStatus {
            last_error: Some(LastError {
                at_ms: at("2026-11-23T02:05").timestamp().as_millisecond(),
                code: Code::Network,
                message: "The service could not be reached.\nDetails".into(),
            }),
            ..klant("Bakker B.V.")
        };
        let overdue = KlantStatus {
            overdue: true,
            last_success_ms: None,
            ..klant("Visser")
        };
        let damaged = KlantStatus {
            damaged: 2,
            ..klant("De Vries")
        };
        let uncopied = KlantStatus {
            copies: Some(kluis_profiles::Copies {
                made: 0,
                wanted: 1,
                last_error: Some("NAS: the folder is not there".into()),
            }),
            ..klant("Smit")
        };
        let untested = KlantStatus {
            restore_test_failed: Some("report.pdf: its CRC-32 does not match".into()),
            ..klant("Mulder")
        };
        let late_test = KlantStatus {
            restore_test_overdue: true,
            ..klant("Bos")
        };
        [
            klant("Jansen"),
            failed,
            overdue,
            damaged,
            uncopied,
            untested,
            late_test,
        ]
    }

    /// The report puts klanten needing attention first with their reason, then the others
    /// with their last backup and size, and never a file's path.
    #[test]
    fn the_report_puts_attention_first() {
        let tz = jiff::tz::TimeZone::get("Europe/Amsterdam").unwrap();
        let report = daily_report(&seven_klanten(), &tz, Language::En);
        assert_eq!(report.title, "Daily report: 6 of 7 klanten need attention");
        assert_eq!(
            report.body,
            "Needs attention:\n\
             - Bakker B.V.: failed 2026-11-23 02:05: The service could not be reached. (network); last verified backup 2026-11-23 02:01\n\
             - Visser: overdue for its plan; never backed up\n\
             - De Vries: 2 kept backups missing, changed or unreadable (see `kluis verify`); last verified backup 2026-11-23 02:01\n\
             - Smit: its last backup is not on its copy target yet (NAS: the folder is not there); last verified backup 2026-11-23 02:01\n\
             - Mulder: its last restore test failed (report.pdf: its CRC-32 does not match); last verified backup 2026-11-23 02:01\n\
             - Bos: its monthly restore test is overdue; last verified backup 2026-11-23 02:01\n\n\
             Backed up:\n\
             - Jansen: last verified backup 2026-11-23 02:01, 14.2 MB"
        );
        assert_eq!(
            daily_report(&[klant("Jansen")], &tz, Language::En).title,
            "Daily report: every klant backed up (1)"
        );
    }

    /// In Dutch, each reason as the window says it: a failure by the UI's title for its code,
    /// then Kluis's message; sizes with a decimal comma; "1 of n" in the singular.
    #[test]
    fn the_report_in_dutch() {
        let tz = jiff::tz::TimeZone::get("Europe/Amsterdam").unwrap();
        let report = daily_report(&seven_klanten(), &tz, Language::Nl);
        assert_eq!(
            report.title,
            "Dagrapport: 6 van de 7 klanten vragen aandacht"
        );
        assert_eq!(
            report.body,
            "Vraagt aandacht:\n\
             - Bakker B.V.: mislukt 2026-11-23 02:05: Geen verbinding (The service could not be reached); laatste gecontroleerde back-up 2026-11-23 02:01\n\
             - Visser: te laat voor het plan; nog nooit een back-up\n\
             - De Vries: 2 bewaarde back-ups ontbreken, zijn gewijzigd of onleesbaar (zie `kluis verify`); laatste gecontroleerde back-up 2026-11-23 02:01\n\
             - Smit: de laatste back-up staat nog niet op de kopieplek (NAS: the folder is not there); laatste gecontroleerde back-up 2026-11-23 02:01\n\
             - Mulder: de laatste terugzettest is mislukt (report.pdf: its CRC-32 does not match); laatste gecontroleerde back-up 2026-11-23 02:01\n\
             - Bos: de maandelijkse terugzettest is te laat; laatste gecontroleerde back-up 2026-11-23 02:01\n\n\
             Back-up in orde:\n\
             - Jansen: laatste gecontroleerde back-up 2026-11-23 02:01, 14,2 MB"
        );
        let [jansen, bakker, ..] = seven_klanten();
        assert_eq!(
            daily_report(&[jansen.clone(), bakker], &tz, Language::Nl).title,
            "Dagrapport: 1 van de 2 klanten vraagt aandacht"
        );
        assert_eq!(
            daily_report(&[jansen], &tz, Language::Nl).title,
            "Dagrapport: elke klant heeft een back-up (1)"
        );
        assert_eq!(
            daily_report(&[], &tz, Language::Nl).body,
            "Er staan nog geen klanten in Kluis."
        );
        assert_eq!(test_mail(Language::Nl).title, "Test-e-mail");
    }

    /// A planned klant another PC of the office backed up (and this one never did) is backed
    /// up, and the report says when and by which PC.
    #[test]
    fn a_backup_by_another_pc_of_the_office_counts() {
        let tz = jiff::tz::TimeZone::get("Europe/Amsterdam").unwrap();
        let daily = kluis_core::plan::Schedule::Daily {
            at: kluis_core::plan::ClockTime::parse("02:00").unwrap(),
        };
        let elsewhere = KlantStatus {
            plan: Some(
                kluis_core::plan::Plan::new(daily, at("2026-11-01T12:00").timestamp()).unwrap(),
            ),
            last_success_ms: None,
            last_success_bytes: None,
            office_backup: Some(kluis_core::office_backups::OfficeBackup {
                at_ms: at("2026-11-23T02:04").timestamp().as_millisecond(),
                by: "RECEPTIE".into(),
            }),
            ..klant("Jansen")
        };
        let report = daily_report(&[elsewhere], &tz, Language::En);
        assert_eq!(report.title, "Daily report: every klant backed up (1)");
        assert_eq!(
            report.body,
            "Backed up:\n- Jansen: last backed up 2026-11-23 02:04 by RECEPTIE (another PC of the office)"
        );
    }
}
