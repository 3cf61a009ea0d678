//! Property tests of what reads an import file: any bytes — and CSV-shaped text with hostile
//! cells (quotes, delimiters, formula-like and control characters, BOMs, Windows-1252) — are
//! read, mapped and previewed without a panic; every row comes out added, updated or skipped,
//! a skipped row with a reason, and what is shown has no secret's field.
//!
//! `cargo test -p kluis-import fuzz` runs each on 512 generated inputs; the long run,
//! `cargo test --release -p kluis-import -- --ignored fuzz`, on 100,000 each.

use kluis_core::property::{run, LONG, QUICK};
use proptest::prelude::*;

use crate::{preview, read_csv, Action, Known, Mapping};

/// A CSV file as an office's might look, with hostile cells, as bytes (sometimes with a BOM,
/// sometimes in Windows-1252).
fn csv_file() -> impl Strategy<Value = Vec<u8>> {
    let cell = proptest::string::string_regex(
        r#"("?[=+@\-]?[a-zA-Z0-9 .:/\u{e9}\u{0}-\u{1f}";,\t|]{0,12}"?)"#,
    )
    .unwrap();
    let header = proptest::sample::subsequence(
        vec![
            "naam",
            "username",
            "wachtwoord",
            "api_key",
            "url",
            "plan",
            "bewaren",
            "tags",
            "x",
        ],
        0..9,
    );
    let delimiter = proptest::sample::select(vec![",", ";", "\t", "|"]);
    let rows = proptest::collection::vec(proptest::collection::vec(cell, 0..10), 0..20);
    let form = 0..3u8;
    (header, delimiter, rows, form).prop_map(|(header, delimiter, rows, form)| {
        let mut text = header.join(delimiter);
        for row in rows {
            text.push('\n');
            text.push_str(&row.join(delimiter));
        }
        match form {
            0 => text.into_bytes(),
            1 => [b"\xEF\xBB\xBF".to_vec(), text.into_bytes()].concat(),
            _ => encoding_rs::WINDOWS_1252.encode(&text).0.into_owned(),
        }
    })
}

/// Any bytes at all, or a shaped file.
fn import_file() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![csv_file(), proptest::collection::vec(any::<u8>(), 0..512)]
}

fn check(bytes: Vec<u8>) {
    let Ok(table) = read_csv(&bytes) else {
        return; // refused with a message: fine
    };
    let mapping = Mapping::guess(&table.header);
    let known = Known {
        names: &["Bakker".to_string()],
        base_url: Some("https://service.example/webservice_v2"),
        has_api_key: true,
        vault: &[],
        front: crate::preview::Front::Cli,
    };
    let rows = preview(&table, &mapping, &known);
    assert_eq!(rows.len(), table.rows.len());
    for row in &rows {
        assert_eq!(
            row.action == Action::Skip,
            !row.problems.is_empty(),
            "{row:?}"
        );
        // What is shown has no field a secret is kept in.
        let shown = serde_json::to_value(row).unwrap();
        let keys: Vec<&String> = shown.as_object().unwrap().keys().collect();
        assert!(
            !keys.iter().any(|k| *k == "password" || *k == "api_key"),
            "{keys:?}"
        );
    }
}

/// Any bytes as a password manager's export: its logins, or a clear refusal.
fn check_vault(bytes: Vec<u8>) {
    if let Ok(logins) = crate::vault::read(&bytes) {
        assert!(logins.iter().all(|l| !l.password.is_empty()));
    }
}

/// Exports shaped like the managers' (JSON, XML, CSV), mutated, or any bytes.
fn vault_file() -> impl Strategy<Value = Vec<u8>> {
    let shaped = proptest::sample::select(vec![
        r#"{"encrypted":false,"items":[{"name":"A","login":{"username":"a","password":"p","uris":[{"uri":"https://h"}]}}]}"#,
        r#"<KeePassFile><Root><Group><Entry><String><Key>Title</Key><Value>A&amp;B</Value></String><String><Key>Password</Key><Value>p</Value></String></Entry></Group></Root></KeePassFile>"#,
        "Title,Website,Username,Password\nA,https://h,a,p\n",
    ]);
    prop_oneof![
        (
            shaped,
            proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8)
        )
            .prop_map(|(text, changes)| {
                let mut bytes = text.as_bytes().to_vec();
                for (at, byte) in changes {
                    let at = at % bytes.len();
                    bytes[at] = byte;
                }
                bytes
            }),
        proptest::collection::vec(any::<u8>(), 0..256),
    ]
}

#[test]
fn fuzz_vaults() {
    run(QUICK, vault_file(), check_vault);
}

#[test]
#[ignore = "long fuzz run: cargo test --release -p kluis-import -- --ignored fuzz"]
fn fuzz_vaults_long() {
    run(LONG, vault_file(), check_vault);
}

#[test]
fn fuzz_import_files() {
    run(QUICK, import_file(), check);
}

#[test]
#[ignore = "long fuzz run: cargo test --release -p kluis-import -- --ignored fuzz"]
fn fuzz_import_files_long() {
    run(LONG, import_file(), check);
}
