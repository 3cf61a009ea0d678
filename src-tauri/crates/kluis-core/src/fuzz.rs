//! Property tests of every parser that sees the network: `Content-Disposition` and file
//! names, callback requests (path and query), the JSON answers of the service, the relay and
//! webhook.site, and `Range`/`Content-Range`/digest headers. Each property holds for any
//! input: no panic, and what comes out is safe to use.
//!
//! `cargo test -p kluis-core fuzz` runs each on 512 generated inputs; the long run,
//! `cargo test --release -p kluis-core -- --ignored fuzz`, on 100,000 each.

use proptest::prelude::*;

use crate::property::{run, LONG, QUICK};
use reqwest::header::{HeaderMap, HeaderValue};
use url::Url;

use crate::callback::listener::{capability_of, single_id, MAX_QUERY_LEN};
use crate::client::{payload_from, token_from};
use crate::download::{declared_sha256, parse_content_range, validator};
use crate::filename::{self, MAX_NAME_BYTES};

/// Text shaped like the real thing, mixed with anything at all.
fn text(shaped: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::string::string_regex(shaped).unwrap(),
        any::<String>(),
        proptest::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

fn content_disposition() -> impl Strategy<Value = String> {
    text(
        r#"(attachment|inline)?(; ?(filename\*?|name)=("[^"]{0,40}"|[^;]{0,40}|utf-8''[%0-9A-Za-z./\\ -]{0,40}))*"#,
    )
}

fn check_file_name(disposition: String) {
    let url = Url::parse("https://files.example/d/backup.zip").unwrap();
    let now = time::OffsetDateTime::UNIX_EPOCH;
    let name = filename::choose(Some(&disposition), &url, now);
    assert!(!name.is_empty() && name.len() <= MAX_NAME_BYTES, "{name:?}");
    assert!(!name.starts_with('.'), "hidden: {name:?}");
    assert!(
        !name.contains(['/', '\\']) && !name.chars().any(char::is_control),
        "unsafe: {name:?}"
    );
    assert!(name != "." && name != "..");
    if let Some(raw) = filename::from_content_disposition(&disposition) {
        if let Some(clean) = filename::sanitize(&raw) {
            assert!(!clean.contains(['/', '\\']) && clean.len() <= MAX_NAME_BYTES);
        }
    }
}

fn callback_request() -> impl Strategy<Value = (String, String)> {
    (
        text(r"(/[a-z]{0,6}){0,3}/cb/[0-9a-f]{0,70}/?"),
        text(r"((id|ID|x)=[0-9a-fA-F%-]{0,40}&?){0,3}"),
    )
}

fn check_callback_request((path, query): (String, String)) {
    if let Some(capability) = capability_of(&path) {
        assert!(!capability.is_empty() && !capability.contains('/'));
    }
    if let Some(id) = single_id(&query) {
        assert!(query.len() <= MAX_QUERY_LEN);
        assert!(uuid::Uuid::parse_str(id.expose().expose()).is_ok());
    }
}

fn json_answer() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
        text(r#""(https?|ftp|javascript|file)://[a-z0-9.:@\[\]]{0,20}/[^"]{0,20}""#),
    ];
    let shaped = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4)
                .prop_map(|v| format!("[{}]", v.join(","))),
            proptest::collection::vec(
                (
                    prop_oneof![
                        Just("data"),
                        Just("url"),
                        Just("token"),
                        Just("events"),
                        Just("next"),
                        Just("query"),
                        Just("seq")
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| format!(
                "{{{}}}",
                kv.iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )),
        ]
    });
    prop_oneof![shaped, text(r#"\{"data":\{"url":"[^"]{0,30}"\}\}"#)]
}

fn check_json_answer(body: String) {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&body) else {
        return;
    };
    if let Ok(token) = token_from(&value) {
        assert!(HeaderValue::from_str(token.expose()).is_ok());
    }
    for allow_http in [false, true] {
        if let Ok(payload) = payload_from(&value, allow_http) {
            assert!(crate::config::check_url(&payload.url, allow_http).is_ok());
            assert!(allow_http || payload.url.scheme() == "https");
        }
    }
    // The relay's and webhook.site's answers, read into their types.
    let _ = serde_json::from_value::<crate::callback::relay::Events>(value.clone());
    let _ = serde_json::from_value::<crate::callback::webhook_site::Requests>(value);
}

fn ranges() -> impl Strategy<Value = (String, String, String)> {
    (
        text(r"bytes [0-9]{0,21}-[0-9]{0,21}/([0-9]{0,21}|\*)"),
        text(r"(sha-256|SHA-256|md5)=:?[A-Za-z0-9+/=]{0,50}:?(, ?sha-256=:[A-Za-z0-9+/=]{0,50}:)?"),
        text(r#"(W/)?"[a-z0-9-]{0,20}""#),
    )
}

fn check_ranges((range, digest, etag): (String, String, String)) {
    if let Some((start, total)) = parse_content_range(&range) {
        let end: u64 = range
            .trim()
            .trim_start_matches("bytes ")
            .split(['-', '/'])
            .nth(1)
            .and_then(|e| e.trim().parse().ok())
            .expect("a parsed range has an end");
        assert!(start <= end);
        let _ = total;
    }
    let mut headers = HeaderMap::new();
    for (name, value) in [
        ("repr-digest", &digest),
        ("digest", &digest),
        ("etag", &etag),
    ] {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    }
    let _ = declared_sha256(&headers);
    if let Some(v) = validator(&headers) {
        assert!(!v.starts_with("W/"), "a weak tag never guards a resume");
    }
}

#[test]
fn fuzz_file_names() {
    run(QUICK, content_disposition(), check_file_name);
}

#[test]
fn fuzz_callback_requests() {
    run(QUICK, callback_request(), check_callback_request);
}

#[test]
fn fuzz_json_answers() {
    run(QUICK, json_answer(), check_json_answer);
}

#[test]
fn fuzz_ranges_and_digests() {
    run(QUICK, ranges(), check_ranges);
}

#[test]
#[ignore = "long run: cargo test --release -p kluis-core -- --ignored fuzz"]
fn fuzz_file_names_long() {
    run(LONG, content_disposition(), check_file_name);
}

#[test]
#[ignore = "long run: cargo test --release -p kluis-core -- --ignored fuzz"]
fn fuzz_callback_requests_long() {
    run(LONG, callback_request(), check_callback_request);
}

#[test]
#[ignore = "long run: cargo test --release -p kluis-core -- --ignored fuzz"]
fn fuzz_json_answers_long() {
    run(LONG, json_answer(), check_json_answer);
}

#[test]
#[ignore = "long run: cargo test --release -p kluis-core -- --ignored fuzz"]
fn fuzz_ranges_and_digests_long() {
    run(LONG, ranges(), check_ranges);
}
