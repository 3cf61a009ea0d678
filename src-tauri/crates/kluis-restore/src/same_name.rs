//! [`NameRule`]: when two entries' paths are one name to the file system they are restored
//! into — so that the second is not restored (and said) instead of silently replacing the
//! first. Each system compares as its own file system does:
//! - Windows (NTFS): case aside, as NTFS's upper-case table maps each UTF-16 unit to one —
//!   not full case folding, which would wrongly join `ß` and `ss` (`aσ.txt` and `aς.txt` are
//!   one name there; `straße` and `STRASSE` are two);
//! - macOS (APFS, HFS+): case and Unicode normalisation aside (`é` as one character or as `e`
//!   and an accent are one name);
//! - Linux: exactly (ext4 tells every byte apart).
//!
//! Before, names were compared by Rust's lowercase on every system: too little for NTFS and
//! macOS (both entries above were restored, the second replacing the first with `--overwrite`),
//! and too much for Linux.

use unicode_normalization::UnicodeNormalization;

/// See the module's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    Exact,
    Ntfs,
    Apple,
}

impl Default for NameRule {
    /// This system's: what a restore here compares by.
    fn default() -> NameRule {
        if cfg!(windows) {
            NameRule::Ntfs
        } else if cfg!(target_os = "macos") {
            NameRule::Apple
        } else {
            NameRule::Exact
        }
    }
}

impl NameRule {
    /// What `path` is compared by: two paths with the same key are one name.
    pub fn key(self, path: &str) -> String {
        match self {
            NameRule::Exact => path.to_string(),
            NameRule::Ntfs => path.chars().map(ntfs_upper).collect(),
            NameRule::Apple => (path.nfd().flat_map(char::to_lowercase))
                .collect::<String>()
                .nfd()
                .collect(),
        }
    }
}

/// `c` as NTFS's upper-case table has it: the one character it upper-cases to when that is a
/// single character of the Basic Multilingual Plane (one UTF-16 unit, as is `c`), else itself
/// (`ß`, whose upper case is two letters; characters beyond the plane, which NTFS compares
/// unit by unit and does not map).
fn ntfs_upper(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if c as u32 <= 0xFFFF && u as u32 <= 0xFFFF => u,
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NTFS joins the Greek sigmas and cases but not `ß` and `ss`; macOS joins NFC and NFD
    /// forms and cases; Linux joins nothing.
    #[test]
    fn names_meet_as_each_file_system_compares_them() {
        let one = |rule: NameRule, a: &str, b: &str| rule.key(a) == rule.key(b);
        assert!(one(NameRule::Ntfs, "aσ.txt", "aς.txt"));
        assert!(one(NameRule::Ntfs, "Map/Rapport.TXT", "map/rapport.txt"));
        assert!(
            !one(NameRule::Ntfs, "straße", "STRASSE"),
            "not full folding"
        );
        assert!(
            !one(NameRule::Ntfs, "caf\u{e9}", "cafe\u{301}"),
            "NTFS does not normalise"
        );
        assert!(one(NameRule::Apple, "caf\u{e9}.txt", "cafe\u{301}.txt"));
        assert!(one(NameRule::Apple, "CAF\u{c9}", "cafe\u{301}"));
        assert!(!one(NameRule::Exact, "aσ.txt", "aς.txt"));
        assert!(!one(NameRule::Exact, "Rapport", "rapport"));
        assert!(!one(NameRule::Exact, "caf\u{e9}", "cafe\u{301}"));
        assert!(one(NameRule::Ntfs, "\u{1F600}", "\u{1F600}"));
    }
}
