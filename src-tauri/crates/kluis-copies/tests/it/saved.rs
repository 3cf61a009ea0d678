//! A saved backup as the tests need one: a file of klant "bakker" and its row in the history.

use std::path::{Path, PathBuf};

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
