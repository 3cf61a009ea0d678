//! An archive entry's name made a relative path inside the restore folder — or refused, with
//! the reason. The archive came from the network: a name that would climb out of the folder
//! (`..`), start at a root (`/etc`, `\\server`, `C:`) or use a drive is refused rather than
//! mended (it is an attack or a damaged archive, not a name to guess at); backslashes count as
//! separators (Windows' archivers write them); each part is made safe as saved backups' names
//! are (no control or reserved characters, no leading dots, no device names such as `CON`).

/// Why an entry's name cannot be restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// It climbs out of the folder (`..`).
    ClimbsOut,
    /// It starts at a root or a drive (`/etc/passwd`, `C:\Windows`, `\\server\share`).
    Rooted,
    /// Nothing usable is left of it (only dots, spaces, control characters).
    Nameless,
}

impl Refused {
    /// Why, in words.
    pub fn reason(&self) -> &'static str {
        match self {
            Refused::ClimbsOut => "its name climbs out of the folder (..)",
            Refused::Rooted => "its name starts at a root or a drive",
            Refused::Nameless => "nothing usable is left of its name",
        }
    }
}

/// The parts of the safe relative path for `name` (a directory entry's trailing `/` aside).
pub fn safe_parts(name: &str) -> Result<Vec<String>, Refused> {
    if name.starts_with(['/', '\\']) {
        return Err(Refused::Rooted);
    }
    let mut parts = Vec::new();
    for (index, part) in name.split(['/', '\\']).enumerate() {
        // A drive (`C:`), or a name relative to a drive's own folder (`C:x`).
        let drive = part.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
            && part.as_bytes().get(1) == Some(&b':');
        if index == 0 && drive {
            return Err(Refused::Rooted);
        }
        match part {
            "" | "." => continue,
            ".." => return Err(Refused::ClimbsOut),
            _ => {}
        }
        // Only dots and spaces: Windows strips them to `..` or nothing.
        if part.trim_matches([' ', '.']).is_empty() {
            return Err(Refused::ClimbsOut);
        }
        match kluis_core::filename::sanitize(part) {
            Some(safe) => parts.push(safe),
            None => return Err(Refused::Nameless),
        }
    }
    match parts.is_empty() {
        true => Err(Refused::Nameless),
        false => Ok(parts),
    }
}

/// The safe relative path for `name`, joined with `/` (how it is shown and matched).
pub fn safe_path(name: &str) -> Result<String, Refused> {
    safe_parts(name).map(|parts| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every zip-slip form is refused; ordinary and awkward names are kept or made safe.
    #[test]
    fn names_are_kept_inside_the_folder() {
        let refused = [
            ("../evil.txt", Refused::ClimbsOut),
            ("a/../../evil.txt", Refused::ClimbsOut),
            ("a\\..\\..\\evil.txt", Refused::ClimbsOut),
            ("a/.../b", Refused::ClimbsOut),
            ("a/. ./b", Refused::ClimbsOut),
            ("/etc/passwd", Refused::Rooted),
            ("\\\\server\\share\\x", Refused::Rooted),
            ("\\Windows\\x", Refused::Rooted),
            ("C:\\Windows\\win.ini", Refused::Rooted),
            ("C:evil.txt", Refused::Rooted),
            ("", Refused::Nameless),
            ("./", Refused::Nameless),
            ("\u{7}\u{8}", Refused::Nameless),
        ];
        for (name, why) in refused {
            assert_eq!(safe_path(name), Err(why), "{name:?}");
        }
        let kept = [
            ("2025/grootboek.csv", "2025/grootboek.csv"),
            ("2025\\memoriaal.csv", "2025/memoriaal.csv"),
            ("./a//b/", "a/b"),
            ("docs/CON.txt", "docs/_CON.txt"),
            ("docs/lpt1", "docs/_lpt1"),
            ("what?<now>.txt", "what__now_.txt"),
            ("map./file. ", "map/file"),
            (".verborgen", "verborgen"),
            ("jaar:2025/x", "jaar_2025/x"),
        ];
        for (name, safe) in kept {
            assert_eq!(safe_path(name).as_deref(), Ok(safe), "{name:?}");
        }
    }
}
