//! Declares the app's commands through the app manifest, so that each one needs an explicit
//! grant in `capabilities/` (nothing is allowed by default).

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(kluis_app_commands::ALL)),
    )
    .expect("tauri build step");
}

mod kluis_app_commands {
    include!("src/command_names.rs");
}
