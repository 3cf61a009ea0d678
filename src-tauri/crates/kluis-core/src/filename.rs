//! The saved file's name: from `Content-Disposition`, else the URL's last path segment, else
//! `owner-backup-<UTC timestamp>.zip` — always reduced to a harmless base name.

use percent_encoding::percent_decode_str;
use url::Url;

/// Longest name kept, in bytes (most file systems allow 255).
pub(crate) const MAX_NAME_BYTES: usize = 150;

/// Picks the file name for a download.
pub fn choose(content_disposition: Option<&str>, url: &Url, now: time::OffsetDateTime) -> String {
    content_disposition
        .and_then(from_content_disposition)
        .and_then(|n| sanitize(&n))
        .or_else(|| {
            let last = url.path_segments()?.next_back()?;
            let name = percent_decode_str(last).decode_utf8_lossy();
            looks_like_a_file_name(&name).then(|| sanitize(&name))?
        })
        .unwrap_or_else(|| fallback(now))
}

/// Whether a download URL's last segment is a file name rather than a secret: a signed or
/// capability URL often ends in a token (`/download/9f3c…`), which must not become the name of
/// a file that is listed, shown and shared. A name has an extension of 1–5 letters or digits,
/// and neither a UUID nor a run of 20 or more letters and digits (128 random bits in hex or
/// base64 are longer than that).
fn looks_like_a_file_name(name: &str) -> bool {
    let has_extension = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    let longest_run = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::len)
        .max()
        .unwrap_or(0);
    let has_uuid = name
        .as_bytes()
        .windows(36)
        .any(|w| std::str::from_utf8(w).is_ok_and(|w| uuid::Uuid::try_parse(w).is_ok()));
    has_extension && longest_run < 20 && !has_uuid
}

/// `owner-backup-20261122T155000Z.zip`.
pub fn fallback(now: time::OffsetDateTime) -> String {
    let format = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    let stamp = now
        .to_offset(time::UtcOffset::UTC)
        .format(&format)
        .unwrap_or_else(|_| "backup".into());
    format!("owner-backup-{stamp}.zip")
}

/// The file name a `Content-Disposition` value carries: `filename*` (RFC 5987, UTF-8 or
/// ISO-8859-1) wins over `filename`, which may be quoted with backslash escapes.
pub fn from_content_disposition(value: &str) -> Option<String> {
    let mut plain = None;
    let mut extended = None;
    for param in split_params(value).into_iter().skip(1) {
        let Some((name, raw)) = param.split_once('=') else {
            continue;
        };
        match name.trim().to_ascii_lowercase().as_str() {
            "filename*" => {
                let raw = raw.trim();
                let mut parts = raw.splitn(3, '\'');
                let (charset, _lang, encoded) = (parts.next()?, parts.next()?, parts.next()?);
                let bytes: Vec<u8> = percent_decode_str(encoded).collect();
                extended = Some(if charset.eq_ignore_ascii_case("utf-8") {
                    String::from_utf8_lossy(&bytes).into_owned()
                } else {
                    bytes.iter().map(|&b| b as char).collect() // ISO-8859-1
                });
            }
            "filename" => plain = Some(unquote(raw.trim())),
            _ => {}
        }
    }
    extended.or(plain)
}

/// Splits on `;` outside quotes.
fn split_params(value: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let (mut quoted, mut escaped) = (false, false);
    for c in value.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().unwrap().push(c);
    }
    parts
}

fn unquote(raw: &str) -> String {
    let Some(inner) = raw.strip_prefix('"') else {
        return raw.to_string();
    };
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' {
            chars.next().unwrap_or('\\')
        } else {
            c
        });
    }
    out
}

/// Reduces `name` to a safe base name, or `None` if nothing usable remains: only the part after
/// the last `/` or `\`, no control or reserved characters, no leading dots (no hidden files, no
/// `..`), no trailing dots or spaces, not a Windows device name, at most [`MAX_NAME_BYTES`].
pub fn sanitize(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = base
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
        .map(|c| if matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') { '_' } else { c })
        .collect();
    let trimmed = cleaned
        .trim_start_matches(['.', ' '])
        .trim_end_matches(['.', ' ']);
    if trimmed.is_empty() {
        return None;
    }
    let named = if is_device_name(trimmed) {
        format!("_{trimmed}")
    } else {
        trimmed.to_string()
    };
    Some(truncate_keeping_extension(&named))
}

/// A klant's name made a safe file or folder name, or `None` if nothing usable remains: as
/// [`sanitize`], but a `/` or `\` in it is part of the name ("Bakker v.o.f. / Jansen"), not a
/// path — so two klanten never share a folder by the end of their names.
pub fn name_as_file(name: &str) -> Option<String> {
    sanitize(&name.replace(['/', '\\'], "_"))
}

/// Whether Windows takes `name` for a device rather than a file: its part before the first
/// dot, without trailing spaces, is CON, PRN, AUX, NUL, CONIN$, CONOUT$, or COM or LPT with one
/// digit (0–9, or the superscripts ¹ ² ³), in any case — "lpt9 .zip" opens the printer port.
fn is_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or("").trim_end_matches(' ');
    let stem = stem.to_ascii_uppercase();
    let port = |prefix: &str| {
        stem.strip_prefix(prefix).is_some_and(|n| {
            matches!(n, "¹" | "²" | "³") || (n.len() == 1 && n.as_bytes()[0].is_ascii_digit())
        })
    };
    matches!(
        stem.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) || port("COM")
        || port("LPT")
}

fn truncate_keeping_extension(name: &str) -> String {
    if name.len() <= MAX_NAME_BYTES {
        return name.to_string();
    }
    let ext = match name.rfind('.') {
        Some(dot) if name.len() - dot <= 16 => &name[dot..],
        _ => "",
    };
    let mut stem_end = MAX_NAME_BYTES - ext.len();
    while !name.is_char_boundary(stem_end) {
        stem_end -= 1;
    }
    format!("{}{ext}", &name[..stem_end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }
    const NOW: time::OffsetDateTime = time::macros::datetime!(2026-11-22 15:50:00 UTC);

    /// A klant's name keeps its slashes' parts: "A / Jansen" and "Jansen" get folders of
    /// their own.
    #[test]
    fn a_klant_name_is_no_path() {
        assert_eq!(
            name_as_file("Bakker v.o.f. / Jansen").as_deref(),
            Some("Bakker v.o.f. _ Jansen")
        );
        assert_eq!(
            name_as_file("..\\..\\Windows").as_deref(),
            Some("_.._Windows")
        );
        assert_ne!(name_as_file("A/Jansen"), name_as_file("Jansen"));
        assert_eq!(name_as_file("/"), Some("_".into()));
        assert_eq!(name_as_file("  "), None);
    }

    /// `filename*` beats `filename`; quotes and escapes are handled.
    #[test]
    fn parses_content_disposition() {
        assert_eq!(
            from_content_disposition("attachment; filename=\"a;b.zip\"").as_deref(),
            Some("a;b.zip")
        );
        assert_eq!(
            from_content_disposition("attachment; filename=plain.zip").as_deref(),
            Some("plain.zip")
        );
        assert_eq!(
            from_content_disposition(
                "attachment; filename=\"x.zip\"; filename*=UTF-8''back%C3%BCp%20v2.zip"
            )
            .as_deref(),
            Some("backüp v2.zip")
        );
        assert_eq!(
            from_content_disposition("attachment; filename=\"q\\\"uote.zip\"").as_deref(),
            Some("q\"uote.zip")
        );
        assert_eq!(from_content_disposition("attachment").as_deref(), None);
    }

    /// Hostile names cannot leave the folder, hide, or name a device.
    #[test]
    fn hostile_names_become_harmless() {
        assert_eq!(sanitize("../../etc/passwd").as_deref(), Some("passwd"));
        assert_eq!(
            sanitize("..\\..\\Windows\\win.ini").as_deref(),
            Some("win.ini")
        );
        assert_eq!(sanitize("..").as_deref(), None);
        assert_eq!(sanitize("/").as_deref(), None);
        assert_eq!(sanitize(".bashrc").as_deref(), Some("bashrc"));
        assert_eq!(sanitize("a\u{0}b\nc.zip").as_deref(), Some("abc.zip"));
        assert_eq!(
            sanitize("evil\u{202E}piz.exe").as_deref(),
            Some("evilpiz.exe")
        );
        assert_eq!(sanitize("CON.zip").as_deref(), Some("_CON.zip"));
        for device in [
            "aux",
            "nul.tar.gz",
            "LPT9 .zip",
            "com¹.zip",
            "CONOUT$",
            "Com0.zip",
        ] {
            assert_eq!(sanitize(device), Some(format!("_{device}")), "{device}");
        }
        for file in ["console.zip", "com10.zip", "lpt.zip", "auxiliary", "x.con"] {
            assert_eq!(
                sanitize(file).as_deref(),
                Some(file),
                "{file} is a file name"
            );
        }
        assert_eq!(sanitize("what?.zip").as_deref(), Some("what_.zip"));
        let long = format!("{}.zip", "é".repeat(200));
        let cut = sanitize(&long).unwrap();
        assert!(
            cut.len() <= MAX_NAME_BYTES && cut.ends_with(".zip"),
            "{cut}"
        );
    }

    /// Every hostile name, sanitised, is a file this system keeps under that very name: written,
    /// listed and read back. On Windows (tests/windows/run.sh runs this as a Windows binary
    /// under Wine) a device name left as it was would open the device, and a trailing dot or
    /// space would be dropped from the name.
    #[test]
    fn sanitised_names_are_files_on_this_system() {
        let dir = tempfile::tempdir().unwrap();
        let hostile = [
            "CON.zip",
            "aux",
            "nul.tar.gz",
            "LPT9 .zip",
            "com1",
            "CONOUT$",
            "rapport. . ",
            "a<b>c?.zip",
            "x:y.zip",
            "a\tb.zip",
            r"..\..\win.ini",
            "  spaced  ",
        ];
        for (i, name) in hostile.iter().enumerate() {
            let safe = sanitize(name).unwrap();
            let path = dir.path().join(&safe);
            let contents = format!("backup {i}");
            std::fs::write(&path, &contents).unwrap_or_else(|e| panic!("{name} as {safe}: {e}"));
            assert_eq!(std::fs::read_to_string(&path).unwrap(), contents, "{safe}");
        }
        let mut listed: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        listed.sort();
        let mut expected: Vec<String> = hostile.iter().map(|n| sanitize(n).unwrap()).collect();
        expected.sort();
        assert_eq!(listed, expected, "each file under the name it was given");
    }

    /// A URL segment that looks like a token (or has no extension) never names the file.
    #[test]
    fn ignores_url_segments_that_look_like_tokens() {
        for secret_url in [
            "https://files/download/9f3c2b7e4d1a4c8b9e0f1a2b3c4d5e6f",
            "https://files/d/9f3c2b7e4d1a4c8b9e0f1a2b3c4d5e6f.zip",
            "https://files/d/49cfcabd-ae97-47de-a900-76a83082a1cb.zip",
            "https://files/d/backup",
        ] {
            assert_eq!(
                choose(None, &url(secret_url), NOW),
                "owner-backup-20261122T155000Z.zip",
                "{secret_url}"
            );
        }
        assert_eq!(
            choose(
                None,
                &url("https://files/x/owner-backup-20261122.tar.gz"),
                NOW
            ),
            "owner-backup-20261122.tar.gz"
        );
    }

    /// Content-Disposition first, then the URL's name, then the fallback.
    #[test]
    fn chooses_in_order() {
        let u = url("https://files/download/backup%202026.zip");
        assert_eq!(
            choose(Some("attachment; filename=\"../x.zip\""), &u, NOW),
            "x.zip"
        );
        assert_eq!(choose(None, &u, NOW), "backup 2026.zip");
        assert_eq!(
            choose(
                Some("attachment; filename=\"..\""),
                &url("https://files/"),
                NOW
            ),
            "owner-backup-20261122T155000Z.zip"
        );
    }
}
