//! kluis-reporting: what Kluis tells the office, from the app and the CLI alike — a failure or
//! an overdue klant on the desktop and by e-mail, the daily report, and the auditor's report of
//! a period. It reads the klanten, their standing and the history from kluis-profiles and
//! kluis-core and writes nothing there but the daily report's "sent today" mark.
//!
//! Parts and data flow:
//! - [`alerts`]: an [`Alert`] (a title and a text) and who shows one ([`Notifier`]): the
//!   desktop ([`DesktopNotifier`]); [`FailureBatch`] gathers failures that come close together
//!   into one summary, and [`OverdueWatch`] tells each klant that became overdue once; each
//!   alert in the window's language (`alert_texts`: English, or Dutch as the UI says it).
//!   On Windows, [`app_identity`] registers the name and icon the notifications show.
//! - [`mail`]: e-mail through the office's SMTP server ([`Mailer`], [`OfficeMail`] with the
//!   password from the keyring), and the [`daily_report`] of every klant (in the window's
//!   language, `report_texts`), sent once a day
//!   ([`DailyReport`]) by whichever Kluis process is running, as [`mail_settings`] say
//!   ([`MailSettings`]: Settings → *E-mail*, the settings file's `mail` section, which
//!   kluis-profiles keeps without reading it).
//! - [`outbox`]: where an alert goes, as the settings say: the desktop and/or the office's
//!   e-mail ([`Outbox`]).
//! - [`report`]: a period's backups per klant for auditors ([`Report`], CSV), and
//!   [`printable`]: the same as one printable HTML page.
//!
//! Errors are kluis-profiles' [`kluis_profiles::ProfileError`]: what fails here (a setting, the
//! keyring, the mail server) is what fails there.

mod alert_texts;
pub mod alerts;
#[cfg(windows)]
pub mod app_identity;
pub mod mail;
pub mod mail_settings;
pub mod outbox;
pub mod printable;
pub mod report;
mod report_texts;

pub use alerts::{
    Alert, DesktopNotifier, Failed, FailedStep, FailureBatch, Notifier, OverdueWatch,
};
pub use mail::{daily_report, DailyReport, Mailer, OfficeMail};
pub use mail_settings::{MailSettings, MailWhen};
pub use outbox::Outbox;
pub use report::{parse_day, report, Report};
