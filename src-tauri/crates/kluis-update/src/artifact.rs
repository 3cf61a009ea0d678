//! [`download`]: a [`Release`]'s build fetched, verified against the publisher's key as it
//! streams, and only then kept; [`verify_kept`]: a build kept earlier verified again before it
//! is run.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::check::{client, unreachable, Release};
use crate::error::UpdateError;
use crate::publisher::Publisher;
use crate::signature;

/// Largest build taken: a Kluis installer is some tens of MiB.
const MAX_BUILD_BYTES: u64 = 512 * 1024 * 1024;

/// `release`'s build downloaded into folder `to` under the name it must have been signed for
/// (see [`crate::install`]), verified with the publisher's key; the file appears only when it
/// verified (written to a part file of its own, fsynced, linked to its name; owner-only), and
/// nothing is left when it did not. Part files an earlier download left (Kluis's own, a day
/// old) are removed first.
pub async fn download(
    publisher: &Publisher,
    release: &Release,
    to: &Path,
    extra_ca_pem: Option<&str>,
) -> Result<PathBuf, UpdateError> {
    let version = release.version.to_string();
    let signature = publishers_signature(publisher, release)?;
    // What the signature's comment names, read before anything is fetched: a build signed for
    // another version or computer is not worth fetching. (The comment is proven only with the
    // whole file, so it is checked again then.)
    signed_for(&signature, release)?;
    let mut verifier =
        publisher
            .key
            .verify_stream(&signature)
            .map_err(|_| UpdateError::OtherKey {
                version: version.clone(),
            })?;
    let target = to.join(release.artifact());
    remove_stale_parts(to);
    // A name of its own: a part file a crash left never blocks the next download, and
    // `create_new` never opens a file or a link that is there.
    let part = to.join(format!(
        "{PART_PREFIX}{}{PART_SUFFIX}",
        uuid::Uuid::new_v4().simple()
    ));
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
        signed_for(&signature, release)?;
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
        // (A file system without hard links: renamed, when nothing — not even a link — is there.)
        Err(_) if std::fs::symlink_metadata(&target).is_err() => std::fs::rename(&part, &target),
        Err(e) => Err(e),
    };
    let _ = std::fs::remove_file(&part);
    kept.map_err(|e| UpdateError::Io(format!("{}: {e}", target.display())))?;
    Ok(target)
}

/// `release`'s build kept at `file` by an earlier [`download`], verified again as a whole (the
/// publisher's key, the version, platform and file it was signed for) before it is handed on:
/// a file that changed on disk since is refused as [`UpdateError::Tampered`] (or for what else
/// is wrong with it: gone, too large, signed for another build).
pub fn verify_kept(
    publisher: &Publisher,
    release: &Release,
    file: &Path,
) -> Result<(), UpdateError> {
    let version = release.version.to_string();
    let signature = publishers_signature(publisher, release)?;
    let io = |e: std::io::Error| UpdateError::Io(format!("{}: {e}", file.display()));
    let tampered = || UpdateError::Tampered {
        version: version.clone(),
    };
    let mut verifier = (publisher.key)
        .verify_stream(&signature)
        .map_err(|_| tampered())?;
    // (Read in pieces, as it was downloaded: a setup of tens of MiB is never held whole.)
    let mut reader = std::fs::File::open(file).map_err(io)?;
    let mut piece = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = std::io::Read::read(&mut reader, &mut piece).map_err(io)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > MAX_BUILD_BYTES {
            return Err(UpdateError::TooLarge {
                version,
                mib: MAX_BUILD_BYTES >> 20,
            });
        }
        verifier.update(&piece[..n]);
    }
    verifier.finalize().map_err(|_| tampered())?;
    signed_for(&signature, release)
}

/// `release`'s signature, when it is by `publisher`'s key.
fn publishers_signature(
    publisher: &Publisher,
    release: &Release,
) -> Result<minisign_verify::Signature, UpdateError> {
    signature::decode(&release.signature)
        .filter(|(_, id)| *id == publisher.key_id)
        .map(|(signature, _)| signature)
        .ok_or_else(|| UpdateError::OtherKey {
            version: release.version.to_string(),
        })
}

/// How Kluis names its part files: never another program's file.
const PART_PREFIX: &str = ".kluis-update-";
const PART_SUFFIX: &str = ".part";
/// A part file older than this is no download that is still running.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Removes the part files of Kluis's own naming in `folder` that are older than a day (a
/// crash's or a power cut's): only plain files — a link of that name is left, never followed.
fn remove_stale_parts(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(PART_PREFIX) && name.ends_with(PART_SUFFIX)) {
            continue;
        }
        // (`DirEntry::metadata` does not follow a link.)
        let stale = entry
            .metadata()
            .ok()
            .filter(|m| m.file_type().is_file())
            .and_then(|m| {
                let age = m.modified().ok()?.elapsed().ok()?;
                Some(age > STALE_AFTER)
            });
        if stale == Some(true) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The manifest is not signed, only each build, so what it says proves nothing by itself: a
/// changed server could announce 9.9.9 with an older build and that build's own, valid
/// signature, or offer the publisher's `.deb` (or per-machine MSI) as this computer's setup.
/// The build's signature names what it was signed for in its trusted comment
/// (`version:X.Y.Z<tab>platform:windows-x86_64<tab>file:kluis-X.Y.Z-x64-setup.exe`, as
/// tests/update/publish.sh signs; covered by the signature, so read only after it verified),
/// and each must be what this Kluis expects: the version announced, its own platform, and the
/// build of its own install kind. A signature without them is refused too: Kluis has no older
/// releases to let through.
fn signed_for(
    signature: &minisign_verify::Signature,
    release: &Release,
) -> Result<(), UpdateError> {
    let field = |name: &str| {
        (signature.trusted_comment().split('\t'))
            .find_map(|field| field.strip_prefix(name))
            .map(|value| value.trim().chars().take(80).collect::<String>())
    };
    let announced = &release.version;
    let signed = field("version:").map(|v| v.trim_start_matches('v').to_string());
    match signed.as_deref().map(semver::Version::parse) {
        Some(Ok(signed)) if &signed == announced => {}
        _ => {
            return Err(UpdateError::WrongVersion {
                announced: announced.to_string(),
                signed: signed.unwrap_or_else(|| "no version".into()),
            })
        }
    }
    let expected = (release.target.platform.clone(), release.artifact());
    match (field("platform:"), field("file:")) {
        (Some(platform), Some(file)) if (&platform, &file) == (&expected.0, &expected.1) => Ok(()),
        (platform, file) => Err(UpdateError::WrongBuild {
            version: announced.to_string(),
            expected: format!("{} for {}", expected.1, expected.0),
            signed: format!(
                "{} for {}",
                file.as_deref().unwrap_or("no file"),
                platform.as_deref().unwrap_or("no platform")
            ),
        }),
    }
}
