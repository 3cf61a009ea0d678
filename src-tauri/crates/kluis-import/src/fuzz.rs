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

#[test]
fn fuzz_import_files() {
    run(QUICK, import_file(), check);
}

#[test]
#[ignore = "long fuzz run: cargo test --release -p kluis-import -- --ignored fuzz"]
fn fuzz_import_files_long() {
    run(LONG, import_file(), check);
}
