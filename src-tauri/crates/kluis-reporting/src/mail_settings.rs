//! Settings → *E-mail*: the office's SMTP server, its login (the password lives in the keyring,
//! [`SecretKind::MailPassword`](kluis_profiles::SecretKind)), the sender, the recipients and
//! [`MailWhen`]; checked when saved ([`MailSettings::checked`]).
//!
//! They are kept in the shared settings file's `mail` section, which kluis-profiles' store
//! keeps as data it does not interpret ([`Settings::mail`]): this module alone reads it
//! ([`of`]) and writes it ([`put`]), so the settings file needs no knowledge of e-mail and
//! this crate stays above kluis-profiles with no circle between them.

use kluis_core::plan::ClockTime;
use kluis_profiles::{ProfileError, ProfileResult, Settings};
use lettre::message::Mailbox;
use serde::{Deserialize, Serialize};

/// The submission port (RFC 6409), with STARTTLS.
pub const DEFAULT_PORT: u16 = 587;
/// Recipients one report goes to at most: a distribution list is the office's server's job.
const MAX_RECIPIENTS: usize = 10;

/// When mail is sent.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MailWhen {
    /// Each failure summary (failures close together in one mail) and each klant that
    /// becomes overdue.
    #[default]
    EachFailure,
    /// One report a day, at this local time (or at the first chance after it), of every
    /// klant: what needs attention first, then what was backed up.
    Daily {
        #[cfg_attr(feature = "ts", ts(type = "string"))]
        at: ClockTime,
    },
}

/// The office's SMTP server and who hears from Kluis.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailSettings {
    /// The server's host name, such as `smtp.office.nl`.
    pub server: String,
    #[serde(default = "default_port")]
    pub port: u16,
    /// The login; empty for a server that takes mail without one.
    #[serde(default)]
    pub username: String,
    /// Whether a password is in the keyring (the password itself never leaves it).
    #[serde(default)]
    pub password_saved: bool,
    /// The sender, `kluis@office.nl` or `Kluis <kluis@office.nl>`.
    pub from: String,
    pub to: Vec<String>,
    #[serde(default)]
    pub when: MailWhen,
}

fn default_port() -> u16 {
    DEFAULT_PORT
}

/// A setting refused, with `why` said to the user.
pub(crate) fn invalid(why: impl Into<String>) -> ProfileError {
    ProfileError::Core(kluis_core::Error::Config(why.into()))
}

/// What an e-mail section that is not e-mail settings (a settings file edited by hand) is
/// said as: never its content, which may be anything.
pub const UNREADABLE: &str = "The e-mail settings in Kluis's settings file cannot be read (the file was changed by hand?), so no e-mail is sent: set E-mail again in Settings (the password stays in the keyring).";

/// The e-mail settings `settings` keep, if any; [`UNREADABLE`] when the section is not e-mail
/// settings — said wherever mail would have gone (the failure alert, the daily report, the
/// app's Settings), not taken for "no e-mail" in silence. Saving E-mail anew replaces it.
pub fn of(settings: &Settings) -> ProfileResult<Option<MailSettings>> {
    let Some(section) = settings.mail.clone() else {
        return Ok(None);
    };
    serde_json::from_value(section).map_err(|_| invalid(UNREADABLE))
}

/// Keeps `mail` as `settings`' e-mail settings (`None`: no e-mail).
pub fn put(settings: &mut Settings, mail: Option<&MailSettings>) -> ProfileResult<()> {
    settings.mail = match mail {
        Some(mail) => Some(serde_json::to_value(mail).map_err(|e| invalid(e.to_string()))?),
        None => None,
    };
    Ok(())
}

/// `text` as a mailbox, or what is wrong with it (`what` names the field).
pub fn mailbox(text: &str, what: &str) -> ProfileResult<Mailbox> {
    text.trim().parse::<Mailbox>().map_err(|_| {
        invalid(format!(
            "The {what} \"{}\" is not an e-mail address; write it as name@example.nl.",
            text.trim().chars().take(80).collect::<String>()
        ))
    })
}

impl MailSettings {
    /// These settings tidied (spaces trimmed, recipients split at commas), or the first thing
    /// wrong with them, said so the user can mend it.
    pub fn checked(mut self) -> ProfileResult<MailSettings> {
        self.server = self.server.trim().to_string();
        let host_ok = !self.server.is_empty()
            && self.server.len() <= 253
            && self
                .server
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
        if !host_ok {
            return Err(invalid(
                "Give the mail server's host name only, such as smtp.office.nl (no smtp://, no port: the port has its own field).",
            ));
        }
        if self.port == 0 {
            return Err(invalid(
                "The mail server's port is a number from 1 to 65535; 587 is usual.",
            ));
        }
        self.username = self.username.trim().to_string();
        self.from = mailbox(&self.from, "sender")?.to_string();
        let to: Vec<String> = (self.to.iter())
            .flat_map(|list| list.split([',', ';']))
            .map(str::trim)
            .filter(|to| !to.is_empty())
            .map(str::to_string)
            .collect();
        if to.is_empty() || to.len() > MAX_RECIPIENTS {
            return Err(invalid(format!(
                "Name 1 to {MAX_RECIPIENTS} recipients, separated by commas."
            )));
        }
        for address in &to {
            mailbox(address, "recipient")?;
        }
        self.to = to;
        Ok(self)
    }

    /// Whether each failure is mailed (rather than a daily report).
    pub fn each_failure(&self) -> bool {
        self.when == MailWhen::EachFailure
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An office's settings as typed (spaces, two recipients in one field), sent `when`.
    pub(crate) fn settings(when: MailWhen) -> MailSettings {
        MailSettings {
            server: " smtp.office.nl ".into(),
            port: DEFAULT_PORT,
            username: "kluis".into(),
            password_saved: false,
            from: "Kluis <kluis@office.nl>".into(),
            to: vec!["beheer@office.nl; ict@office.nl".into()],
            when,
        }
    }

    /// Settings are tidied when saved (recipients split, spaces gone) and refused with the
    /// reason when the server is a URL, an address is not one, or nobody would receive them.
    #[test]
    fn settings_are_checked_with_reasons() {
        let ok = settings(MailWhen::EachFailure).checked().unwrap();
        assert_eq!(ok.server, "smtp.office.nl");
        assert_eq!(ok.to, ["beheer@office.nl", "ict@office.nl"]);
        let refused = |s: MailSettings| s.checked().unwrap_err().to_string();
        assert!(refused(MailSettings {
            server: "smtp://smtp.office.nl".into(),
            ..settings(MailWhen::EachFailure)
        })
        .contains("host name only"));
        assert!(refused(MailSettings {
            from: "not an address".into(),
            ..settings(MailWhen::EachFailure)
        })
        .contains("sender \"not an address\""));
        assert!(refused(MailSettings {
            to: vec![" , ".into()],
            ..settings(MailWhen::EachFailure)
        })
        .contains("recipients"));
        assert!(refused(MailSettings {
            to: vec!["a@b.nl, nobody".into()],
            ..settings(MailWhen::EachFailure)
        })
        .contains("recipient \"nobody\""));
    }

    /// The settings file keeps the `mail` section in the form Kluis always wrote it, so a
    /// file from before this module read it still holds its e-mail settings, and they are
    /// written back the same.
    #[test]
    fn the_settings_file_keeps_its_mail_section_as_before() {
        let file = r#"{"save_folder":null,"mail":{"server":"smtp.office.nl","port":587,"username":"kluis","password_saved":true,"from":"kluis@office.nl","to":["beheer@office.nl"],"when":{"kind":"daily","at":"07:30"}}}"#;
        let settings: Settings = serde_json::from_str(file).unwrap();
        let mail = of(&settings).unwrap().expect("the section read");
        assert_eq!(mail.server, "smtp.office.nl");
        assert!(mail.password_saved);
        assert_eq!(
            mail.when,
            MailWhen::Daily {
                at: ClockTime::parse("07:30").unwrap()
            }
        );
        let mut again = Settings::default();
        put(&mut again, Some(&mail)).unwrap();
        assert_eq!(again.mail, settings.mail, "written back as it was read");
        put(&mut again, None).unwrap();
        let json = serde_json::to_value(&again).unwrap();
        assert!(json.get("mail").is_none(), "no e-mail, no section: {json}");
    }

    /// A section that is not e-mail settings (a file edited by hand) is said to be unreadable
    /// — without its content, without a panic — and the settings around it are read as usual.
    #[test]
    fn a_mail_section_that_is_not_mail_settings_is_said() {
        for section in [
            r#""smtp-secret""#,
            r#"{"server":"smtp-secret"}"#,
            r#"{"to":"x"}"#,
            "[]",
        ] {
            let file = format!(r#"{{"save_folder":"/backups","mail":{section}}}"#);
            let settings: Settings = serde_json::from_str(&file).unwrap();
            let said = of(&settings).unwrap_err().to_string();
            assert!(
                said.contains("cannot be read") && !said.contains("secret"),
                "{said}"
            );
            assert_eq!(settings.save_folder.as_deref(), Some("/backups"));
        }
        assert_eq!(
            of(&Settings::default()).unwrap(),
            None,
            "no section: no e-mail"
        );
    }
}
