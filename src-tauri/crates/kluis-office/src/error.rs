//! [`OfficeError`]: what can go wrong between this PC and the office hub, each with a stable
//! code the CLI and the app branch on and a message that says what to do. No message quotes
//! a key or an answer's body: the hub is a server like any other, and may echo what it got.

/// The crate's result.
pub type OfficeResult<T> = Result<T, OfficeError>;

#[derive(Debug, thiserror::Error)]
pub enum OfficeError {
    /// The hub's address, a PC name or a key is not one Kluis can use.
    #[error("{0}")]
    Input(String),
    /// The hub could not be reached in time (the network, the hub down, too slow).
    #[error("The office hub at {hub} did not answer ({why}). Kluis goes on without it: a klant may be backed up by two PCs until it is back.")]
    Unreachable { hub: String, why: String },
    /// The hub refused this PC's key (revoked, mistyped, or not a PC's).
    #[error("The office hub refused this PC's key ({code}): ask a colleague for a new join code, or the hub's operator for a PC key, and join again (kluis office join).")]
    Refused { code: String },
    /// The hub answered something else than its API says (a status or a body).
    #[error("The office hub answered what Kluis did not expect ({0}).")]
    Unexpected(String),
}

impl OfficeError {
    /// A stable code for the UI and scripts.
    pub fn code(&self) -> &'static str {
        match self {
            OfficeError::Input(_) => "OFFICE_INPUT",
            OfficeError::Unreachable { .. } => "OFFICE_HUB_UNREACHABLE",
            OfficeError::Refused { .. } => "OFFICE_HUB_REFUSED",
            OfficeError::Unexpected(_) => "OFFICE_HUB_UNEXPECTED",
        }
    }
}
