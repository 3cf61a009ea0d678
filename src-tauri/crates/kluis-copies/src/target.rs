//! [`CopyTarget`]: a place off this computer where Kluis keeps a second copy of each backup,
//! set once in the settings (the profiles file holds no secret of it) and named by the user.

use serde::{Deserialize, Serialize};

use kluis_core::{Error, Result, Secret};

use crate::s3::S3Place;
use crate::sftp::SftpPlace;

/// A copy target (see the module's text).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyTarget {
    /// Stable: the history records copies by it, so a renamed target keeps its copies.
    pub id: String,
    /// The user's name for it, such as "NAS" or "USB disk".
    pub name: String,
    pub place: Place,
    /// The target's own retention rule for the copies it holds (none: every copy is kept),
    /// e.g. monthly for 7 years while this computer keeps the last 14.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<kluis_core::retention::Retention>,
    /// The place's secret (an S3 secret key, an SFTP password or key passphrase), read from the keyring when the target is used;
    /// never saved with the settings nor sent to the UI.
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub secret: Option<Secret>,
}

/// Where a target's copies go.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Place {
    /// A folder: a mounted NAS share, a USB disk, a Windows UNC path (`\\nas\backups`). Each
    /// klant's copies go in a folder of its own under it.
    Folder { path: String },
    /// S3-compatible object storage: each klant's copies under `prefix/<klant folder>/`.
    S3(S3Place),
    /// A folder on an SFTP server: each klant's copies in a folder of their own under it.
    Sftp(SftpPlace),
}

impl Place {
    /// Whether the place keeps a secret in the keyring (an S3 secret key, an SFTP password or
    /// key passphrase): read when the target is used, removed with it.
    pub fn keeps_secret(&self) -> bool {
        matches!(self, Place::S3(_) | Place::Sftp(_))
    }
}

/// Longest target name: it is shown in lists and messages.
const MAX_NAME: usize = 60;

impl CopyTarget {
    /// A new target named `name` (trimmed) at `place`, with a fresh id; refused, with the
    /// reason, when the name is empty or too long or the place cannot be one.
    pub fn new(name: &str, place: Place) -> Result<CopyTarget> {
        Ok(CopyTarget {
            id: uuid::Uuid::new_v4().to_string(),
            name: CopyTarget::checked_name(name)?,
            place: place.checked()?,
            keep: None,
            secret: None,
        })
    }

    /// `name` trimmed, or why it cannot name a target.
    pub fn checked_name(name: &str) -> Result<String> {
        let name = name.trim();
        let fits = !name.is_empty() && name.chars().count() <= MAX_NAME;
        if !fits || name.chars().any(char::is_control) {
            return Err(Error::Config(format!(
                "Name the copy target in 1 to {MAX_NAME} characters, such as \"NAS\"."
            )));
        }
        Ok(name.to_string())
    }

    /// What it is, for a list: "folder /mnt/nas/kluis, keep 84 monthly".
    pub fn describe(&self) -> String {
        let place = match &self.place {
            Place::Folder { path } => format!("folder {path}"),
            Place::S3(bucket) => bucket.describe(),
            Place::Sftp(server) => server.describe(),
        };
        match &self.keep {
            Some(rule) if !rule.keeps_everything() => format!("{place}, {}", rule.describe()),
            _ => format!("{place}, every copy kept"),
        }
    }
}

impl Place {
    fn checked(self) -> Result<Place> {
        match self {
            Place::Folder { path } => {
                let trimmed = path.trim();
                // A relative folder would depend on where Kluis happens to be started.
                if !std::path::Path::new(trimmed).is_absolute() {
                    return Err(Error::Config(format!(
                        "Give the copy folder as a full path (such as /mnt/nas/kluis or \\\\nas\\backups), not \"{}\".",
                        trimmed.chars().take(80).collect::<String>()
                    )));
                }
                Ok(Place::Folder {
                    path: trimmed.to_string(),
                })
            }
            Place::S3(bucket) => Ok(Place::S3(bucket.checked()?)),
            Place::Sftp(server) => Ok(Place::Sftp(server.checked()?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A target needs a name and a full path; its id is its own.
    #[test]
    fn a_target_is_checked_when_made() {
        let folder = |path: &str| Place::Folder { path: path.into() };
        let nas = CopyTarget::new(" NAS ", folder("/mnt/nas/kluis")).unwrap();
        assert_eq!(nas.name, "NAS");
        assert_eq!(nas.describe(), "folder /mnt/nas/kluis, every copy kept");
        assert_ne!(
            nas.id,
            CopyTarget::new("NAS", folder("/mnt/nas")).unwrap().id
        );
        assert!(CopyTarget::new("", folder("/mnt/nas")).is_err());
        assert!(CopyTarget::new("x\ny", folder("/mnt/nas")).is_err());
        let relative = CopyTarget::new("NAS", folder("kluis")).unwrap_err();
        assert!(relative.to_string().contains("full path"), "{relative}");
    }
}
