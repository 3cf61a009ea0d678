//! What the file host's headers say: the validator a resume sends back in `If-Range`, a
//! `Content-Range`, and the SHA-256 a server declares (`Repr-Digest`, `Digest`).

use base64::Engine;
use reqwest::header::{self, HeaderMap};

pub(crate) fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A strong ETag, else Last-Modified (RFC 9110 allows both in If-Range; weak tags are not). A
/// strong tag is quoted: anything else in ETag is not taken for one (nor for a date).
pub(crate) fn validator(headers: &HeaderMap) -> Option<String> {
    header_text(headers, header::ETAG)
        .filter(|tag| tag.starts_with('"'))
        .or_else(|| header_text(headers, header::LAST_MODIFIED))
}

/// Whether a resume's answer names the file `ours` validates (the ETag or date sent in
/// `If-Range`). An ETag must come back: RFC 9110 (15.3.7) has a 206 carry the ETag a 200
/// would, so one without it is not taken for ours — a host that both ignored `If-Range` and
/// left it out would otherwise splice another file's bytes onto ours (the length still
/// matching). A date need not: a 206 to an `If-Range` should not repeat Last-Modified (the
/// same section), so only one it does send, and that differs, says another file.
pub(crate) fn names_same_file(ours: &str, headers: &HeaderMap) -> bool {
    match ours.starts_with('"') {
        true => header_text(headers, header::ETAG).is_some_and(|theirs| theirs == ours),
        false => header_text(headers, header::LAST_MODIFIED).is_none_or(|theirs| theirs == ours),
    }
}

/// `bytes START-END/TOTAL` → (START, Some(TOTAL)); a `*` total gives `None`.
pub(crate) fn parse_content_range(value: &str) -> Option<(u64, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes ")?;
    let (span, total) = rest.split_once('/')?;
    let (start, end) = span.split_once('-')?;
    let (start, end): (u64, u64) = (start.trim().parse().ok()?, end.trim().parse().ok()?);
    if end < start {
        return None;
    }
    let total = match total.trim() {
        "*" => None,
        n => Some(n.parse().ok()?),
    };
    Some((start, total))
}

/// The SHA-256 a server declares in `Repr-Digest: sha-256=:B64:` (RFC 9530) or the older
/// `Digest: SHA-256=B64` (RFC 3230).
pub(crate) fn declared_sha256(headers: &HeaderMap) -> Option<[u8; 32]> {
    let decode = |b64: &str| -> Option<[u8; 32]> {
        base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .ok()?
            .try_into()
            .ok()
    };
    let from_list = |value: &str, structured: bool| {
        value.split(',').find_map(|item| {
            let (alg, val) = item.split_once('=')?;
            if !alg.trim().eq_ignore_ascii_case("sha-256") {
                return None;
            }
            let val = val.trim();
            let val = if structured {
                val.strip_prefix(':')?.strip_suffix(':')?
            } else {
                val
            };
            decode(val)
        })
    };
    header_text(headers, header::HeaderName::from_static("repr-digest"))
        .and_then(|v| from_list(&v, true))
        .or_else(|| {
            header_text(headers, header::HeaderName::from_static("digest"))
                .and_then(|v| from_list(&v, false))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resume's answer is compared like with like: an ETag sent is checked against its
    /// ETag, a date against its Last-Modified; what it leaves out claims nothing (a legitimate
    /// 206 without the other header is not refused).
    #[test]
    fn a_resume_names_the_same_file() {
        let headers = |pairs: &[(header::HeaderName, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(name.clone(), value.parse().unwrap());
            }
            map
        };
        let date = "Sat, 28 Nov 2026 10:00:00 GMT";
        let both = headers(&[(header::ETAG, "\"a\""), (header::LAST_MODIFIED, date)]);
        assert!(names_same_file("\"a\"", &both));
        assert!(!names_same_file("\"b\"", &both), "another file's tag");
        assert!(names_same_file(date, &both), "a date against the date");
        assert!(!names_same_file("Fri, 27 Nov 2026 10:00:00 GMT", &both));
        let only_date = headers(&[(header::LAST_MODIFIED, date)]);
        assert!(
            !names_same_file("\"a\"", &only_date),
            "no tag sent: not taken for ours"
        );
        assert!(
            names_same_file(date, &headers(&[])),
            "a date is not repeated in a 206"
        );
        let weak = headers(&[(header::ETAG, "W/\"a\"")]);
        assert!(
            !names_same_file("\"a\"", &weak),
            "a weak tag is not the strong one"
        );
    }

    /// Content-Range with a known and an unknown total; malformed values are refused.
    #[test]
    fn parses_content_range() {
        assert_eq!(
            parse_content_range("bytes 100-199/200"),
            Some((100, Some(200)))
        );
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
        assert_eq!(parse_content_range("bytes 9-5/20"), None);
        assert_eq!(parse_content_range("items 1-2/3"), None);
    }

    /// Both digest headers are understood; other algorithms are ignored.
    #[test]
    fn reads_declared_digests() {
        let digest = [7u8; 32];
        let b64 = base64::engine::general_purpose::STANDARD.encode(digest);
        let mut h = HeaderMap::new();
        h.insert(
            "repr-digest",
            format!("sha-512=:AAAA:, sha-256=:{b64}:").parse().unwrap(),
        );
        assert_eq!(declared_sha256(&h), Some(digest));
        let mut h = HeaderMap::new();
        h.insert("digest", format!("SHA-256={b64}").parse().unwrap());
        assert_eq!(declared_sha256(&h), Some(digest));
        let mut h = HeaderMap::new();
        h.insert("digest", "md5=abc".parse().unwrap());
        assert_eq!(declared_sha256(&h), None);
    }

    /// Weak ETags cannot guard a resume; Last-Modified can.
    #[test]
    fn picks_a_strong_validator() {
        let mut h = HeaderMap::new();
        h.insert(header::ETAG, "W/\"x\"".parse().unwrap());
        h.insert(
            header::LAST_MODIFIED,
            "Sun, 22 Nov 2026 10:00:00 GMT".parse().unwrap(),
        );
        assert_eq!(
            validator(&h).as_deref(),
            Some("Sun, 22 Nov 2026 10:00:00 GMT")
        );
        h.insert(header::ETAG, "unquoted".parse().unwrap());
        assert_eq!(
            validator(&h).as_deref(),
            Some("Sun, 22 Nov 2026 10:00:00 GMT"),
            "an unquoted tag is no strong tag (nor a date)"
        );
        h.insert(header::ETAG, "\"x\"".parse().unwrap());
        assert_eq!(validator(&h).as_deref(), Some("\"x\""));
    }
}
