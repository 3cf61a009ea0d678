//! Property tests of what reads an import file: any bytes — and CSV-shaped text with hostile
//! cells (quotes, delimiters, formula-like and control characters, BOMs, Windows-1252) and
//! rows of up to twice the columns allowed, and workbooks made of hostile parts (cells at any
//! reference up to `XFD1048576`, rows and dimensions of any size, shared strings declaring any
//! count) — are read, mapped and previewed without a panic or a table past the bounds; every
//! row comes out added, updated or skipped, a skipped row with a reason, and what is shown has
//! no secret's field.
//!
//! `cargo test -p kluis-import fuzz` runs each on 512 generated inputs; the long run,
//! `cargo test --release -p kluis-import -- --ignored fuzz`, on 100,000 each.

use kluis_core::property::{run, LONG, QUICK};
use proptest::prelude::*;

use std::io::Write;

use crate::table::{MAX_COLUMNS, MAX_ROWS};
use crate::{preview, read_csv, read_file, Action, Known, Mapping};

/// A column's letters as a spreadsheet names it (0 → `A`, 16383 → `XFD`).
pub(crate) fn column_name(mut n: u32) -> String {
    let mut name = Vec::new();
    loop {
        name.push(b'A' + (n % 26) as u8);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    name.reverse();
    String::from_utf8(name).expect("ASCII")
}

/// A workbook (.xlsx) of the parts a reader needs: one sheet of `cells` (0-based row and
/// column, text; odd rows' texts shared, the rest inline), its `<dimension>` saying
/// `dimension`, and shared strings whose `<sst>` declares `declared` (none: the count there
/// is) and holds `extra` empty ones besides.
pub(crate) fn workbook(
    cells: &[(u32, u32, String)],
    dimension: &str,
    declared: Option<&str>,
    extra: usize,
) -> Vec<u8> {
    const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    const RELS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
    const DOC: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let escape = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;");
    let mut shared = Vec::new();
    let mut rows: std::collections::BTreeMap<u32, String> = Default::default();
    for (row, col, value) in cells {
        let at = format!("{}{}", column_name(*col), row + 1);
        let cell = match row % 2 {
            1 => {
                shared.push(format!("<si><t>{}</t></si>", escape(value)));
                format!("<c r=\"{at}\" t=\"s\"><v>{}</v></c>", shared.len() - 1)
            }
            _ => format!(
                "<c r=\"{at}\" t=\"inlineStr\"><is><t>{}</t></is></c>",
                escape(value)
            ),
        };
        rows.entry(*row).or_default().push_str(&cell);
    }
    let sheet_data: String = (rows.iter())
        .map(|(row, cells)| format!("<row r=\"{}\">{cells}</row>", row + 1))
        .collect();
    shared.extend(std::iter::repeat_n("<si/>".to_string(), extra));
    let count = shared.len().to_string();
    let declared = declared.unwrap_or(&count);
    let parts = [
        ("_rels/.rels", format!("<Relationships xmlns=\"{RELS}\"><Relationship Id=\"rId1\" Type=\"{DOC}/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>")),
        ("xl/workbook.xml", format!("<workbook xmlns=\"{MAIN}\" xmlns:r=\"{DOC}\"><sheets><sheet name=\"Klanten\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>")),
        ("xl/_rels/workbook.xml.rels", format!("<Relationships xmlns=\"{RELS}\"><Relationship Id=\"rId1\" Type=\"{DOC}/worksheet\" Target=\"worksheets/sheet1.xml\"/></Relationships>")),
        ("xl/worksheets/sheet1.xml", format!("<worksheet xmlns=\"{MAIN}\"><dimension ref=\"{dimension}\"/><sheetData>{sheet_data}</sheetData></worksheet>")),
        ("xl/sharedStrings.xml", format!("<sst xmlns=\"{MAIN}\" count=\"{declared}\" uniqueCount=\"{declared}\">{}</sst>", shared.concat())),
    ];
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in parts {
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// A workbook whose header is `Naam` and whose `rows` rows below it each hold the one shared
/// string `text` (a text shared by many cells, as a spreadsheet stores it once).
pub(crate) fn workbook_sharing(text: &str, rows: u32) -> Vec<u8> {
    let plain = workbook(&[(0, 0, "Naam".to_string())], "A1", None, 0);
    let sheet_data: String = std::iter::once(
        "<row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>Naam</t></is></c></row>".to_string(),
    )
    .chain(
        (2..rows + 2).map(|r| format!("<row r=\"{r}\"><c r=\"A{r}\" t=\"s\"><v>0</v></c></row>")),
    )
    .collect();
    replaced(&plain, |name, text_of| {
        match name {
        "xl/worksheets/sheet1.xml" => Some(text_of.replace(
            "<sheetData><row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>Naam</t></is></c></row></sheetData>",
            &format!("<sheetData>{sheet_data}</sheetData>"),
        )),
        "xl/sharedStrings.xml" => Some(format!(
            "<sst xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" count=\"{rows}\" uniqueCount=\"1\"><si><t>{text}</t></si></sst>"
        )),
        _ => None,
    }
    })
}

/// `workbook` with `pad` bytes of an XML comment before its shared strings' `<sst>` tag.
pub(crate) fn with_padded_shared_strings(workbook: &[u8], pad: usize) -> Vec<u8> {
    replaced(workbook, |name, text| {
        (name == "xl/sharedStrings.xml").then(|| format!("<!--{}-->{text}", " ".repeat(pad)))
    })
}

/// `workbook` with each part that `change` gives new text for (by name) replaced.
fn replaced(workbook: &[u8], change: impl Fn(&str, &str) -> Option<String>) -> Vec<u8> {
    use std::io::Read;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(workbook)).unwrap();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let mut part = archive.by_index(i).unwrap();
        let name = part.name().unwrap().to_string();
        let mut text = String::new();
        part.read_to_string(&mut text).unwrap();
        let text = change(&name, &text).unwrap_or(text);
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// Workbooks of hostile parts (see the module's text).
fn workbook_file() -> impl Strategy<Value = Vec<u8>> {
    let at = prop_oneof![
        (0..8u32, 0..8u32),
        (0..1_048_576u32, 0..16_384u32),
        (Just(1_048_575u32), Just(16_383u32)),
        (
            0..(MAX_ROWS as u32 + 10),
            (MAX_COLUMNS as u32 - 2)..(MAX_COLUMNS as u32 + 2)
        ),
    ];
    let cells = proptest::collection::vec(
        (at, "[a-zA-Z0-9 =<&]{0,8}").prop_map(|((r, c), v)| (r, c, v)),
        0..40,
    );
    let dimension = prop_oneof![
        Just("A1".to_string()),
        Just("A1:XFD1048576".to_string()),
        "[A-Z]{1,3}[0-9]{1,8}(:[A-Z]{1,3}[0-9]{1,8})?",
    ];
    let declared = prop_oneof![
        Just(None),
        Just(Some("99999999999999".to_string())),
        Just(Some("-1".to_string())),
        "[0-9]{1,20}".prop_map(Some),
    ];
    (cells, dimension, declared, 0..3_000usize).prop_map(|(cells, dimension, declared, extra)| {
        workbook(&cells, &dimension, declared.as_deref(), extra)
    })
}

/// Any workbook: a table within the bounds, or a clear refusal.
fn check_workbook(bytes: Vec<u8>) {
    if let Ok(table) = read_file(&bytes) {
        assert!(table.header.len() <= MAX_COLUMNS);
        assert!(table.rows.len() <= MAX_ROWS);
        assert!(table.rows.iter().all(|r| r.cells.len() <= MAX_COLUMNS));
        check_table(table);
    }
}

#[test]
fn fuzz_workbooks() {
    run(QUICK, workbook_file(), check_workbook);
}

#[test]
#[ignore = "long fuzz run: cargo test --release -p kluis-import -- --ignored fuzz"]
fn fuzz_workbooks_long() {
    run(LONG, workbook_file(), check_workbook);
}

/// CSV files with rows of up to twice the columns allowed: read within the bound, or refused.
fn wide_csv_file() -> impl Strategy<Value = Vec<u8>> {
    let width = prop_oneof![
        0..5usize,
        (MAX_COLUMNS - 2)..(MAX_COLUMNS + 2),
        0..(2 * MAX_COLUMNS)
    ];
    let delimiter = proptest::sample::select(vec![",", ";", "\t", "|"]);
    (
        proptest::collection::vec(width, 1..4),
        delimiter,
        any::<bool>(),
    )
        .prop_map(|(widths, d, quoted)| {
            let mut text = String::new();
            for width in widths {
                let row: Vec<&str> = vec![if quoted { "\"a,;\"" } else { "a" }; width + 1];
                text.push_str(&row.join(d));
                text.push('\n');
            }
            text.into_bytes()
        })
}

#[test]
fn fuzz_wide_csv_files() {
    run(QUICK, wide_csv_file(), |bytes| {
        if let Ok(table) = read_csv(&bytes) {
            assert!(table.header.len() <= MAX_COLUMNS);
            assert!(table.rows.iter().all(|r| r.cells.len() <= MAX_COLUMNS));
        }
    });
}

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
    check_table(table);
}

/// A table read: mapped and previewed, every row added, updated or skipped with why.
fn check_table(table: crate::Table) {
    let mapping = Mapping::guess(&table.header);
    let saved = [crate::preview::SavedKlant {
        name: "Bakker".into(),
        base_url: "https://service.example/webservice_v2".into(),
    }];
    let known = Known {
        saved: &saved,
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
        // A saved klant is never moved to another address without a password given for it.
        if row.moves_from.is_some() && !row.has_password {
            assert_eq!(row.action, Action::Skip, "{row:?}");
        }
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
