//! The secret scrubber: removes every secret in play from text, by value, before the text
//! reaches a log line, the history, stderr, `--json` or the UI.
//!
//! Secrets register themselves ([`register`], called by `kluis_core::Secret::new` and by every
//! other holder of a credential); a registration lives as long as the [`Registered`] handle the
//! secret keeps, so the set stays as small as the secrets alive. [`scrub`] replaces each of
//! them in the forms a server or proxy may echo it in: raw, percent-encoded (form style with
//! `+`, and `%20` style, either hex case), JSON-escaped and base64 (standard and URL-safe,
//! padded or not). Matching ignores ASCII case, so `%2f` and `%2F` both go.
//!
//! Text is scrubbed where it is made (error excerpts of server answers) *and* where it leaves
//! (an error's `Display`, the log writer): the second pass catches what the first did not see,
//! the first catches a secret whose holder was dropped before the message was shown.
//! Values shorter than [`MIN_LEN`] characters are not scrubbed: replacing every `ab` in a
//! message would destroy it, and such a value is no secret worth the name.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use base64::Engine;

/// What replaces a secret.
pub const HIDDEN: &str = "«hidden»";
/// Shortest value that is scrubbed.
pub const MIN_LEN: usize = 3;

struct Registry {
    secrets: Vec<Weak<Value>>,
    /// The matcher over every form of every live secret; rebuilt when the set changed.
    matcher: Option<Arc<AhoCorasick>>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    secrets: Vec::new(),
    matcher: None,
});

/// The set of secrets changed since the matcher was built. (A flag rather than the lock: a
/// value may be dropped while the registry is locked.)
static CHANGED: AtomicBool = AtomicBool::new(false);

/// A registered value; when the last handle goes, the matcher is rebuilt without it.
struct Value(String);

impl Drop for Value {
    fn drop(&mut self) {
        CHANGED.store(true, Ordering::Release);
    }
}

/// Keeps a secret registered while it lives.
#[derive(Clone)]
pub struct Registered(#[allow(dead_code)] Option<Arc<Value>>);

/// Registers `value` as a secret until the returned handle (and its clones) are dropped.
pub fn register(value: &str) -> Registered {
    if value.chars().count() < MIN_LEN {
        return Registered(None);
    }
    let value = Arc::new(Value(value.to_string()));
    let mut registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    registry.secrets.retain(|s| s.strong_count() > 0);
    registry.secrets.push(Arc::downgrade(&value));
    CHANGED.store(true, Ordering::Release);
    Registered(Some(value))
}

/// `text` with every form of every registered secret replaced by [`HIDDEN`].
pub fn scrub(text: &str) -> Cow<'_, str> {
    let Some(matcher) = matcher() else {
        return Cow::Borrowed(text);
    };
    if !matcher.is_match(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    matcher.replace_all_with(text, &mut out, |_, _, out| {
        out.push_str(HIDDEN);
        true
    });
    Cow::Owned(out)
}

fn matcher() -> Option<Arc<AhoCorasick>> {
    let mut registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    if !CHANGED.swap(false, Ordering::AcqRel) {
        if let Some(matcher) = &registry.matcher {
            return Some(matcher.clone());
        }
    }
    registry.secrets.retain(|s| s.strong_count() > 0);
    let mut patterns: Vec<String> = registry
        .secrets
        .iter()
        .filter_map(Weak::upgrade)
        .flat_map(|s| forms(&s.0))
        .collect();
    registry.matcher = None;
    if patterns.is_empty() {
        return None;
    }
    patterns.sort();
    patterns.dedup();
    let matcher = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostLongest)
        .build(&patterns)
        .ok()
        .map(Arc::new)?;
    registry.matcher = Some(matcher.clone());
    Some(matcher)
}

/// The forms in which `value` may come back from a server, a proxy or a library.
pub fn forms(value: &str) -> Vec<String> {
    use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
    let b64 = |engine: &base64::engine::GeneralPurpose| engine.encode(value.as_bytes());
    let percent = utf8_percent_encode(value, NON_ALPHANUMERIC).to_string();
    let json = serde_json::to_string(value).unwrap_or_default();
    let mut forms = vec![
        value.to_string(),
        url::form_urlencoded::byte_serialize(value.as_bytes()).collect(),
        // Unreserved characters left as they are, everything else %XX (how `url` encodes a
        // path or query it is handed whole).
        utf8_percent_encode(value, QUERY).to_string(),
        percent,
        json.trim_matches('"').to_string(),
        b64(&base64::engine::general_purpose::STANDARD),
        b64(&base64::engine::general_purpose::STANDARD_NO_PAD),
        b64(&base64::engine::general_purpose::URL_SAFE),
        b64(&base64::engine::general_purpose::URL_SAFE_NO_PAD),
    ];
    forms.retain(|f| f.chars().count() >= MIN_LEN);
    forms.sort();
    forms.dedup();
    forms
}

/// Everything but RFC 3986's unreserved characters.
const QUERY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form a proxy may echo a password in is removed; other text stays.
    #[test]
    fn removes_every_form_of_a_registered_secret() {
        let password = "p@ss w0rd/ü+&=\"x";
        let _held = register(password);
        let echoes = [
            password.to_string(),
            url::form_urlencoded::byte_serialize(password.as_bytes()).collect::<String>(),
            percent_encoding::utf8_percent_encode(password, percent_encoding::NON_ALPHANUMERIC)
                .to_string(),
            percent_encoding::utf8_percent_encode(password, percent_encoding::NON_ALPHANUMERIC)
                .to_string()
                .to_lowercase(),
            serde_json::to_string(password).unwrap(),
            base64::engine::general_purpose::STANDARD.encode(password),
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(password),
        ];
        for echo in echoes {
            let text = format!("GET /authenticate?password={echo} HTTP/1.1");
            let scrubbed = scrub(&text);
            assert!(scrubbed.contains(HIDDEN), "{echo} not found in {text}");
            assert!(!scrubbed.contains("w0rd"), "{echo} survived: {scrubbed}");
            assert!(scrubbed.starts_with("GET /authenticate?password="));
        }
    }

    /// A dropped secret is no longer scrubbed, and short values never are.
    #[test]
    fn registrations_end_with_their_holder() {
        let held = register("transient-secret-value");
        assert_eq!(scrub("x transient-secret-value y"), "x «hidden» y");
        drop(held);
        assert_eq!(
            scrub("x transient-secret-value y"),
            "x transient-secret-value y"
        );
        let _short = register("ab");
        assert_eq!(scrub("abc ab"), "abc ab");
    }
}
