//! Declares the app's commands through the app manifest, so that each one needs an explicit
//! grant (nothing is allowed by default), and writes that grant: the permission set
//! `main-window` in `permissions/main-window.toml`, made from the same list
//! (`src/command_names.rs`), which `capabilities/default.json` gives the main window. Adding a
//! command therefore touches no JSON or TOML by hand.

use std::path::Path;

fn main() {
    write_if_changed(
        Path::new("permissions/main-window.toml"),
        &main_window_set(),
    );
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(kluis_app_commands::ALL)),
    )
    .expect("tauri build step");
}

/// The permission set that allows every one of the app's commands, and nothing else.
fn main_window_set() -> String {
    let grants: Vec<String> = kluis_app_commands::ALL
        .iter()
        .map(|name| format!("  \"allow-{}\",\n", name.replace('_', "-")))
        .collect();
    format!(
        "# Written by build.rs from src/command_names.rs: do not edit.\n\n\
         [[set]]\n\
         identifier = \"main-window\"\n\
         description = \"Every command of the app itself, and nothing else.\"\n\
         permissions = [\n{}]\n",
        grants.concat()
    )
}

/// Writes only on a change, so that the file's date does not make Cargo build again.
fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write the main window's permission set");
    }
}

mod kluis_app_commands {
    include!("src/command_names.rs");
}
