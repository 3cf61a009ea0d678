//! The one error type of kluis-profiles. Each has a stable [`ProfileError::code`]; the app
//! shows them as its own codes (`not_found`, `keyring`), the CLI as configuration errors
//! (exit 2). Messages say what to do and never hold a secret.

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The profile (or its secrets) is not there.
    #[error("{0}")]
    NotFound(String),
    /// The OS keyring, or the secrets folder standing in for it, could not be used.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    Secrets(String),
    /// The desktop notification could not be shown (no desktop session, no notification
    /// service).
    #[error("{0}")]
    Notify(String),
    /// An e-mail could not be sent (the server, the login, the connection).
    #[error("{}", kluis_private::scrub::scrub(.0))]
    Mail(String),
    /// A file could not be read or written, or a value is not valid.
    #[error(transparent)]
    Core(#[from] kluis_core::Error),
}

impl ProfileError {
    /// A stable name to branch on.
    pub fn code(&self) -> &'static str {
        match self {
            ProfileError::NotFound(_) => "not_found",
            ProfileError::Secrets(_) => "keyring",
            ProfileError::Notify(_) => "config",
            ProfileError::Mail(_) => "mail",
            ProfileError::Core(e) => e.code().as_str(),
        }
    }

    /// As kluis-core's error (for the CLI's exit codes and the engine): a missing profile or
    /// an unusable keyring is a configuration problem the user fixes.
    pub fn into_core(self) -> kluis_core::Error {
        match self {
            ProfileError::Core(e) => e,
            other => kluis_core::Error::Config(other.to_string()),
        }
    }
}

pub type ProfileResult<T> = Result<T, ProfileError>;
