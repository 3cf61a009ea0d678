//! The desktop logic's one error type. It crosses to the UI as `{code, message}` (and, for a
//! certificate failure, what the server sent); the codes are kluis-core's plus a few of the
//! app's own.
//! Every message is scrubbed of live secrets when shown, like kluis-core's.

#[derive(Debug, Clone, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Core(#[from] kluis_core::Error),
    /// The OS keyring could not be used.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    Keyring(String),
    /// A profile, job or history entry that does not exist (any more).
    #[error("{}", kluis_private::scrub::scrub(.0))]
    NotFound(String),
    /// An e-mail could not be sent.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    Mail(String),
    /// The request does not fit the current state (e.g. saving a job that is not staged).
    #[error("{}", kluis_private::scrub::scrub(.0))]
    InvalidState(String),
    /// A newer Kluis could not be downloaded, verified or started.
    #[error("{}", kluis_private::scrub::scrub(.0))]
    Update(String),
}

/// The app's own codes, beside kluis-core's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum AppOnlyCode {
    Keyring,
    NotFound,
    InvalidState,
    Mail,
    Update,
}

/// Every code the UI may receive: kluis-core's or the app's own (in TypeScript, a union of
/// their names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(untagged)]
pub enum AppCode {
    Core(kluis_core::Code),
    App(AppOnlyCode),
}

impl AppCode {
    pub fn as_str(self) -> &'static str {
        match self {
            AppCode::Core(code) => code.as_str(),
            AppCode::App(AppOnlyCode::Keyring) => "keyring",
            AppCode::App(AppOnlyCode::NotFound) => "not_found",
            AppCode::App(AppOnlyCode::InvalidState) => "invalid_state",
            AppCode::App(AppOnlyCode::Mail) => "mail",
            AppCode::App(AppOnlyCode::Update) => "update",
        }
    }
}

kluis_core::stable_names!(AppCode);

impl From<kluis_profiles::ProfileError> for AppError {
    fn from(e: kluis_profiles::ProfileError) -> Self {
        use kluis_profiles::ProfileError;
        match e {
            ProfileError::NotFound(message) => AppError::NotFound(message),
            ProfileError::Secrets(message) => AppError::Keyring(message),
            ProfileError::Core(e) => AppError::Core(e),
            ProfileError::Mail(message) => AppError::Mail(message),
            notify @ ProfileError::Notify(_) => AppError::Core(notify.into_core()),
        }
    }
}

impl AppError {
    pub fn code(&self) -> AppCode {
        match self {
            AppError::Core(e) => AppCode::Core(e.code()),
            AppError::Keyring(_) => AppCode::App(AppOnlyCode::Keyring),
            AppError::NotFound(_) => AppCode::App(AppOnlyCode::NotFound),
            AppError::InvalidState(_) => AppCode::App(AppOnlyCode::InvalidState),
            AppError::Mail(_) => AppCode::App(AppOnlyCode::Mail),
            AppError::Update(_) => AppCode::App(AppOnlyCode::Update),
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
    /// As [`ErrorPayload`]: the one shape the UI receives.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ErrorPayload::from(self).serialize(serializer)
    }
}

/// The shape of every error the UI receives.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct ErrorPayload {
    pub code: AppCode,
    pub message: String,
    /// For `certificate`: what the server sent, shown in the UI's language to compare.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub presented: Option<kluis_core::presented::Presented>,
}

impl From<&AppError> for ErrorPayload {
    fn from(e: &AppError) -> Self {
        let presented = match e {
            AppError::Core(kluis_core::Error::Certificate { presented, .. }) => {
                presented.as_deref().cloned()
            }
            _ => None,
        };
        ErrorPayload {
            code: e.code(),
            message: e.to_string(),
            presented,
        }
    }
}

pub type AppResult<T> = Result<T, AppError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The UI receives every code, the core's and the app's own, as a plain name.
    #[test]
    fn codes_cross_as_plain_names() {
        let core = AppError::Core(kluis_core::Error::Config("x".into()));
        let app = AppError::NotFound("x".into());
        assert_eq!(serde_json::to_value(core.code()).unwrap(), "config");
        assert_eq!(serde_json::to_value(app.code()).unwrap(), "not_found");
        assert_eq!(serde_json::to_value(&app).unwrap()["code"], "not_found");
        assert_eq!(app.code().to_string(), "not_found");
    }

    /// A certificate failure carries what the server sent to the UI; other errors do not.
    #[test]
    fn a_certificate_failure_crosses_with_what_the_server_sent() {
        let presented = kluis_core::presented::Presented {
            subject: "CN=service.example".into(),
            issuer: "CN=Proxy CA".into(),
            sha256: "AA:BB".into(),
            top: None,
        };
        let error = AppError::Core(kluis_core::Error::Certificate {
            message: "not trusted".into(),
            presented: Some(Box::new(presented)),
        });
        let sent = serde_json::to_value(&error).unwrap();
        assert_eq!(sent["code"], "certificate");
        assert_eq!(sent["presented"]["issuer"], "CN=Proxy CA");
        let other = serde_json::to_value(AppError::NotFound("x".into())).unwrap();
        assert!(other.get("presented").is_none(), "{other}");
    }
}
