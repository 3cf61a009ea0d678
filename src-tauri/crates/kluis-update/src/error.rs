//! [`UpdateError`]: why an update could not be checked or taken, said for the user.

/// See the module's text. Each says what the user can do; none carries a secret (an update
/// server is public).
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// The update server could not be reached (or answered an error).
    #[error("The update server {0}")]
    Unreachable(String),
    /// The manifest is not one (not JSON, too large, no version or no build for this
    /// computer).
    #[error("The update server's answer is no update manifest: {0}")]
    NotAManifest(String),
    /// The manifest's signature is not by the publisher's key: nothing is downloaded.
    #[error("The update {version} is not signed with the publisher's key; it is ignored. (A changed or forged update server?)")]
    OtherKey { version: String },
    /// The downloaded build does not match its signature (changed on the way or on the
    /// server): nothing is kept.
    #[error("The downloaded update {version} does not match its signature; it was deleted. Try again later, or ask the publisher.")]
    Tampered { version: String },
    /// The build verifies, but was signed as another version than the manifest announces (or
    /// as none): an older build passed off as newer, to bring back what the newer one mends.
    #[error("The update server announces Kluis {announced}, but the build it offers is signed as {signed}; it was deleted. (A changed update server?)")]
    WrongVersion { announced: String, signed: String },
    /// The build verifies and is of the version announced, but was signed for another file
    /// or platform than this Kluis's (the `.deb` as the Windows setup, IT's per-machine MSI as
    /// the per-user one): it would install something else than this Kluis.
    #[error("The update server offers Kluis {version} as {expected}, but its build was signed as {signed}; it was deleted. (A changed update server, or a build the publisher signed without naming its platform and file — see tests/update/publish.sh.)")]
    WrongBuild {
        version: String,
        expected: String,
        signed: String,
    },
    /// The download was larger than any Kluis build.
    #[error("The update {version} is larger than {mib} MiB; it was not downloaded.")]
    TooLarge { version: String, mib: u64 },
    /// This build has no update server (updates come with its package manager or IT).
    #[error("This Kluis has no update server: it is updated by your package manager or your IT.")]
    NotConfigured,
    /// The publisher's key or manifest address given is not one.
    #[error("{0}")]
    Config(String),
    /// The update could not be written.
    #[error("The update could not be saved: {0}")]
    Io(String),
}

impl UpdateError {
    /// Whether it refuses the build itself (its key, its bytes, what it was signed for, its
    /// size): fetched again, it would be refused again — unlike a server or a disk that failed.
    pub fn refuses_the_build(&self) -> bool {
        matches!(
            self,
            UpdateError::OtherKey { .. }
                | UpdateError::Tampered { .. }
                | UpdateError::WrongVersion { .. }
                | UpdateError::WrongBuild { .. }
                | UpdateError::TooLarge { .. }
        )
    }

    /// A stable name to branch on.
    pub fn code(&self) -> &'static str {
        match self {
            UpdateError::Unreachable(_) => "unreachable",
            UpdateError::NotAManifest(_) => "not_a_manifest",
            UpdateError::OtherKey { .. } => "other_key",
            UpdateError::Tampered { .. } => "tampered",
            UpdateError::WrongVersion { .. } => "wrong_version",
            UpdateError::WrongBuild { .. } => "wrong_build",
            UpdateError::TooLarge { .. } => "too_large",
            UpdateError::NotConfigured => "not_configured",
            UpdateError::Config(_) => "config",
            UpdateError::Io(_) => "io",
        }
    }
}
