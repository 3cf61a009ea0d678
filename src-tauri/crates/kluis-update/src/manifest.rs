//! The publisher's update manifest: Tauri's static JSON (what `tauri signer` and Tauri's
//! updater use), so one manifest serves the app's updater and `kluis update`:
//!
//! ```json
//! { "version": "0.2.0", "notes": "What is new", "pub_date": "2026-12-01T10:00:00Z",
//!   "platforms": { "windows-x86_64": { "url": "https://…/kluis-0.2.0-x64-setup.exe",
//!                                        "signature": "<base64 of the .sig file>" },
//!                  "linux-x86_64": { … } } }
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

/// See the module's text.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub version: String,
    #[serde(default)]
    pub notes: Option<String>,
    #[serde(default)]
    pub pub_date: Option<String>,
    pub platforms: BTreeMap<String, Build>,
}

/// One platform's build.
#[derive(Debug, Clone, Deserialize)]
pub struct Build {
    pub url: String,
    pub signature: String,
}

/// This computer's key in `platforms`, as Tauri names them: `windows-x86_64`,
/// `linux-x86_64`, `darwin-aarch64`.
pub fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{os}-{}", std::env::consts::ARCH)
}
