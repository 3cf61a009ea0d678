//! The code's shape, held by a test: within each crate, no module imports one that imports it
//! back (docs/ARCHITECTURE.md, "Dependencies point down"). A module is a file or folder under
//! `src/`; what it imports is every `crate::NAME` outside comments and tests.

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

/// No module of any crate (the Tauri shell's too) is in a circle of imports.
#[test]
fn no_module_imports_one_that_imports_it_back() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(crates)
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    sources.push(crates.parent().unwrap().join("src"));
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
