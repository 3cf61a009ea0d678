//! The one error type of kluis-core: a stable `code` for the UI and CLI to branch on, and a
//! message that tells the user what to do. Messages never contain secrets: reqwest errors are
//! stripped of their URL (which may carry the api_key or password); response excerpts are cut
//! short, scrubbed of every live secret by value and have every UUID-shaped string masked; and
//! every message is scrubbed once more when it is shown (`Display`, and so the history, the
//! CLI's stderr and `--json`, and the UI's `{code, message}`).

use serde::ser::SerializeStruct;

/// Everything that can go wrong in Kluis's core. (Clone: one failure may answer several
/// callers, as a transport build's does — engine/transports.rs.)
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The service refused the credentials or the session token.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    AuthFailed(String),
    /// The api_key may not use an endpoint.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    PermissionDenied(String),
    /// The service did not call back in time.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    CallbackTimeout(String),
    /// The service answered with an error status.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    ServiceError(String),
    /// The service could not be reached (or a callback transport's server).
    #[error("{}", kluis_private::scrub::scrub(.0))]
    Network(String),
    /// The host serving the backup file could not be reached.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    FileHostUnreachable(String),
    /// A server's TLS certificate is not trusted (a private CA, or TLS inspection); what the
    /// server sent, when it could be seen (the message names it too).
    #[error("{}", kluis_private::scrub::scrub(.message))]
    Certificate {
        message: String,
        presented: Option<Box<crate::presented::Presented>>,
    },
    /// The backup file could not be downloaded or verified.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    DownloadFailed(String),
    /// The service answered something Kluis cannot understand.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    BadResponse(String),
    /// A setting is missing or wrong.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    Config(String),
    /// Reading or writing a local file failed.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    Io(String),
    /// The user cancelled.
    #[error("The backup was cancelled; nothing was saved.")]
    Cancelled,
    /// The program was stopped while the job ran; the job is journalled and will be finished
    /// by `kluis resume` or the app at its next start.
    #[error("Kluis was stopped before the backup was saved. It is kept: `kluis resume` (or opening the Kluis app) finishes it.")]
    Interrupted,
    /// A stopped job cannot be finished (its callback address ended with the program).
    #[error("{}", kluis_private::scrub::scrub(.0))]
    NotResumable(String),
    /// Verification found saved backups missing, changed or unreadable.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    BackupsDamaged(String),
    /// A restore wrote what it could, but left entries out (each named where it was said):
    /// not a whole restore.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    PartlyRestored(String),
}

/// An error's stable code, which the UI, the CLI's exit codes and the history branch on.
/// Serialised (and stored) as its snake_case name, e.g. `auth_failed`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    AuthFailed,
    PermissionDenied,
    CallbackTimeout,
    ServiceError,
    Network,
    FileHostUnreachable,
    Certificate,
    DownloadFailed,
    BadResponse,
    Config,
    Io,
    Cancelled,
    Interrupted,
    NotResumable,
    BackupsDamaged,
    PartlyRestored,
}

impl Code {
    pub const ALL: [Code; 16] = [
        Code::AuthFailed,
        Code::PermissionDenied,
        Code::CallbackTimeout,
        Code::ServiceError,
        Code::Network,
        Code::FileHostUnreachable,
        Code::Certificate,
        Code::DownloadFailed,
        Code::BadResponse,
        Code::Config,
        Code::Io,
        Code::Cancelled,
        Code::Interrupted,
        Code::NotResumable,
        Code::BackupsDamaged,
        Code::PartlyRestored,
    ];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::AuthFailed => "auth_failed",
            Code::PermissionDenied => "permission_denied",
            Code::CallbackTimeout => "callback_timeout",
            Code::ServiceError => "service_error",
            Code::Network => "network",
            Code::FileHostUnreachable => "file_host_unreachable",
            Code::Certificate => "certificate",
            Code::DownloadFailed => "download_failed",
            Code::BadResponse => "bad_response",
            Code::Config => "config",
            Code::Io => "io",
            Code::Cancelled => "cancelled",
            Code::Interrupted => "interrupted",
            Code::NotResumable => "not_resumable",
            Code::BackupsDamaged => "backups_damaged",
            Code::PartlyRestored => "partly_restored",
        }
    }

    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// Whether a whole backup that failed with this code is worth starting again a little
    /// later, unattended: the service, the network or the file host may be back. A refused
    /// key or password, an untrusted certificate, a bad answer or a full disk will fail the
    /// same way again, and a callback timeout has already waited half an hour.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            Code::ServiceError | Code::Network | Code::FileHostUnreachable | Code::DownloadFailed
        )
    }
}

crate::stable_names!(Code);

impl Error {
    /// The stable code.
    pub fn code(&self) -> Code {
        match self {
            Error::AuthFailed(_) => Code::AuthFailed,
            Error::PermissionDenied(_) => Code::PermissionDenied,
            Error::CallbackTimeout(_) => Code::CallbackTimeout,
            Error::ServiceError(_) => Code::ServiceError,
            Error::Network(_) => Code::Network,
            Error::FileHostUnreachable(_) => Code::FileHostUnreachable,
            Error::Certificate { .. } => Code::Certificate,
            Error::DownloadFailed(_) => Code::DownloadFailed,
            Error::BadResponse(_) => Code::BadResponse,
            Error::Config(_) => Code::Config,
            Error::Io(_) => Code::Io,
            Error::Cancelled => Code::Cancelled,
            Error::Interrupted => Code::Interrupted,
            Error::NotResumable(_) => Code::NotResumable,
            Error::BackupsDamaged(_) => Code::BackupsDamaged,
            Error::PartlyRestored(_) => Code::PartlyRestored,
        }
    }

    /// An I/O error about `what` (a path or a description, never a secret).
    pub fn io(what: impl std::fmt::Display, err: std::io::Error) -> Error {
        Error::Io(format!(
            "Could not {what}: {err}. Check that the folder exists and that you may write to it."
        ))
    }

    /// A transport error while talking to `peer`, named for what it is: a certificate that
    /// is not trusted, a file host that cannot be reached, or the service that cannot — each
    /// with the advice that fits it.
    pub(crate) fn unreachable(peer: Peer, err: reqwest::Error) -> Error {
        let timed_out = err.is_timeout();
        let err = err.without_url();
        let untrusted = is_untrusted_certificate(&err);
        let mut detail = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(inner) = source {
            detail.push_str(": ");
            detail.push_str(&inner.to_string());
            source = inner.source();
        }
        let detail = mask_secrets(&detail, 300);
        let whom = match peer {
            Peer::Service => "the service",
            Peer::FileHost => "the file host that serves the backup",
        };
        if untrusted {
            return Error::Certificate {
                message: format!(
                    "The TLS certificate of {whom} is not trusted ({detail}). If it uses a private certificate authority, or your office network inspects TLS, add that authority's certificate to the profile; otherwise do not go on: the connection may be intercepted."
                ),
                presented: None,
            };
        }
        let what = if timed_out {
            "did not answer in time"
        } else {
            "could not be reached"
        };
        match peer {
            Peer::Service => Error::Network(format!(
                "The service {what} ({detail}). Check the internet connection and the base URL, then try again."
            )),
            Peer::FileHost => Error::FileHostUnreachable(format!(
                "The file host that serves the backup {what} ({detail}). The service's download link may have expired or its file server is down; try the backup again later."
            )),
        }
    }
}

/// Which side of a backup a transport error came from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Peer {
    Service,
    FileHost,
}

/// Whether rustls refused the server's certificate, anywhere in `err`'s chain of causes (it
/// comes wrapped in hyper's error and in `io::Error`s, whose `source()` skips what they wrap).
fn is_untrusted_certificate(err: &(dyn std::error::Error + 'static)) -> bool {
    fn rustls_in<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
        if let Some(found) = e.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        let wrapped = e.downcast_ref::<std::io::Error>()?.get_ref()?;
        rustls_in(wrapped)
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cause {
        if matches!(rustls_in(e), Some(rustls::Error::InvalidCertificate(_))) {
            return true;
        }
        cause = e.source();
    }
    false
}

impl serde::Serialize for Error {
    /// `{code, message}`, the shape the UI receives.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Error", 2)?;
        s.serialize_field("code", &self.code())?;
        s.serialize_field("message", &self.to_string())?;
        s.end()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A short, printable excerpt of `text` (at most `max` characters) with every live secret
/// scrubbed by value, control characters dropped and every UUID-shaped run (tokens, api keys,
/// webhook ids look like that) masked.
pub fn mask_secrets(text: &str, max: usize) -> String {
    let cleaned: String = kluis_private::scrub::scrub(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let chars: Vec<char> = cleaned.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if is_uuid_at(&chars, i) {
            out.push_str("«hidden»");
            i += 36;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    if out.chars().count() > max {
        out = out.chars().take(max).collect::<String>() + "…";
    }
    out
}

fn is_uuid_at(chars: &[char], i: usize) -> bool {
    if i + 36 > chars.len() {
        return false;
    }
    chars[i..i + 36].iter().enumerate().all(|(k, c)| match k {
        8 | 13 | 18 | 23 => *c == '-',
        _ => c.is_ascii_hexdigit(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error crosses to the UI and `--json` as `{code, message}`.
    #[test]
    fn serialises_as_code_and_message() {
        let shown = serde_json::to_value(Error::Cancelled).unwrap();
        assert_eq!(shown["code"], "cancelled");
        assert_eq!(shown["message"], Error::Cancelled.to_string());
    }

    /// UUIDs (the shape of every secret the service hands out) never survive into an excerpt.
    #[test]
    fn masks_uuids_and_control_characters() {
        let text = "token 49cfcabd-ae97-47de-a900-76a83082a1cb expired\n\u{1b}[31m";
        let masked = mask_secrets(text, 200);
        assert_eq!(masked, "token «hidden» expired  [31m");
    }

    /// A live password echoed by a server leaves neither the excerpt nor the message, in any
    /// encoding.
    #[test]
    fn scrubs_live_secrets_by_value() {
        let password = crate::Secret::new("Zomer 2026!/ü");
        let query: String =
            url::form_urlencoded::byte_serialize(password.expose().as_bytes()).collect();
        let echoed = format!(
            "<h1>500</h1> GET /authenticate?password={query} and \"{}\"",
            password.expose()
        );
        let error = Error::ServiceError(format!(
            "The service answered 500: \"{}\"",
            mask_secrets(&echoed, 500)
        ));
        for text in [error.to_string(), serde_json::to_string(&error).unwrap()] {
            assert!(!text.contains("Zomer") && !text.contains("2026"), "{text}");
        }
        // Display scrubs too, for a message made without an excerpt.
        let raw = Error::Config(format!("echo {}", password.expose()));
        assert_eq!(raw.to_string(), "echo «hidden»");
    }

    /// Long bodies are cut to the limit.
    #[test]
    fn cuts_long_text() {
        assert_eq!(
            mask_secrets(&"x".repeat(50), 10),
            format!("{}…", "x".repeat(10))
        );
    }

    /// The UI receives `{code, message}`.
    #[test]
    fn serialises_code_and_message() {
        let json = serde_json::to_value(Error::Config("Set the base URL.".into())).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"code": "config", "message": "Set the base URL."})
        );
    }
}
