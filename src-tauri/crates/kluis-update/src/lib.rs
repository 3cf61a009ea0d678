//! kluis-update: whether the publisher has a newer Kluis, and whether what is downloaded is
//! really the publisher's — for the CLI's `kluis update check` / `download` and the app.
//!
//! Parts and data flow: [`Publisher`] (`publisher.rs`: where the publisher's update manifest
//! is and the public half of its signing key — set when Kluis is built, or for an office's own
//! update server) → [`check`] (`check.rs`: the manifest — Tauri's static JSON, as `tauri
//! signer` and Tauri's updater use it — read over HTTPS, bounded; its version compared with
//! this one; an older one ignored; a signature by another key refused before anything is
//! downloaded) → [`download`] (`artifact.rs`: the build for this platform fetched, bounded,
//! its minisign signature verified against the publisher's key while it streams, the version,
//! platform and file it was signed for checked against the one announced and this Kluis's
//! own — [`Target`], `install.rs`: its platform and how it was installed — and only then
//! written, owner-only and whole, where it was asked for; [`verify_kept`] verifies such a file
//! again before it is run). [`policy`] says whether IT turned updates off on this
//! computer (a registry value under HKLM on Windows, or a file beside the program) and whether
//! today's check was made already. [`UpdateError`]: what went wrong, with a stable code and
//! words for the user.

mod artifact;
mod check;
mod error;
pub mod install;
mod manifest;
pub mod policy;
mod publisher;
mod registry;
mod signature;

pub use artifact::{download, verify_kept};
pub use check::{check, look, Found, Release};
pub use error::UpdateError;
pub use install::{InstallKind, Target};
pub use manifest::{platform, Manifest};
pub use publisher::Publisher;
/// Versions as the manifest and [`Target::artifact`] take them.
pub use semver::Version;

/// This Kluis's version.
pub fn current() -> semver::Version {
    semver::Version::parse(env!("CARGO_PKG_VERSION")).expect("the crate's version is semver")
}
