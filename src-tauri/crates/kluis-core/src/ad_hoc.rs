//! Klanten backed up without a saved profile (`kluis backup` with flags or `KLUIS_*`): who
//! they are, so that a retention rule given on the command line touches only their backups.
//!
//! A saved profile's backups are recorded in the history under its id. An ad-hoc backup has no
//! id, and a label (`--profile NAME`, or `default`) does not tell klanten apart: a script that
//! loops over klanten with their own environment gives each the same label. So an ad-hoc klant
//! is the label *and* the service, the username and the folder its backups are saved in
//! ([`AdHocKlant`]); the history records its backups under a key derived from all four
//! ([`AdHocKlant::key`], readable: `default [3f2a91c0b1d2]`) and keeps the four in the
//! `ad_hoc` table, so a name can be resolved and an ambiguous one explained.

use std::path::Path;

use rusqlite::params;
use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::history::{db_error, Durability, History};
use crate::klant_key::KlantKey;

/// An ad-hoc klant: everything that tells its backups from another's. The username is not a
/// secret (the history and the profiles file hold it too).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AdHocKlant {
    /// `--profile NAME` when no saved profile has that name, else `default`.
    pub label: String,
    /// The service's base URL.
    pub service: String,
    pub username: String,
    /// The folder the backups are saved in, as the file system resolves it.
    pub folder: String,
}

impl AdHocKlant {
    /// The klant of a backup of `service` as `username` into `folder` (resolved through links
    /// and `..` where it exists, so two spellings of one folder are one klant).
    pub fn new(label: &str, service: &str, username: &str, folder: &Path) -> Self {
        let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        AdHocKlant {
            label: label.to_string(),
            service: service.to_string(),
            username: username.to_string(),
            folder: folder.to_string_lossy().into_owned(),
        }
    }

    /// The history's key for this klant's backups: the label, then 12 hex digits of a
    /// SHA-256 over all four parts (each length-prefixed, so no two klanten share an input).
    pub fn key(&self) -> KlantKey {
        let mut digest = Sha256::new();
        for part in [&self.label, &self.service, &self.username, &self.folder] {
            digest.update((part.len() as u64).to_le_bytes());
            digest.update(part.as_bytes());
        }
        KlantKey::ad_hoc(format!(
            "{} [{}]",
            self.label,
            &hex::encode(digest.finalize())[..12]
        ))
    }

    /// One line for a person choosing between klanten: "as USER at SERVICE, saved in FOLDER".
    pub fn describe(&self) -> String {
        format!(
            "as {} at {}, saved in {}",
            self.username, self.service, self.folder
        )
    }
}

impl History {
    /// Records `klant` (once) and returns the key its backups are recorded under.
    pub fn ad_hoc_klant(&self, klant: &AdHocKlant) -> Result<KlantKey> {
        let key = klant.key();
        self.write(Durability::Light, |tx| {
            tx.execute(
                "INSERT OR IGNORE INTO ad_hoc (key, label, service, username, folder) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![key, klant.label, klant.service, klant.username, klant.folder],
            )
        })?;
        Ok(key)
    }

    /// Every ad-hoc klant the history knows, with its key, by label.
    pub fn ad_hoc_klanten(&self) -> Result<Vec<(KlantKey, AdHocKlant)>> {
        let conn = self.conn.lock().unwrap();
        let mut statement = conn
            .prepare("SELECT key, label, service, username, folder FROM ad_hoc ORDER BY label, key")
            .map_err(db_error)?;
        let rows = statement
            .query_map([], |row| {
                Ok((
                    row.get(0)?,
                    AdHocKlant {
                        label: row.get(1)?,
                        service: row.get(2)?,
                        username: row.get(3)?,
                        folder: row.get(4)?,
                    },
                ))
            })
            .map_err(db_error)?;
        rows.collect::<std::result::Result<Vec<_>, _>>()
            .map_err(db_error)
    }

    /// Whether any backup is recorded under `key` exactly (a profile id, an ad-hoc key, or a
    /// label an older Kluis recorded).
    pub fn has_backups_of(&self, key: &str) -> Result<bool> {
        let conn = self.conn.lock().unwrap();
        conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM jobs WHERE profile = ?1)",
            params![key],
            |row| row.get(0),
        )
        .map_err(db_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two klanten differ when any of the four parts does, and one folder written two ways is
    /// one klant; the key is readable and recorded once.
    #[test]
    fn a_klant_is_its_label_service_username_and_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let klant = |label: &str, service: &str, user: &str, folder: &Path| {
            AdHocKlant::new(label, service, user, folder).key()
        };
        let base = klant("default", "https://s/", "bakker", &a);
        assert!(base.as_str().starts_with("default ["), "{base}");
        assert_eq!(
            base,
            klant("default", "https://s/", "bakker", &b.join("..").join("a")),
            "one folder, two spellings"
        );
        for other in [
            klant("visser", "https://s/", "bakker", &a),
            klant("default", "https://t/", "bakker", &a),
            klant("default", "https://s/", "visser", &a),
            klant("default", "https://s/", "bakker", &b),
            // Without the length prefixes these two would hash the same text.
            klant("default", "https://s/b", "akker", &a),
        ] {
            assert_ne!(base, other);
        }

        let history = History::in_memory().unwrap();
        let one = AdHocKlant::new("default", "https://s/", "bakker", &a);
        assert_eq!(history.ad_hoc_klant(&one).unwrap(), base);
        assert_eq!(history.ad_hoc_klant(&one).unwrap(), base);
        assert_eq!(history.ad_hoc_klanten().unwrap(), vec![(base.clone(), one)]);
        assert!(!history.has_backups_of(base.as_str()).unwrap());
        history.start(uuid::Uuid::new_v4(), &base, "relay").unwrap();
        assert!(history.has_backups_of(base.as_str()).unwrap());
    }
}
