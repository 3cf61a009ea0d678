//! Where recovery's objects are on a copy target, relative to the target's root (a folder's
//! path, a bucket's prefix, an SFTP folder) — beside the klanten's folders of copies:
//! - `kluis-recovery/office-key.txt`: the office key's public half and fingerprint, plainly,
//!   for a person to compare with the kit (no computer takes a key from the target: one put
//!   there by whoever can write to it would receive every passphrase);
//! - `kluis-recovery/catalogs/<computer id>/<number, 12 digits>.age`: each computer's catalogs,
//!   numbered (S3 has no rename, and SFTP's plain rename never replaces: a new object each
//!   time, the highest whole one wins);
//! - `<klant folder>/<backup file>.kluis-record`: each copy's own record, beside it.

/// The folder of recovery's own objects.
pub const FOLDER: &str = "kluis-recovery";
/// The office key's public half.
pub const OFFICE_KEY: &str = "kluis-recovery/office-key.txt";
const CATALOGS: &str = "kluis-recovery/catalogs/";
const RECORD_SUFFIX: &str = ".kluis-record";

/// Catalog numbers are below this (twelve digits).
pub const CATALOG_NUMBERS: u64 = 1_000_000_000_000;

/// Where computer `pc_id`'s catalog number `number` goes.
pub fn catalog(pc_id: &str, number: u64) -> String {
    format!("{CATALOGS}{pc_id}/{number:012}.age")
}

/// The computer a catalog's location is of (none: it is no catalog).
pub fn pc_of_catalog(location: &str) -> Option<String> {
    let rest = location.strip_prefix(CATALOGS)?;
    let (pc, file) = rest.split_once('/')?;
    let number = file.strip_suffix(".age")?;
    (number.len() == 12 && number.bytes().all(|b| b.is_ascii_digit()) && is_id(pc))
        .then(|| pc.to_string())
}

/// The number of a catalog at `location`.
pub fn number_of_catalog(location: &str) -> Option<u64> {
    pc_of_catalog(location)?;
    location
        .rsplit('/')
        .next()?
        .strip_suffix(".age")?
        .parse()
        .ok()
}

/// Where the record of the copy at `copy` goes.
pub fn record(copy: &str) -> String {
    format!("{copy}{RECORD_SUFFIX}")
}

/// The copy a record's location is beside (none: it is no record).
pub fn copy_of_record(location: &str) -> Option<String> {
    let copy = location.strip_suffix(RECORD_SUFFIX)?;
    (!copy.is_empty() && !copy.ends_with('/')).then(|| copy.to_string())
}

/// Whether `location` is one of Kluis's own objects (not a copy): recovery's, or the mark of
/// a folder target.
pub fn is_kluis_own(location: &str) -> bool {
    location.starts_with(&format!("{FOLDER}/"))
        || copy_of_record(location).is_some()
        || location == kluis_core::copies::TARGET_MARK
}

/// Whether `text` is an id Kluis makes (a UUID's 32 hex digits, or with its dashes).
fn is_id(text: &str) -> bool {
    (1..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catalogs and records are told from copies by their places; a name that only looks
    /// like one (another folder, a number of another length, a path that climbs) is not.
    #[test]
    fn recoverys_objects_are_told_by_their_places() {
        let at = catalog("0f3a", 7);
        assert_eq!(at, "kluis-recovery/catalogs/0f3a/000000000007.age");
        assert_eq!(pc_of_catalog(&at).as_deref(), Some("0f3a"));
        assert_eq!(number_of_catalog(&at), Some(7));
        for not in [
            "kluis-recovery/catalogs/0f3a/7.age",
            "kluis-recovery/catalogs/../000000000007.age",
            "kluis-recovery/catalogs/0f3a/sub/000000000007.age",
            "Bakker/000000000007.age",
        ] {
            assert_eq!(pc_of_catalog(not), None, "{not}");
        }
        assert_eq!(record("Bakker/b.zip"), "Bakker/b.zip.kluis-record");
        assert_eq!(
            copy_of_record("Bakker/b.zip.kluis-record").as_deref(),
            Some("Bakker/b.zip")
        );
        assert!(is_kluis_own("Bakker/b.zip.kluis-record") && is_kluis_own(OFFICE_KEY));
        assert!(!is_kluis_own("Bakker/b.zip"));
        assert!(is_kluis_own(".kluis-target") && !is_kluis_own("Bakker/.kluis-target"));
    }
}
