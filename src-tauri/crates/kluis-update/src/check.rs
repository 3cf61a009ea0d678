//! [`check`]: whether the publisher's manifest offers a newer Kluis for this computer.

use crate::error::UpdateError;
use crate::install::Target;
use crate::manifest::{Build, Manifest};
use crate::publisher::Publisher;
use crate::signature;

/// Largest manifest read: a few hundred bytes a platform; more is no manifest.
const MAX_MANIFEST_BYTES: usize = 256 * 1024;

/// A newer Kluis the publisher offers for this computer.
#[derive(Debug, Clone)]
pub struct Release {
    pub version: semver::Version,
    /// What is new, as the publisher wrote it (shown as text, never as HTML).
    pub notes: String,
    pub url: url::Url,
    pub(crate) signature: String,
    /// What its build must have been signed for (this Kluis's platform and install kind).
    pub target: Target,
    /// The manifest as the server sent it, narrowed to this build under the platform's own
    /// key (Tauri's updater takes it again to install, and must find this build there).
    pub manifest: serde_json::Value,
}

impl Release {
    /// The name its build is kept under: the one it must have been signed for.
    pub fn artifact(&self) -> String {
        self.target.artifact(&self.version)
    }
}

/// What a check found.
#[derive(Debug, Clone)]
pub enum Found {
    /// Nothing newer; `offered_older` when the server offers an older version (a downgrade,
    /// ignored: it could bring back a flaw the newer one mends).
    UpToDate {
        offered_older: Option<semver::Version>,
    },
    Newer(Box<Release>),
}

/// The publisher's manifest read over HTTPS (bounded; the CA file `extra_ca_pem` trusted
/// besides the system's, for an office's own server) and compared with `current` for
/// `target` (its build: under the installer kind's key, else the platform's). A build whose
/// signature is not by the publisher's key is refused here, before anything is downloaded.
pub async fn check(
    publisher: &Publisher,
    current: &semver::Version,
    target: &Target,
    extra_ca_pem: Option<&str>,
) -> Result<Found, UpdateError> {
    let (manifest, raw) = fetch(publisher, extra_ca_pem).await?;
    let version =
        semver::Version::parse(manifest.version.trim().trim_start_matches('v')).map_err(|_| {
            UpdateError::NotAManifest(format!(
                "its version \"{}\" is not one (X.Y.Z).",
                manifest.version.chars().take(40).collect::<String>()
            ))
        })?;
    if &version <= current {
        let offered_older = (&version < current).then_some(version);
        return Ok(Found::UpToDate { offered_older });
    }
    let platform = &target.platform;
    let build = (target.manifest_keys().iter())
        .find_map(|key| manifest.platforms.get(key))
        .ok_or_else(|| {
            UpdateError::NotAManifest(format!(
                "it has no build of {version} for this computer ({platform}, {}); ask the publisher to list one.",
                target.described()
            ))
        })?;
    let url = url::Url::parse(&build.url)
        .ok()
        .filter(|u| u.scheme() == "https")
        .ok_or_else(|| {
            UpdateError::NotAManifest(format!(
                "the build's address for {platform} is not an https:// URL."
            ))
        })?;
    match signature::decode(&build.signature) {
        Some((_, key_id)) if key_id == publisher.key_id => {}
        _ => {
            return Err(UpdateError::OtherKey {
                version: version.to_string(),
            })
        }
    }
    Ok(Found::Newer(Box::new(Release {
        version,
        notes: manifest
            .notes
            .unwrap_or_default()
            .chars()
            .take(4000)
            .collect(),
        manifest: narrowed(&raw, platform, build),
        url,
        signature: build.signature.clone(),
        target: target.clone(),
    })))
}

/// The manifest `raw` with `build` as its only one, under `platform`'s own key.
fn narrowed(raw: &serde_json::Value, platform: &str, build: &Build) -> serde_json::Value {
    let mut narrowed = raw.clone();
    narrowed["platforms"] = serde_json::json!({
        platform: { "url": build.url, "signature": build.signature }
    });
    narrowed
}

/// The look both the CLI and the app make: [`check`] for this Kluis on this computer, and
/// what it found noted in `stamp` (see [`crate::policy::looked`]) so that a look by either
/// counts for the day. A stamp that cannot be written only means the next look comes sooner.
pub async fn look(
    publisher: &Publisher,
    extra_ca_pem: Option<&str>,
    stamp: &std::path::Path,
) -> Result<Found, UpdateError> {
    let found = check(
        publisher,
        &crate::current(),
        &Target::this_program(),
        extra_ca_pem,
    )
    .await?;
    let newer = match &found {
        Found::Newer(release) => Some(&release.version),
        Found::UpToDate { .. } => None,
    };
    if let Err(e) = crate::policy::looked(stamp, newer) {
        tracing::warn!("the update look's stamp could not be written: {e}");
    }
    Ok(found)
}

/// An HTTPS client for the update server: the system's roots and `extra_ca_pem`, https only,
/// redirects kept to https.
pub(crate) fn client(extra_ca_pem: Option<&str>) -> Result<reqwest::Client, UpdateError> {
    kluis_core::http::client_trusting(
        extra_ca_pem,
        false,
        &kluis_core::config::Timeouts::default(),
        kluis_core::http::RedirectRule::AnyAllowedUrl,
    )
    .map_err(|e| UpdateError::Config(e.to_string()))
}

/// Why a request to the update server failed, in words (never its query: none is sent).
pub(crate) fn unreachable(url: &url::Url, e: impl std::fmt::Display) -> UpdateError {
    UpdateError::Unreachable(format!(
        "{} could not be reached ({e}).",
        url.origin().ascii_serialization()
    ))
}

/// The manifest, read, and as the JSON it was.
async fn fetch(
    publisher: &Publisher,
    extra_ca_pem: Option<&str>,
) -> Result<(Manifest, serde_json::Value), UpdateError> {
    let url = &publisher.manifest;
    let mut response = client(extra_ca_pem)?
        .get(url.clone())
        .send()
        .await
        .map_err(|e| unreachable(url, e.without_url()))?;
    if !response.status().is_success() {
        return Err(UpdateError::Unreachable(format!(
            "{} answered {}.",
            url.as_str(),
            response.status()
        )));
    }
    let body = kluis_core::http::read_capped(&mut response, MAX_MANIFEST_BYTES)
        .await
        .map_err(|e| unreachable(url, e))?
        .ok_or_else(|| {
            UpdateError::NotAManifest(format!(
                "it is larger than {} KiB.",
                MAX_MANIFEST_BYTES / 1024
            ))
        })?;
    let not_one = |e: serde_json::Error| UpdateError::NotAManifest(format!("{e}."));
    let raw: serde_json::Value = serde_json::from_slice(&body).map_err(not_one)?;
    Ok((serde_json::from_value(raw.clone()).map_err(not_one)?, raw))
}
