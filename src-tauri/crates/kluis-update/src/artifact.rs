//! [`download`]: a [`Release`]'s build fetched, verified against the publisher's key as it
//! streams, and only then kept.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::check::{client, unreachable, Release};
use crate::error::UpdateError;
use crate::publisher::Publisher;
use crate::signature;

/// Largest build taken: a Kluis installer is some tens of MiB.
const MAX_BUILD_BYTES: u64 = 512 * 1024 * 1024;

/// `release`'s build downloaded into folder `to` under its own name (the URL's last part,
/// made safe), verified with the publisher's key; the file appears only when it verified
/// (written to a part file, fsynced, renamed; owner-only), and nothing is left when it did not.
pub async fn download(
    publisher: &Publisher,
    release: &Release,
    to: &Path,
    extra_ca_pem: Option<&str>,
) -> Result<PathBuf, UpdateError> {
    let version = release.version.to_string();
    let (signature, _) = signature::decode(&release.signature)
        .filter(|(_, id)| *id == publisher.key_id)
        .ok_or_else(|| UpdateError::OtherKey {
            version: version.clone(),
        })?;
    let mut verifier =
        publisher
            .key
            .verify_stream(&signature)
            .map_err(|_| UpdateError::OtherKey {
                version: version.clone(),
            })?;
    let name = (release.url.path_segments().and_then(|mut s| s.next_back()))
        .and_then(kluis_core::filename::sanitize)
        .unwrap_or_else(|| format!("kluis-{version}"));
    let target = to.join(&name);
    let part = to.join(format!(".{name}.part"));
    let io = |e: std::io::Error| UpdateError::Io(format!("{}: {e}", part.display()));
    let mut file = (kluis_private::files::options().write(true).create_new(true))
        .open(&part)
        .map_err(io)?;
    let fetched = async {
        let mut response = client(extra_ca_pem)?
            .get(release.url.clone())
            .send()
            .await
            .map_err(|e| unreachable(&release.url, e.without_url()))?;
        if !response.status().is_success() {
            return Err(UpdateError::Unreachable(format!(
                "{} answered {}.",
                release.url.as_str(),
                response.status()
            )));
        }
        let mut total = 0u64;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| unreachable(&release.url, e.without_url()))?
        {
            total += chunk.len() as u64;
            if total > MAX_BUILD_BYTES {
                return Err(UpdateError::TooLarge {
                    version: version.clone(),
                    mib: MAX_BUILD_BYTES >> 20,
                });
            }
            verifier.update(&chunk);
            file.write_all(&chunk).map_err(io)?;
        }
        verifier.finalize().map_err(|_| UpdateError::Tampered {
            version: version.clone(),
        })?;
        signed_as(&signature, &release.version)?;
        file.sync_all().map_err(io)?;
        Ok(())
    }
    .await;
    drop(file);
    if let Err(e) = fetched {
        let _ = std::fs::remove_file(&part);
        return Err(e);
    }
    // Its name appears with the whole, verified file or not at all, and never over another.
    let kept = match std::fs::hard_link(&part, &target) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
        Err(_) if !target.exists() => std::fs::rename(&part, &target),
        Err(e) => Err(e),
    };
    let _ = std::fs::remove_file(&part);
    kept.map_err(|e| UpdateError::Io(format!("{}: {e}", target.display())))?;
    Ok(target)
}

/// The manifest is not signed, only each build, so its `version` proves nothing by itself: a
/// changed server could announce 9.9.9 with an older build and that build's own, valid
/// signature. The build's signature names the version it was signed for in its trusted comment
/// (`…\tversion:X.Y.Z`, as `tauri signer sign` writes it; covered by the signature, so read
/// only after it verified), and that must be the version announced. A signature without one
/// is refused too: Kluis has no older releases to let through.
fn signed_as(
    signature: &minisign_verify::Signature,
    announced: &semver::Version,
) -> Result<(), UpdateError> {
    let signed = (signature.trusted_comment().split('\t'))
        .find_map(|field| field.strip_prefix("version:"))
        .map(|v| v.trim().trim_start_matches('v'));
    match signed.map(semver::Version::parse) {
        Some(Ok(signed)) if &signed == announced => Ok(()),
        _ => Err(UpdateError::WrongVersion {
            announced: announced.to_string(),
            signed: match signed {
                Some(v) => v.chars().take(40).collect(),
                None => "no version".into(),
            },
        }),
    }
}
