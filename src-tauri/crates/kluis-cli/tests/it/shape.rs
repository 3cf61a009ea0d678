//! The code's shape, held by a test: within each crate, no module imports one that imports it
//! back (docs/ARCHITECTURE.md, "Dependencies point down"). A module is a file or folder under
//! `src/`; what it imports is every `crate::NAME` outside comments and tests. And no source
//! file is longer than 500 lines before its tests but those ARCHITECTURE.md names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The names after `crate::` (and inside `use crate::{…}`, its first level) in `code`,
/// comments and the test module left out.
fn imported(code: &str) -> BTreeSet<String> {
    // (The test module is last; a `#[cfg(test)]` on one item earlier is not the end.)
    let code = code
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    let code: String = code
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |text: &str| -> String {
        (text.chars())
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let after = &code[at + "crate::".len()..];
        match after.strip_prefix('{') {
            Some(group) => names.extend(first_level(group).map(|part| ident(part.trim()))),
            None => {
                names.insert(ident(after));
            }
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// The parts of a `{…}` group (its text after the `{`) at its first level, up to its own `}`:
/// `a::{b, c}, d}` is `a::{b, c}` and `d`.
fn first_level(group: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0usize;
    let mut parts = Vec::new();
    let mut start = 0;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                parts.push(&group[start..at]);
                return parts.into_iter();
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&group[start..]);
    parts.into_iter()
}

/// The modules of the crate whose sources are in `src` and what each imports of the others.
fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let top = relative.components().next().unwrap().as_os_str();
        let top = Path::new(top)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if ["lib", "main"].contains(&top.as_str()) {
            continue;
        }
        let code = std::fs::read_to_string(&file).unwrap();
        let mut names = imported(&code);
        names.remove(&top);
        graph.entry(top).or_default().extend(names);
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for names in graph.values_mut() {
        names.retain(|n| modules.contains(n));
    }
    graph
}

/// Whether `to` is reached from `from` in `graph`.
fn reaches(graph: &Graph, from: &str, to: &str) -> bool {
    let (mut seen, mut next) = (BTreeSet::new(), vec![from.to_string()]);
    while let Some(module) = next.pop() {
        for import in graph.get(&module).into_iter().flatten() {
            if import == to {
                return true;
            }
            if seen.insert(import.clone()) {
                next.push(import.clone());
            }
        }
    }
    false
}

/// The `src/` folder of every crate and of the Tauri shell.
fn source_folders() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(crates)
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    sources.push(crates.parent().unwrap().join("src"));
    sources
}

/// No module of any crate (the Tauri shell's too) is in a circle of imports.
#[test]
fn no_module_imports_one_that_imports_it_back() {
    let sources = source_folders();
    let mut circles = Vec::new();
    for src in &sources {
        let graph = graph(src);
        for (module, imports) in &graph {
            let back: Vec<&String> = (imports.iter())
                .filter(|import| reaches(&graph, import, module))
                .collect();
            if !back.is_empty() {
                circles.push(format!("{}: {module} ↔ {back:?}", src.display()));
            }
        }
    }
    assert!(sources.len() > 10, "every crate was read: {sources:?}");
    assert!(
        circles.is_empty(),
        "circles of imports:\n{}",
        circles.join("\n")
    );
}

/// Longer by nature, and named so in docs/ARCHITECTURE.md ("Files stay under 500 lines"); and
/// the UI's types, generated from Rust.
const LONG_BY_NATURE: [&str; 6] = [
    "ui/src/bindings.ts",
    "src-tauri/src/commands.rs",
    "src-tauri/crates/kluis-relay/src/storage/sqlite.rs",
    "src-tauri/crates/kluis-relay/src/storage/postgres/mod.rs",
    "ui/src/texts/en.ts",
    "ui/src/texts/nl.ts",
];

/// Lines of `code` before its test module (`#[cfg(test)]` on a line of its own).
fn lines_before_tests(code: &str) -> usize {
    code.lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .count()
}

/// Every Rust source file (tests' own files aside) and the UI's TypeScript (its tests aside)
/// stays under 500 lines before its tests, but those named as long by nature.
#[test]
fn no_file_is_longer_than_500_lines_before_its_tests_but_those_named_here() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let root = root.canonicalize().unwrap();
    let mut files = Vec::new();
    for src in source_folders() {
        rust_files(&src, &mut files);
    }
    let mut ui = vec![root.join("ui/src")];
    while let Some(dir) = ui.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            let name = path.to_string_lossy().into_owned();
            if path.is_dir() {
                ui.push(path);
            } else if name.ends_with(".ts") && !name.ends_with(".test.ts") {
                files.push(path);
            }
        }
    }
    assert!(
        files.len() > 100,
        "every source file was read: {}",
        files.len()
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let code = std::fs::read_to_string(file).unwrap();
            let relative = file.canonicalize().unwrap();
            let relative = relative.strip_prefix(&root).unwrap().to_string_lossy();
            let lines = lines_before_tests(&code);
            (lines > 500 && !LONG_BY_NATURE.contains(&relative.as_ref()))
                .then(|| format!("{relative}: {lines} lines"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "over 500 lines before their tests, one concern each (split them, or name them in docs/ARCHITECTURE.md and here):\n{}",
        long.join("\n")
    );
    let example = "a\nb\n#[cfg(test)]\nmod tests {}\n";
    assert_eq!(lines_before_tests(example), 2);
}

/// The check finds a circle where there is one (two modules importing each other).
#[test]
fn a_circle_is_found() {
    let graph: Graph = [
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
        ("d".to_string(), BTreeSet::from(["a".to_string()])),
    ]
    .into();
    assert!(reaches(&graph, "b", "a"), "a → b → c → a");
    assert!(!reaches(&graph, "a", "d"), "d is outside it");
    let code = "use crate::{alpha, beta::{Gamma, zeta}, eta};\n// crate::commented\nfn f() { crate::delta::go(); }\n#[cfg(test)]\nmod tests { use crate::epsilon; }";
    let names: Vec<String> = imported(code).into_iter().collect();
    assert_eq!(
        names,
        ["alpha", "beta", "delta", "eta"],
        "the first level of a nested group"
    );
}
