//! What a copy target holds, as this computer knows it, sealed to the office's key: the
//! [`Catalog`] of every klant and copy (one per computer, written anew after each run of
//! copies), and beside every copy its own [`CopyRecord`] — so that no single object is the only
//! way to a copy, and a catalog changed, damaged or deleted loses nothing.
//!
//! Both hold what recovery on a new computer needs and nothing the office did not keep there
//! already: the klant's name, service address and username (never a password, api key or
//! token), each copy's place, name, length, SHA-256, when its backup was made, how it is
//! encrypted — with the passphrase of a klant whose backups are encrypted with one, so that the
//! kit alone opens them — its lock and its last restore test.

use serde::{Deserialize, Serialize};

/// The catalog format this Kluis writes; a newer one is said, not guessed at.
pub const CATALOG_FORMAT: u32 = 1;
/// The copy record format this Kluis writes.
pub const RECORD_FORMAT: u32 = 1;

/// A computer that writes catalogs: its own id (made once, kept in the settings) and the name
/// the office knows it by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pc {
    pub id: String,
    pub name: String,
}

/// See the module's text.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Catalog {
    pub kluis_catalog: u32,
    /// The fingerprint of the office key it is sealed to.
    pub office: String,
    pub pc: Pc,
    /// When it was written (Unix milliseconds), and its number among this computer's catalogs.
    pub written_ms: i64,
    pub number: u64,
    pub klanten: Vec<KlantNote>,
    /// The computers this one carries on for (`kluis recover adopt`): their klanten are this
    /// one's now, and recovery lists their catalogs as adopted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<Adoption>,
}

/// A lost computer another took over from: which, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adoption {
    pub pc: Pc,
    pub at_ms: i64,
}

/// A klant as a catalog or record names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Klant {
    pub name: String,
    pub base_url: String,
    pub username: String,
    /// The history's key of its backups (a profile's id).
    pub key: String,
}

/// A klant of a catalog: who, how its backups are encrypted, its settings (for a computer
/// that carries on for this one), and its copies on this target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KlantNote {
    pub klant: Klant,
    pub encrypted: Encrypted,
    /// The klant's saved settings as this computer keeps them (plan, retention, tags, its own
    /// save folder: no secret), for adopting it.
    #[serde(default)]
    pub settings: serde_json::Value,
    pub copies: Vec<CopyNote>,
}

/// How a klant's backups are encrypted.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Encrypted {
    No,
    /// With a passphrase — the passphrase itself, which only the recovery key opens.
    Passphrase {
        passphrase: String,
    },
    /// To an age recipient the office holds the identity of (the kit does not open these).
    Recipient {
        recipient: String,
    },
    /// Encrypted, but the computer that wrote this no longer knew how (the klant's encryption
    /// changed since, or its passphrase was not in the keyring).
    Unknown,
}

impl std::fmt::Debug for Encrypted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Encrypted::No => f.write_str("No"),
            Encrypted::Passphrase { .. } => f.write_str("Passphrase(«hidden»)"),
            Encrypted::Recipient { recipient } => write!(f, "Recipient({recipient})"),
            Encrypted::Unknown => f.write_str("Unknown"),
        }
    }
}

/// One copy on the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyNote {
    /// The backup's job id.
    pub job_id: String,
    /// Where it is on the target (relative to the target's root: `klant folder/file name`).
    pub location: String,
    /// The backup's file name as saved.
    pub name: String,
    /// Length and SHA-256 of the copy as it is on the target (the encrypted file, for an
    /// encrypted backup).
    pub bytes: u64,
    pub sha256: String,
    /// When its backup was saved (Unix milliseconds).
    pub saved_ms: i64,
    /// Whether the copy is encrypted (as the klant's backups were when it was made).
    pub encrypted: bool,
    /// Until when the target keeps it locked.
    pub locked_until_ms: Option<i64>,
    /// Its last restore test: when, and whether it passed.
    pub restore_test: Option<TestNote>,
}

/// A restore test's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestNote {
    pub at_ms: i64,
    pub passed: bool,
}

/// The record beside a copy: the copy as its catalog has it, for itself alone.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CopyRecord {
    pub kluis_copy_record: u32,
    pub office: String,
    pub pc: Pc,
    pub klant: Klant,
    pub encrypted: Encrypted,
    pub copy: CopyNote,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A klant's passphrase is never printed, though it is in the (sealed) catalog.
    #[test]
    fn a_passphrase_is_never_printed() {
        let encrypted = Encrypted::Passphrase {
            passphrase: "een lange geheime zin".into(),
        };
        let shown = format!("{encrypted:?}");
        assert!(!shown.contains("geheime"), "{shown}");
        let json = serde_json::to_string(&encrypted).unwrap();
        assert!(
            json.contains("geheime"),
            "kept in the document itself: {json}"
        );
    }
}
