//! The desktop logic's one error type. It crosses to the UI as `{code, message}`; the codes
//! are kluis-core's plus a few of the app's own.
//! Every message is scrubbed of live secrets when shown, like kluis-core's.

use serde::ser::SerializeStruct;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Core(#[from] kluis_core::Error),
    /// The OS keyring could not be used.
    #[error("{}", kluis_https::scrub::scrub(.0))]
    Keyring(String),
    /// A profile, job or history entry that does not exist (any more).
    #[error("{}", kluis_https::scrub::scrub(.0))]
    NotFound(String),
    /// The request does not fit the current state (e.g. saving a job that is not staged).
    #[error("{}", kluis_https::scrub::scrub(.0))]
    InvalidState(String),
}

impl AppError {
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Core(e) => e.code(),
            AppError::Keyring(_) => "keyring",
            AppError::NotFound(_) => "not_found",
            AppError::InvalidState(_) => "invalid_state",
        }
    }
}

impl AppError {
    /// As kluis-core's error, for the engine (which keeps what the app could not do, e.g. a
    /// profile it could not connect, as a reason).
    pub fn into_core(self) -> kluis_core::Error {
        match self {
            AppError::Core(error) => error,
            other => kluis_core::Error::Config(other.to_string()),
        }
    }
}

impl serde::Serialize for AppError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("AppError", 2)?;
        s.serialize_field("code", self.code())?;
        s.serialize_field("message", &self.to_string())?;
        s.end()
    }
}

/// The shape of every error the UI receives.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct ErrorPayload {
    pub code: String,
    pub message: String,
}

impl From<&AppError> for ErrorPayload {
    fn from(e: &AppError) -> Self {
        ErrorPayload {
            code: e.code().into(),
            message: e.to_string(),
        }
    }
}

pub type AppResult<T> = Result<T, AppError>;
