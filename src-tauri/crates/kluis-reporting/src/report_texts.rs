//! The daily report's and the test e-mail's words in the window's two languages, as
//! `alert_texts` has the alerts': a Dutch report names a failure by the UI's title for its
//! code, then Kluis's own message (in English, as the window shows it behind *Details*).

use kluis_core::Code;
use kluis_profiles::Language;

use crate::alert_texts::dutch_title;

/// The report's words in one language.
pub(crate) struct ReportWords(pub Language);

impl ReportWords {
    pub fn title(&self, attention: usize, total: usize) -> String {
        match (self.0, attention) {
            (Language::En, 0) => format!("Daily report: every klant backed up ({total})"),
            (Language::En, n) => format!("Daily report: {n} of {total} klanten need attention"),
            (Language::Nl, 0) => format!("Dagrapport: elke klant heeft een back-up ({total})"),
            (Language::Nl, 1) => format!("Dagrapport: 1 van de {total} klanten vraagt aandacht"),
            (Language::Nl, n) => format!("Dagrapport: {n} van de {total} klanten vragen aandacht"),
        }
    }

    pub fn needs_attention(&self) -> &'static str {
        match self.0 {
            Language::En => "Needs attention:",
            Language::Nl => "Vraagt aandacht:",
        }
    }

    pub fn backed_up(&self) -> &'static str {
        match self.0 {
            Language::En => "Backed up:",
            Language::Nl => "Back-up in orde:",
        }
    }

    pub fn no_klanten(&self) -> &'static str {
        match self.0 {
            Language::En => "There are no klanten in Kluis yet.",
            Language::Nl => "Er staan nog geen klanten in Kluis.",
        }
    }

    /// The klant's last backup: another PC's (`by`), this one's verified, or none.
    pub fn last_by_office(&self, when: &str, by: &str) -> String {
        match self.0 {
            Language::En => format!("last backed up {when} by {by} (another PC of the office)"),
            Language::Nl => {
                format!("laatste back-up {when} door {by} (een andere pc van het kantoor)")
            }
        }
    }

    pub fn last_verified(&self, when: &str) -> String {
        match self.0 {
            Language::En => format!("last verified backup {when}"),
            Language::Nl => format!("laatste gecontroleerde back-up {when}"),
        }
    }

    pub fn never(&self) -> &'static str {
        match self.0 {
            Language::En => "never backed up",
            Language::Nl => "nog nooit een back-up",
        }
    }

    /// A backup's size in MB, one decimal, as the language writes it.
    pub fn size(&self, bytes: u64) -> String {
        let mb = format!("{:.1}", bytes as f64 / 1e6);
        match self.0 {
            Language::En => format!("{mb} MB"),
            Language::Nl => format!("{} MB", mb.replace('.', ",")),
        }
    }

    /// Why a klant needs attention.
    pub fn reason(&self, why: Attention<'_>) -> String {
        use Attention::*;
        let language = self.0;
        match why {
            Failed {
                when,
                code,
                message,
            } => match language {
                Language::En => format!("failed {when}: {message} ({code})"),
                // (Kluis's message in brackets, without its full stop: "…; laatste" follows.)
                Language::Nl => format!(
                    "mislukt {when}: {} ({})",
                    dutch_title(code),
                    message.trim_end_matches('.')
                ),
            },
            Overdue => match language {
                Language::En => "overdue for its plan".into(),
                Language::Nl => "te laat voor het plan".into(),
            },
            Damaged(n) => match (language, n) {
                (Language::En, 1) => {
                    "1 kept backup missing, changed or unreadable (see `kluis verify`)".into()
                }
                (Language::En, n) => {
                    format!("{n} kept backups missing, changed or unreadable (see `kluis verify`)")
                }
                (Language::Nl, 1) => {
                    "1 bewaarde back-up ontbreekt, is gewijzigd of onleesbaar (zie `kluis verify`)"
                        .into()
                }
                (Language::Nl, n) => format!(
                    "{n} bewaarde back-ups ontbreken, zijn gewijzigd of onleesbaar (zie `kluis verify`)"
                ),
            },
            NotCopied { made, wanted, why } => match (language, wanted) {
                (Language::En, 1) => format!(
                    "its last backup is not on its copy target yet ({})",
                    why.unwrap_or("not tried yet")
                ),
                (Language::En, _) => format!(
                    "its last backup is on {made} of {wanted} copy targets ({})",
                    why.unwrap_or("not tried yet")
                ),
                (Language::Nl, 1) => format!(
                    "de laatste back-up staat nog niet op de kopieplek ({})",
                    why.unwrap_or("nog niet geprobeerd")
                ),
                (Language::Nl, _) => format!(
                    "de laatste back-up staat op {made} van de {wanted} kopieplekken ({})",
                    why.unwrap_or("nog niet geprobeerd")
                ),
            },
            RestoreTestFailed(what) => match language {
                Language::En => format!(
                    "its last restore test failed ({})",
                    what.unwrap_or("see the history")
                ),
                Language::Nl => format!(
                    "de laatste terugzettest is mislukt ({})",
                    what.unwrap_or("zie de geschiedenis")
                ),
            },
            RestoreTestOverdue => match language {
                Language::En => "its monthly restore test is overdue".into(),
                Language::Nl => "de maandelijkse terugzettest is te laat".into(),
            },
            NotYet => match language {
                Language::En => "not backed up yet".into(),
                Language::Nl => "nog geen back-up".into(),
            },
        }
    }

    /// The test e-mail (Settings → *E-mail* → *Send test*, `kluis mail test`).
    pub fn test_mail(&self) -> (&'static str, &'static str) {
        match self.0 {
            Language::En => (
                "Test e-mail",
                "E-mail works: Kluis writes to this address as set in Settings, E-mail.",
            ),
            Language::Nl => (
                "Test-e-mail",
                "E-mail werkt: Kluis schrijft naar dit adres zoals ingesteld in Instellingen, E-mail.",
            ),
        }
    }
}

/// Why a klant needs attention in the daily report, the first that holds.
#[derive(Clone, Copy)]
pub(crate) enum Attention<'a> {
    /// A failure since its last verified backup: when, its code and message's first line.
    Failed {
        when: &'a str,
        code: Code,
        message: &'a str,
    },
    Overdue,
    /// This many kept backups verification found damaged.
    Damaged(u32),
    /// Its last backup is on `made` of `wanted` copy targets; the last copy error, if any.
    NotCopied {
        made: u32,
        wanted: u32,
        why: Option<&'a str>,
    },
    /// Its last restore test failed: what it found, if it said.
    RestoreTestFailed(Option<&'a str>),
    RestoreTestOverdue,
    /// Planned, never backed up.
    NotYet,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One damaged backup and one copy target are said in the singular, more in the plural.
    #[test]
    fn one_and_more() {
        let (en, nl) = (ReportWords(Language::En), ReportWords(Language::Nl));
        let two_targets = Attention::NotCopied {
            made: 1,
            wanted: 2,
            why: None,
        };
        assert_eq!(
            en.reason(Attention::Damaged(1)),
            "1 kept backup missing, changed or unreadable (see `kluis verify`)"
        );
        assert_eq!(
            nl.reason(Attention::Damaged(1)),
            "1 bewaarde back-up ontbreekt, is gewijzigd of onleesbaar (zie `kluis verify`)"
        );
        assert_eq!(
            nl.reason(Attention::Damaged(3)),
            "3 bewaarde back-ups ontbreken, zijn gewijzigd of onleesbaar (zie `kluis verify`)"
        );
        assert_eq!(
            en.reason(two_targets),
            "its last backup is on 1 of 2 copy targets (not tried yet)"
        );
        assert_eq!(
            nl.reason(two_targets),
            "de laatste back-up staat op 1 van de 2 kopieplekken (nog niet geprobeerd)"
        );
    }
}
