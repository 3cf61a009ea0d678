//! Telling the person at the computer: a desktop notification when unattended backups fail —
//! one summary when many fail together, not one per klant — and when klanten become overdue.
//! The app and the CLI both send them through [`DesktopNotifier`] (notify-rust: D-Bus's
//! `org.freedesktop.Notifications` on Linux, the notification centre on macOS and Windows),
//! so they read the same; [`FailureBatch`] gathers the app's failures into one summary.
//!
//! An alert names klanten and the reason's code and message (already free of secrets: errors
//! never carry one); never a path, a URL or a key.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kluis_core::Code;
use kluis_profiles::Language;

use kluis_profiles::monitor::Ran;
use kluis_profiles::status::KlantStatus;
use kluis_profiles::unattended::AfterSave;
use kluis_profiles::{ProfileError, ProfileResult};

use crate::alert_texts::{Among, Words};

/// How many klanten a summary names before it says "and N more".
const NAMED: usize = 5;

/// Failures this close together are told in one summary (Backup all's klanten fail within
/// seconds of each other when, say, the office's internet is down).
pub const GATHER_FOR: Duration = Duration::from_secs(30);

/// A notification's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub title: String,
    pub body: String,
}

/// One klant's failed unattended backup, its backup's copy that could not be made, or its
/// backup that did not pass a restore test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub klant: String,
    pub code: Code,
    pub message: String,
    pub step: FailedStep,
}

/// What failed of a klant's backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailedStep {
    /// The backup itself.
    Backup,
    /// Its copy to this copy target (the backup itself is saved).
    Copy { target: String },
    /// Its restore test (the backup is saved, but does not restore whole, or could not be
    /// tested): as serious as a failed backup, since it may be the one that is needed.
    RestoreTest,
}

impl Failed {
    /// Klant `klant`'s backup that ended with `error`; none for a cancel or a stop (which
    /// say nothing about the klant's backups), as for its monitor.
    pub fn of(klant: &str, error: &kluis_core::Error) -> Option<Failed> {
        match Ran::failed(error)? {
            Ran::Failed { code, message } => Some(Failed {
                klant: klant.to_string(),
                code,
                message,
                step: FailedStep::Backup,
            }),
            Ran::Saved { .. } | Ran::Test => None,
        }
    }

    /// Klant `klant`'s saved backup that could not be copied to copy target `target`.
    pub fn copy(klant: &str, target: &str, error: &kluis_core::Error) -> Failed {
        Failed {
            klant: klant.to_string(),
            code: error.code(),
            message: error.to_string(),
            step: FailedStep::Copy {
                target: target.to_string(),
            },
        }
    }

    /// What of the steps after klant `klant`'s save is told like a failed backup: a copy that
    /// could not be made, a restore test that failed or could not run.
    pub fn after_save(klant: &str, step: &AfterSave) -> Option<Failed> {
        match step {
            AfterSave::CopyFailed { target, error } => Some(Failed::copy(klant, target, error)),
            AfterSave::RestoreTested(test) if !test.record.passed => Some(Failed::restore_test(
                klant,
                (test.record.detail.as_deref()).unwrap_or("an entry did not restore"),
            )),
            AfterSave::RestoreTestFailed(error) => {
                Some(Failed::restore_test(klant, &error.to_string()))
            }
            _ => None,
        }
    }

    /// Klant `klant`'s restore test that failed: `what` did not restore (or why the test
    /// could not run).
    pub fn restore_test(klant: &str, what: &str) -> Failed {
        Failed {
            klant: klant.to_string(),
            code: Code::BackupsDamaged,
            message: format!("The restore test failed: {what}"),
            step: FailedStep::RestoreTest,
        }
    }
}

impl Alert {
    /// What `failures` say together, in `language`: the one klant and its reason, or how many
    /// failed and which. None for none.
    pub fn failed(failures: &[Failed], language: Language) -> Option<Alert> {
        let words = Words(language);
        match failures {
            [] => None,
            [one] => Some(Alert {
                title: match &one.step {
                    FailedStep::Backup => words.backup_failed(&one.klant),
                    FailedStep::Copy { target } => words.not_copied(&one.klant, target),
                    FailedStep::RestoreTest => words.restore_test_failed(&one.klant),
                },
                body: words.reason(one.code, &one.message),
            }),
            many => Some(Alert {
                title: words.many_failed(
                    many.len(),
                    many.iter().all(|f| f.step == FailedStep::Backup),
                ),
                body: named(
                    &words,
                    many.iter().map(|f| {
                        let what = match &f.step {
                            FailedStep::Backup => Among::Failed(f.code),
                            FailedStep::Copy { target } => Among::NotCopied(target),
                            FailedStep::RestoreTest => Among::RestoreTest,
                        };
                        words.one_of_many(&f.klant, what)
                    }),
                ),
            }),
        }
    }

    /// Klanten that became overdue for their plan (no verified backup since a slot well past).
    pub fn overdue(klanten: &[String], language: Language) -> Option<Alert> {
        let words = Words(language);
        match klanten {
            [] => None,
            [one] => Some(words.overdue_one(one).into()),
            many => Some(Alert {
                title: words.overdue_many(many.len()),
                body: named(&words, many.iter().cloned()),
            }),
        }
    }

    /// "Send test".
    pub fn test(language: Language) -> Alert {
        Words(language).test().into()
    }

    /// The tray's Backup all could not start, for `reason`.
    pub fn backup_all_not_started(reason: &str, language: Language) -> Alert {
        Words(language).backup_all_not_started(reason).into()
    }

    /// Closing the window left Kluis running in the tray: where it went, and how to end it.
    pub fn still_running(language: Language) -> Alert {
        Words(language).still_running(true).into()
    }

    /// The setup of Kluis `version`, started by itself, did not install it.
    pub fn update_not_installed(version: &str, language: Language) -> Alert {
        Words(language).update_not_installed(version).into()
    }

    /// `kluis-tray` could not start (`reason`): the plans run only while the window is open.
    pub fn background_failed(reason: &str, language: Language) -> Alert {
        Words(language).background_failed(reason).into()
    }

    /// Closing the window left Kluis running, on a desktop that shows no tray icons (stock
    /// GNOME without its extension): how to find it again.
    pub fn still_running_without_tray(language: Language) -> Alert {
        Words(language).still_running(false).into()
    }
}

/// An alert from its words: (title, body).
impl<T: Into<String>, B: Into<String>> From<(T, B)> for Alert {
    fn from((title, body): (T, B)) -> Alert {
        Alert {
            title: title.into(),
            body: body.into(),
        }
    }
}

/// "a, b, c, d, e and 3 more".
fn named(words: &Words, names: impl ExactSizeIterator<Item = String>) -> String {
    let total = names.len();
    let shown: Vec<String> = names.take(NAMED).collect();
    words.and_more(&shown, total - shown.len())
}

/// Where alerts go: the desktop ([`DesktopNotifier`]) or, in tests, a recorder.
pub trait Notifier: Send + Sync {
    fn notify<'a>(
        &'a self,
        alert: &'a Alert,
    ) -> Pin<Box<dyn Future<Output = ProfileResult<()>> + Send + 'a>>;
}

/// The desktop's notifications (notify-rust).
#[derive(Debug, Clone, Copy, Default)]
pub struct DesktopNotifier;

impl Notifier for DesktopNotifier {
    fn notify<'a>(
        &'a self,
        alert: &'a Alert,
    ) -> Pin<Box<dyn Future<Output = ProfileResult<()>> + Send + 'a>> {
        Box::pin(async move {
            let mut notification = notify_rust::Notification::new();
            notification
                .appname("Kluis")
                .summary(&alert.title)
                .body(&alert.body);
            show(notification).await.map_err(|e| {
                ProfileError::Notify(format!(
                    "The desktop notification could not be shown ({e}). Is a desktop session running?"
                ))
            })
        })
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
async fn show(n: notify_rust::Notification) -> Result<(), notify_rust::error::Error> {
    n.show_async().await.map(drop)
}

/// macOS and Windows show it synchronously: off the async threads.
#[cfg(not(all(unix, not(target_os = "macos"))))]
async fn show(n: notify_rust::Notification) -> Result<(), String> {
    #[cfg_attr(not(windows), allow(unused_mut))]
    let mut n = n;
    tokio::task::spawn_blocking(move || {
        // Windows: under Kluis's own name and icon once registered, else as PowerShell's.
        #[cfg(windows)]
        if let Some(id) = crate::app_identity::registered() {
            n.app_id(id);
        }
        n.show().map(drop).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Which klanten became overdue since it last looked: each is told once, until a verified
/// backup ends its lateness (then a new lateness is told again).
#[derive(Debug, Default)]
pub struct OverdueWatch {
    told: HashSet<String>,
}

impl OverdueWatch {
    /// The names of the klanten in `statuses` overdue now and not told yet.
    pub fn newly_overdue(&mut self, statuses: &[KlantStatus]) -> Vec<String> {
        self.told
            .retain(|id| statuses.iter().any(|k| &k.profile_id == id && k.overdue));
        statuses
            .iter()
            .filter(|k| k.overdue && self.told.insert(k.profile_id.clone()))
            .map(|k| k.name.clone())
            .collect()
    }
}

/// The language alerts are told in, as it is when one is told (the settings' `language`).
pub type Speaking = Arc<dyn Fn() -> Language + Send + Sync>;

/// Gathers failures for [`GATHER_FOR`] after the first, then tells them in one alert.
pub struct FailureBatch {
    pending: Mutex<Vec<Failed>>,
    notifier: Arc<dyn Notifier>,
    gather_for: Duration,
    language: Speaking,
}

impl FailureBatch {
    /// Failures told by `notifier` in `language`, gathered for `gather_for`.
    pub fn new(notifier: Arc<dyn Notifier>, gather_for: Duration, language: Speaking) -> Arc<Self> {
        Arc::new(FailureBatch {
            pending: Mutex::new(Vec::new()),
            notifier,
            gather_for,
            language,
        })
    }

    /// Where its alerts go (for alerts told at once, such as overdue klanten).
    pub fn notifier(&self) -> &dyn Notifier {
        self.notifier.as_ref()
    }

    /// Adds `failed`; the first of a batch sends the summary once the gathering time is over.
    /// (Needs a tokio runtime; the alert is sent on its own task.)
    pub fn add(self: &Arc<Self>, failed: Failed) {
        let first = {
            let mut pending = self.pending.lock().unwrap();
            pending.push(failed);
            pending.len() == 1
        };
        if first {
            let batch = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(batch.gather_for).await;
                let failures = std::mem::take(&mut *batch.pending.lock().unwrap());
                if let Some(alert) = Alert::failed(&failures, (batch.language)()) {
                    if let Err(e) = batch.notifier.notify(&alert).await {
                        tracing::warn!(code = %e.code(), "a failure could not be notified");
                    }
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(klant: &str, code: Code) -> Failed {
        Failed {
            step: FailedStep::Backup,
            klant: klant.into(),
            code,
            message: "The service could not be reached.\nDetails: connect refused".into(),
        }
    }

    /// Records what it was asked to show.
    #[derive(Default)]
    pub struct Recorder(pub Mutex<Vec<Alert>>);

    impl Notifier for Recorder {
        fn notify<'a>(
            &'a self,
            alert: &'a Alert,
        ) -> Pin<Box<dyn Future<Output = ProfileResult<()>> + Send + 'a>> {
            self.0.lock().unwrap().push(alert.clone());
            Box::pin(async { Ok(()) })
        }
    }

    /// One failure names its klant and the first line of its reason; many are counted and
    /// named (five, then "and N more"); none says nothing.
    #[test]
    fn failures_are_said_once() {
        assert_eq!(Alert::failed(&[], Language::En), None);
        let one = Alert::failed(&[failed("Bakker B.V.", Code::Network)], Language::En).unwrap();
        assert_eq!(one.title, "Backup of Bakker B.V. failed");
        assert_eq!(one.body, "The service could not be reached.");
        let many: Vec<Failed> = (1..=7)
            .map(|i| failed(&format!("Klant {i}"), Code::ServiceError))
            .collect();
        let summary = Alert::failed(&many, Language::En).unwrap();
        assert_eq!(summary.title, "7 backups failed");
        assert_eq!(
            summary.body,
            "Klant 1 (service_error), Klant 2 (service_error), Klant 3 (service_error), \
             Klant 4 (service_error), Klant 5 (service_error) and 2 more"
        );
        assert_eq!(
            Alert::overdue(&["A".into(), "B".into()], Language::En)
                .unwrap()
                .title,
            "2 klanten are overdue"
        );
    }

    /// In Dutch (the window's language) an alert says what the UI says: the failure by the
    /// title the UI gives its code, the rest in the UI's words.
    #[test]
    fn failures_are_said_in_dutch() {
        let one = Alert::failed(&[failed("Bakker B.V.", Code::Network)], Language::Nl).unwrap();
        assert_eq!(one.title, "Back-up van Bakker B.V. mislukt");
        assert_eq!(
            one.body,
            "Geen verbinding. Details: The service could not be reached."
        );
        let copy = Failed::copy("Visser", "NAS", &kluis_core::Error::Config("gone".into()));
        let many: Vec<Failed> = (1..=6)
            .map(|i| failed(&format!("Klant {i}"), Code::ServiceError))
            .chain([copy])
            .collect();
        let summary = Alert::failed(&many, Language::Nl).unwrap();
        assert_eq!(summary.title, "7 back-ups vragen aandacht");
        assert_eq!(
            summary.body,
            "Klant 1 (De dienst meldde een fout), Klant 2 (De dienst meldde een fout), \
             Klant 3 (De dienst meldde een fout), Klant 4 (De dienst meldde een fout), \
             Klant 5 (De dienst meldde een fout) en nog 2"
        );
        let everywhere = Failed::copy(
            "Visser",
            kluis_profiles::unattended::EVERY_COPY_TARGET,
            &kluis_core::Error::Config("gone".into()),
        );
        let alert = Alert::failed(&[everywhere], Language::Nl).unwrap();
        assert_eq!(
            alert.title,
            "Back-up van Visser niet gekopieerd naar alle kopieplekken"
        );
        let late = Alert::overdue(&["A".into()], Language::Nl).unwrap();
        assert_eq!(late.title, "A is te laat");
        assert_eq!(Alert::still_running(Language::Nl).title, "Kluis draait nog");
    }

    /// A copy that could not be made is told as that, not as a failed backup: the backup is
    /// saved.
    #[test]
    fn a_missed_copy_is_not_a_failed_backup() {
        let away =
            kluis_core::Error::Config("Copy target \"NAS\": the folder is not there.".into());
        let copy = Failed::copy("Bakker B.V.", "NAS", &away);
        let one = Alert::failed(std::slice::from_ref(&copy), Language::En).unwrap();
        assert_eq!(one.title, "Backup of Bakker B.V. not copied to NAS");
        let both = Alert::failed(&[failed("Visser", Code::Network), copy], Language::En).unwrap();
        assert_eq!(both.title, "2 backups need attention");
        assert_eq!(
            both.body,
            "Visser (network), Bakker B.V. (not copied to NAS)"
        );
    }

    /// A failed restore test is told like a failed backup, as what it is: the backup is saved
    /// but does not restore whole.
    #[test]
    fn a_failed_restore_test_is_told() {
        let test = Failed::restore_test("Bakker B.V.", "report.pdf: its CRC-32 does not match");
        let one = Alert::failed(std::slice::from_ref(&test), Language::En).unwrap();
        assert_eq!(one.title, "Backup of Bakker B.V. failed its restore test");
        assert_eq!(
            one.body,
            "The restore test failed: report.pdf: its CRC-32 does not match"
        );
        let both = Alert::failed(&[test, failed("Visser", Code::Network)], Language::En).unwrap();
        assert_eq!(both.title, "2 backups need attention");
        assert_eq!(
            both.body,
            "Bakker B.V. (restore test failed), Visser (network)"
        );
    }

    /// An overdue klant is told once; again only after it was back on time in between.
    #[test]
    fn overdue_is_told_once_per_lateness() {
        let status = |id: &str, overdue: bool| KlantStatus {
            profile_id: id.into(),
            name: format!("Klant {id}"),
            plan: None,
            last_success_ms: None,
            last_success_bytes: None,
            last_success_path: None,
            last_error: None,
            running: false,
            next_due_ms: None,
            overdue,
            days: Vec::new(),
            damaged: 0,
            copies: None,
            restore_test_failed: None,
            restore_test_overdue: false,
            office_backup: None,
        };
        let mut watch = OverdueWatch::default();
        assert_eq!(
            watch.newly_overdue(&[status("a", true), status("b", false)]),
            ["Klant a"]
        );
        assert!(watch
            .newly_overdue(&[status("a", true), status("b", false)])
            .is_empty());
        assert_eq!(
            watch.newly_overdue(&[status("a", true), status("b", true)]),
            ["Klant b"]
        );
        assert!(watch.newly_overdue(&[status("a", false)]).is_empty());
        assert_eq!(watch.newly_overdue(&[status("a", true)]), ["Klant a"]);
    }

    /// Failures within the gathering time make one summary; one after it starts a new one.
    #[tokio::test(start_paused = true)]
    async fn failures_close_together_make_one_alert() {
        let recorder = Arc::new(Recorder::default());
        let batch = FailureBatch::new(recorder.clone(), GATHER_FOR, Arc::new(|| Language::En));
        batch.add(failed("A", Code::Network));
        tokio::time::sleep(Duration::from_secs(10)).await;
        batch.add(failed("B", Code::Network));
        batch.add(failed("C", Code::AuthFailed));
        tokio::time::sleep(Duration::from_secs(25)).await;
        let told = recorder.0.lock().unwrap().clone();
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].title, "3 backups failed");
        batch.add(failed("D", Code::Network));
        tokio::time::sleep(GATHER_FOR + Duration::from_secs(1)).await;
        let told = recorder.0.lock().unwrap().clone();
        assert_eq!(told.len(), 2);
        assert_eq!(told[1].title, "Backup of D failed");
    }
}
