//! Settings → *E-mail*, as the shared [`crate::Settings`] keep them: the office's SMTP server,
//! its login (the password lives in the keyring, [`crate::SecretKind::MailPassword`]), the
//! sender, the recipients and [`MailWhen`]; checked when saved ([`MailSettings::checked`]).
//! Sending is kluis-reporting's (`mail`).

use kluis_core::plan::ClockTime;
use lettre::message::Mailbox;
use serde::{Deserialize, Serialize};

use crate::error::{ProfileError, ProfileResult};

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

fn invalid(why: impl Into<String>) -> ProfileError {
    ProfileError::Core(kluis_core::Error::Config(why.into()))
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
mod tests {
    use super::*;

    fn settings(when: MailWhen) -> MailSettings {
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
}
