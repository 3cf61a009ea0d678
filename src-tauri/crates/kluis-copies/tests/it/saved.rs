//! A saved backup as the tests need one: a file of klant "bakker" and its row in the history;
//! and copying and verifying as the tests ask for them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kluis_copies::{check_copies, copy_missing_in_background, CopyTarget};
use kluis_core::verify::Finding;

use kluis_core::download::Saved;
use kluis_core::{History, KlantKey};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// A backup of klant "bakker" saved as `local/Bakker/NAME` with `content`, recorded.
pub fn saved(history: &History, local: &Path, name: &str, content: &[u8]) -> PathBuf {
    let folder = local.join("Bakker");
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join(name);
    std::fs::write(&path, content).unwrap();
    let id = Uuid::new_v4();
    history.start(id, &bakker(), "relay").unwrap();
    let saved = Saved {
        path: path.clone(),
        bytes: content.len() as u64,
        sha256: hex::encode(Sha256::digest(content)),
        encrypted: None,
    };
    history.saved(id, &saved).unwrap();
    path
}

pub fn bakker() -> KlantKey {
    KlantKey::profile("bakker")
}

/// Every missing copy on `target`, made now.
pub async fn copy(history: &Arc<History>, target: &CopyTarget) -> Vec<kluis_copies::Copied> {
    copy_missing_in_background(history.clone(), None, vec![target.clone()], None)
        .await
        .unwrap()
}

/// What verification finds of every copy, reading each back when `read_back`.
pub async fn findings(
    history: &Arc<History>,
    target: &CopyTarget,
    read_back: bool,
) -> Vec<Finding> {
    let (history, targets) = (history.clone(), vec![target.clone()]);
    tokio::task::spawn_blocking(move || check_copies(&history, &targets, None, read_back))
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|c| c.check.finding)
        .collect()
}

/// The copy of backup `job` on `target`, fetched back in full (as a restore test of it does).
pub async fn fetched(
    history: &Arc<History>,
    target: &CopyTarget,
    job: &str,
) -> kluis_core::Result<Vec<u8>> {
    let record = history.copies_of(job).unwrap().remove(0);
    let target = target.clone();
    tokio::task::spawn_blocking(move || {
        let mut bytes = Vec::new();
        kluis_copies::Opened::open(&target, None)?.fetch(&record, &mut bytes)?;
        Ok(bytes)
    })
    .await
    .unwrap()
}
