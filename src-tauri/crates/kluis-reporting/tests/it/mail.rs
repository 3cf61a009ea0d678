//! Kluis's e-mail, received by a real SMTP server on loopback (kluis-sim's `SmtpSink`:
//! mailin's SMTP state machine over tokio, STARTTLS by tokio-rustls, a certificate from a
//! test CA). Nothing of lettre is mocked.

use std::sync::{Arc, Mutex};

use kluis_core::Secret;
use kluis_profiles::{
    MemoryStore, ProfileResult, ProfileStore, SecretKind, SecretStore, Settings, APP,
};
use kluis_reporting::mail_settings;
use kluis_reporting::{Alert, DailyReport, Mailer, Notifier, OfficeMail, Outbox};
use kluis_reporting::{MailSettings, MailWhen};
use kluis_sim::smtp::SmtpSink;

/// Settings that reach `sink`, logging in as its user.
fn settings(sink: &SmtpSink) -> MailSettings {
    MailSettings {
        server: "127.0.0.1".into(),
        port: sink.addr.port(),
        username: kluis_sim::smtp::USER.into(),
        password_saved: true,
        from: "Kluis <kluis@office.test>".into(),
        to: vec!["beheer@office.test, ict@office.test".into()],
        when: MailWhen::EachFailure,
    }
    .checked()
    .unwrap()
}

fn alert() -> Alert {
    Alert {
        title: "2 backups failed".into(),
        body: "Bakker B.V. (network), Visser (service_error)".into(),
    }
}

/// A failure summary reaches every recipient through STARTTLS: the login happened only once
/// the connection was encrypted, and the mail carries the alert as subject and text.
#[tokio::test]
async fn a_failure_is_mailed_through_starttls() {
    let sink = SmtpSink::start(true, "mail-pw-1").await;
    let mailer = Mailer::new(settings(&sink), Some(Secret::new("mail-pw-1")))
        .trusting(Some(sink.ca_pem.clone()));
    mailer.send(&alert()).await.expect("sent");

    let seen = sink.seen();
    assert_eq!(
        seen.logins,
        [("kluis".to_string(), "mail-pw-1".to_string(), true)],
        "one login, over TLS"
    );
    let [mail] = seen.mails.as_slice() else {
        panic!("one mail: {seen:?}")
    };
    assert_eq!(mail.from, "kluis@office.test");
    assert_eq!(mail.to, ["beheer@office.test", "ict@office.test"]);
    assert!(
        mail.data.contains("Subject: [Kluis] 2 backups failed"),
        "{}",
        mail.data
    );
    assert!(
        mail.data
            .contains("Bakker B.V. (network), Visser (service_error)"),
        "{}",
        mail.data
    );
    assert!(
        !mail.data.contains("mail-pw-1"),
        "the password is not in the mail"
    );
}

/// A server that offers no STARTTLS is refused before anything is sent: no login (the password
/// never crosses unencrypted), no mail, and an error that says what the server lacks.
#[tokio::test]
async fn a_server_without_starttls_is_refused() {
    let sink = SmtpSink::start(false, "mail-pw-2").await;
    let mailer = Mailer::new(settings(&sink), Some(Secret::new("mail-pw-2")))
        .trusting(Some(sink.ca_pem.clone()));
    let error = mailer.send(&alert()).await.unwrap_err();
    assert_eq!(error.code(), "mail");
    assert!(error.to_string().contains("STARTTLS"), "{error}");
    let seen = sink.seen();
    assert!(seen.logins.is_empty(), "no login in plain text: {seen:?}");
    assert!(seen.mails.is_empty());
}

/// A wrong password is refused by the server, which echoes it back; the error says to check
/// the login and holds neither password — also once the mailer (and its password) is gone, as
/// when the app shows the error after the send.
#[tokio::test]
async fn a_refused_login_says_what_to_check() {
    let sink = SmtpSink::start(true, "mail-pw-3").await;
    let mailer = Mailer::new(settings(&sink), Some(Secret::new("wrong-pw-3")))
        .trusting(Some(sink.ca_pem.clone()));
    let error = mailer.send(&alert()).await.unwrap_err();
    drop(mailer);
    let text = error.to_string();
    assert!(text.contains("user name, password"), "{text}");
    assert!(
        !text.contains("wrong-pw-3") && !text.contains("mail-pw-3"),
        "{text}"
    );
    assert!(sink.seen().mails.is_empty());
}

/// A certificate no trusted CA signed is refused (the system's CAs do not know the test's).
#[tokio::test]
async fn an_untrusted_certificate_is_refused() {
    let sink = SmtpSink::start(true, "mail-pw-4").await;
    let mailer = Mailer::new(settings(&sink), Some(Secret::new("mail-pw-4")));
    let error = mailer.send(&alert()).await.unwrap_err();
    assert_eq!(error.code(), "mail");
    let seen = sink.seen();
    assert!(seen.logins.is_empty() && seen.mails.is_empty(), "{seen:?}");
}

fn office(sink: &SmtpSink, password: &str) -> OfficeMail {
    let secrets = Arc::new(MemoryStore::default());
    secrets
        .set(APP, SecretKind::MailPassword, &Secret::new(password))
        .unwrap();
    OfficeMail::new(secrets).trusting(Some(sink.ca_pem.clone()))
}

/// The daily report is mailed once a day however often it is looked at (the app every few
/// minutes, `kluis run-due` every 15), with the password from the keyring.
#[tokio::test]
async fn the_daily_report_is_mailed_once() {
    let sink = SmtpSink::start(true, "mail-pw-5").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite3");
    let history = kluis_core::History::open(&db).unwrap();
    let report = DailyReport::beside(&db);
    let mail = MailSettings {
        when: MailWhen::Daily {
            at: kluis_core::plan::ClockTime::parse("00:00").unwrap(),
        },
        ..settings(&sink)
    };
    let office = office(&sink, "mail-pw-5");
    let profiles = ProfileStore::in_memory();
    profiles
        .update_settings(|settings| mail_settings::put(settings, Some(&mail)))
        .unwrap();
    let now = jiff::Zoned::now();
    let sent = report
        .send_if_due(&office, &profiles, &history, &now)
        .await
        .unwrap();
    assert!(sent, "due after 00:00 and never sent");
    let again = report
        .send_if_due(&office, &profiles, &history, &now)
        .await
        .unwrap();
    assert!(!again, "sent today already");
    let mails = sink.seen().mails;
    assert_eq!(mails.len(), 1);
    assert!(
        mails[0].data.contains("Subject: [Kluis] Daily report"),
        "{}",
        mails[0].data
    );
}

/// Records desktop alerts.
#[derive(Default)]
struct Desktop(Mutex<Vec<String>>);

impl Notifier for Desktop {
    fn notify<'a>(
        &'a self,
        alert: &'a Alert,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ProfileResult<()>> + Send + 'a>> {
        self.0.lock().unwrap().push(alert.title.clone());
        Box::pin(async { Ok(()) })
    }
}

/// The outbox follows the settings when it tells: desktop notifications off and e-mail on
/// each failure mails only; e-mail set to a daily report sends no mail for a failure.
#[tokio::test]
async fn the_outbox_follows_the_settings() {
    let sink = SmtpSink::start(true, "mail-pw-6").await;
    let desktop = Arc::new(Desktop::default());
    let mut first = Settings {
        notify_desktop: false,
        ..Settings::default()
    };
    mail_settings::put(&mut first, Some(&settings(&sink))).unwrap();
    let settings = Arc::new(Mutex::new(first));
    let read = settings.clone();
    let outbox = Outbox::new(
        desktop.clone(),
        office(&sink, "mail-pw-6"),
        Arc::new(move || read.lock().unwrap().clone()),
    );
    outbox.notify(&alert()).await.unwrap();
    assert!(desktop.0.lock().unwrap().is_empty());
    assert_eq!(sink.seen().mails.len(), 1);

    {
        let mut settings = settings.lock().unwrap();
        settings.notify_desktop = true;
        let mut mail = mail_settings::of(&settings).unwrap().unwrap();
        mail.when = MailWhen::Daily {
            at: kluis_core::plan::ClockTime::parse("08:00").unwrap(),
        };
        mail_settings::put(&mut settings, Some(&mail)).unwrap();
    }
    outbox.notify(&alert()).await.unwrap();
    assert_eq!(*desktop.0.lock().unwrap(), ["2 backups failed"]);
    assert_eq!(
        sink.seen().mails.len(),
        1,
        "no mail: the daily report tells it"
    );

    // Settings that cannot be read are said where the mail would have gone, not skipped.
    settings.lock().unwrap().mail = Some(serde_json::json!({ "server": 25 }));
    let said = outbox.notify(&alert()).await.unwrap_err().to_string();
    assert!(said.contains("cannot be read"), "{said}");
    assert_eq!(desktop.0.lock().unwrap().len(), 2, "the desktop still told");
}
