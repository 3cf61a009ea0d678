//! The alerts' words in the window's two languages ([`Language`]): English, and Dutch as the
//! UI says it (formal *u*, *te laat*, *terugzettest*; each error code by the title the UI
//! shows for it). A Dutch alert names a failure by that title, then Kluis's own message (in
//! English, as the window shows it behind *Details*) for a reader away from the window.

use kluis_core::Code;
use kluis_profiles::Language;

/// The words an alert is made of, in one language.
pub(crate) struct Words(pub Language);

impl Words {
    pub fn backup_failed(&self, klant: &str) -> String {
        match self.0 {
            Language::En => format!("Backup of {klant} failed"),
            Language::Nl => format!("Back-up van {klant} mislukt"),
        }
    }

    pub fn not_copied(&self, klant: &str, target: &str) -> String {
        match self.0 {
            Language::En => format!("Backup of {klant} not copied to {target}"),
            Language::Nl => format!(
                "Back-up van {klant} niet gekopieerd naar {}",
                dutch_target(target)
            ),
        }
    }

    pub fn restore_test_failed(&self, klant: &str) -> String {
        match self.0 {
            Language::En => format!("Backup of {klant} failed its restore test"),
            Language::Nl => format!("Terugzettest van de back-up van {klant} mislukt"),
        }
    }

    /// One failure's reason: Kluis's message in English; in Dutch the UI's title for its code.
    pub fn reason(&self, code: Code, message: &str) -> String {
        match self.0 {
            Language::En => first_line(message),
            Language::Nl => format!("{}. Details: {}", dutch_title(code), first_line(message)),
        }
    }

    pub fn many_failed(&self, n: usize, all_backups: bool) -> String {
        match (self.0, all_backups) {
            (Language::En, true) => format!("{n} backups failed"),
            (Language::En, false) => format!("{n} backups need attention"),
            (Language::Nl, true) => format!("{n} back-ups mislukt"),
            (Language::Nl, false) => format!("{n} back-ups vragen aandacht"),
        }
    }

    /// A klant among many, with what went wrong.
    pub fn one_of_many(&self, klant: &str, what: Among<'_>) -> String {
        match (self.0, what) {
            (Language::En, Among::Failed(code)) => format!("{klant} ({code})"),
            (Language::Nl, Among::Failed(code)) => format!("{klant} ({})", dutch_title(code)),
            (Language::En, Among::NotCopied(to)) => format!("{klant} (not copied to {to})"),
            (Language::Nl, Among::NotCopied(to)) => {
                format!("{klant} (niet gekopieerd naar {})", dutch_target(to))
            }
            (Language::En, Among::RestoreTest) => format!("{klant} (restore test failed)"),
            (Language::Nl, Among::RestoreTest) => format!("{klant} (terugzettest mislukt)"),
        }
    }

    pub fn overdue_one(&self, klant: &str) -> (String, String) {
        match self.0 {
            Language::En => (
                format!("{klant} is overdue"),
                "Its plan's backup did not happen. Open Kluis to see why.".into(),
            ),
            Language::Nl => (
                format!("{klant} is te laat"),
                "De back-up van het plan is niet gemaakt. Open Kluis om te zien waarom.".into(),
            ),
        }
    }

    pub fn overdue_many(&self, n: usize) -> String {
        match self.0 {
            Language::En => format!("{n} klanten are overdue"),
            Language::Nl => format!("{n} klanten zijn te laat"),
        }
    }

    /// "a, b, c, d, e and 3 more".
    pub fn and_more(&self, shown: &[String], more: usize) -> String {
        match (self.0, more) {
            (_, 0) => shown.join(", "),
            (Language::En, more) => format!("{} and {more} more", shown.join(", ")),
            (Language::Nl, more) => format!("{} en nog {more}", shown.join(", ")),
        }
    }

    pub fn test(&self) -> (&'static str, &'static str) {
        match self.0 {
            Language::En => (
                "Kluis test notification",
                "Notifications work: Kluis tells you here when an unattended backup fails.",
            ),
            Language::Nl => (
                "Testmelding van Kluis",
                "Meldingen werken: hier meldt Kluis het als een back-up waar niemand naar kijkt mislukt.",
            ),
        }
    }

    pub fn backup_all_not_started(&self, reason: &str) -> (&'static str, String) {
        let reason = first_line(reason);
        match self.0 {
            Language::En => ("Backup all could not start", reason),
            Language::Nl => (
                "De back-up van alle klanten kon niet starten",
                format!("Open Kluis om te zien waarom. Details: {reason}"),
            ),
        }
    }

    pub fn still_running(&self, tray_shown: bool) -> (&'static str, &'static str) {
        match (self.0, tray_shown) {
            (Language::En, true) => ("Kluis is still running", "Your plans keep running in the background. Open Kluis or quit it from its icon in the tray, or start Kluis again to bring back its window."),
            (Language::En, false) => ("Kluis is still running", "Your plans keep running in the background. This desktop shows no tray icon: open Kluis from your applications menu to see it again."),
            (Language::Nl, true) => ("Kluis draait nog", "Uw plannen lopen op de achtergrond door. Open Kluis of sluit het af met het pictogram in het systeemvak, of start Kluis opnieuw om het venster terug te halen."),
            (Language::Nl, false) => ("Kluis draait nog", "Uw plannen lopen op de achtergrond door. Dit bureaublad toont geen pictogram in het systeemvak: open Kluis via het programmamenu om het weer te zien."),
        }
    }

    pub fn update_not_installed(&self, version: &str) -> (String, &'static str) {
        match self.0 {
            Language::En => (format!("Kluis {version} was not installed"), "Its setup stopped, most likely because a Kluis program was still running (a scheduled backup, the office relay). Kluis tries again tomorrow; or install it now in Settings → Updates."),
            Language::Nl => (format!("Kluis {version} is niet geïnstalleerd"), "De installatie is gestopt, waarschijnlijk omdat er nog een programma van Kluis draaide (een geplande back-up, de relay van het kantoor). Kluis probeert het morgen opnieuw; of installeer de update nu via Instellingen → Updates."),
        }
    }

    pub fn background_failed(&self, reason: &str) -> (&'static str, String) {
        let reason = first_line(reason);
        match self.0 {
            Language::En => (
                "Kluis could not keep your plans in the background",
                format!("{reason} Open Kluis: while its window is open, the plans run there."),
            ),
            Language::Nl => (
                "Kluis kan uw plannen niet op de achtergrond laten lopen",
                format!("Open Kluis: zolang het venster open is, lopen de plannen daar. Details: {reason}"),
            ),
        }
    }
}

/// What went wrong for a klant among many.
#[derive(Clone, Copy)]
pub(crate) enum Among<'a> {
    Failed(Code),
    NotCopied(&'a str),
    RestoreTest,
}

/// A copy target's name, or all of them in Dutch.
fn dutch_target(target: &str) -> &str {
    match target {
        kluis_profiles::unattended::EVERY_COPY_TARGET => "alle kopieplekken",
        name => name,
    }
}

/// The UI's Dutch title for an error code (ui/src/texts/nl.ts, `err…`).
pub(crate) fn dutch_title(code: Code) -> &'static str {
    match code {
        Code::AuthFailed => "Aanmelden mislukt",
        Code::PermissionDenied => "Niet toegestaan",
        Code::CallbackTimeout => "De dienst meldde zich niet",
        Code::ServiceError => "De dienst meldde een fout",
        Code::Network => "Geen verbinding",
        Code::FileHostUnreachable => "De bestandsserver van de back-up is onbereikbaar",
        Code::Certificate => "Certificaat niet vertrouwd",
        Code::DownloadFailed => "Downloaden mislukt",
        Code::BadResponse => "Onverwacht antwoord",
        Code::Config => "Controleer de instellingen",
        Code::Io => "Bestand kon niet worden geschreven",
        Code::Cancelled => "Geannuleerd",
        Code::Interrupted => "Gestopt",
        Code::NotResumable => "Kon niet worden afgemaakt",
        Code::BackupsDamaged => "Back-ups niet betrouwbaar",
        Code::PartlyRestored => "Niet alles is teruggezet",
    }
}

pub(crate) fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each code's Dutch title is the one the UI shows for it (ui/src/texts/nl.ts, `err…`):
    /// a title changed there and not here fails.
    #[test]
    fn the_dutch_titles_are_the_ui_s() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ui/src/texts/nl.ts");
        let nl = std::fs::read_to_string(path).unwrap();
        for code in Code::ALL {
            let key: String = (code.as_str().split('_'))
                .map(|word| word[..1].to_uppercase() + &word[1..])
                .collect();
            let line = format!("  err{key}: \"{}\",", dutch_title(code));
            assert!(nl.lines().any(|l| l == line), "nl.ts has {line}");
        }
    }
}
