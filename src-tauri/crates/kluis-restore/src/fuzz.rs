//! Property tests of what reads an archive from outside: the entry-name sanitiser and the
//! archive reader (open, list, restore) on archives mutated at random. Each property holds for
//! any input: no panic, no path outside the folder, and nothing written outside it.
//!
//! `cargo test -p kluis-restore fuzz` runs each on 512 generated inputs; the long run,
//! `cargo test --release -p kluis-restore -- --ignored fuzz`, on 100,000 each.

use std::io::Write;
use std::path::Path;

use kluis_core::property::{run, LONG, QUICK};
use proptest::prelude::*;

use crate::entry_path::safe_parts;
use crate::{restore, Backup, RestoreOptions};

/// Names shaped like an attack (separators, dots, drives, devices), mixed with anything.
fn entry_name() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::string::string_regex(r"([a-zA-Z]:)?([/\\]{0,2}(\.{1,3}|[ .]{0,2}|CON|lpt1|[a-z\u{e9}?*<>|:\u{0}-\u{1f}]{0,8})){0,6}[/\\]?")
            .unwrap(),
        any::<String>(),
        proptest::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

fn check_name(name: String) {
    if let Ok(parts) = safe_parts(&name) {
        assert!(!parts.is_empty(), "{name:?}");
        for part in &parts {
            assert!(
                !part.is_empty() && part != "." && part != "..",
                "{name:?} → {parts:?}"
            );
            assert!(!part.contains(['/', '\\', ':']), "{name:?} → {parts:?}");
            assert!(!part.chars().any(char::is_control), "{name:?} → {parts:?}");
            assert!(
                !part.starts_with('.') && !part.ends_with([' ', '.']),
                "{name:?} → {parts:?}"
            );
        }
    }
}

/// A small archive with a folder, a stored and a deflated file.
fn sample() -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default();
    let stored = deflated.compression_method(zip::CompressionMethod::Stored);
    zip.add_directory("2025/", deflated).unwrap();
    zip.start_file("2025/grootboek.csv", deflated).unwrap();
    zip.write_all(&b"datum;bedrag\n".repeat(40)).unwrap();
    zip.start_file("README.txt", stored).unwrap();
    zip.write_all(b"read me").unwrap();
    zip.finish().unwrap().into_inner()
}

/// The sample with up to eight bytes changed, and maybe cut short.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    let base = sample();
    let len = base.len();
    (
        proptest::collection::vec((0..len, any::<u8>()), 0..8),
        proptest::option::of(0..len),
    )
        .prop_map(move |(changes, cut)| {
            let mut bytes = base.clone();
            for (at, value) in changes {
                bytes[at] = value;
            }
            if let Some(cut) = cut {
                bytes.truncate(cut);
            }
            bytes
        })
}

/// Opening, listing and restoring a mutated archive never panics, and whatever is written
/// lands in the folder asked for.
fn check_archive(dir: &Path, bytes: Vec<u8>) {
    let case = dir.join(uuid::Uuid::new_v4().simple().to_string());
    let (file, out) = (case.join("backup.zip"), case.join("out"));
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(&file, &bytes).unwrap();
    if let Ok(mut backup) = Backup::open(&file, None) {
        for entry in backup.entries() {
            if let Some(path) = &entry.path {
                check_name(path.clone());
            }
        }
        let options = RestoreOptions {
            keep_going: true,
            ..RestoreOptions::default()
        };
        let _ = restore(&mut backup, &out, &options, &mut |_, _| {});
    }
    let mut beside: Vec<_> = std::fs::read_dir(&case)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    beside.sort();
    assert_eq!(
        beside,
        ["backup.zip", "out"],
        "nothing written beside the folder"
    );
    std::fs::remove_dir_all(&case).unwrap();
}

#[test]
fn fuzz_entry_names() {
    run(QUICK, entry_name(), check_name);
}

#[test]
#[ignore = "long fuzz run: cargo test --release -p kluis-restore -- --ignored fuzz"]
fn fuzz_entry_names_long() {
    run(LONG, entry_name(), check_name);
}

#[test]
fn fuzz_archives() {
    let dir = tempfile::tempdir().unwrap();
    run(QUICK, mutated(), |bytes| check_archive(dir.path(), bytes));
}

#[test]
#[ignore = "long fuzz run: cargo test --release -p kluis-restore -- --ignored fuzz"]
fn fuzz_archives_long() {
    let dir = tempfile::tempdir().unwrap();
    run(LONG, mutated(), |bytes| check_archive(dir.path(), bytes));
}
