//! What the desktop tests share: a stand-in for the native dialogs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use kluis_desktop::Dialogs;

/// A user who answers every dialog with `path` (and the file name asked about is recorded).
pub struct Chooses {
    pub path: PathBuf,
    pub asked: std::sync::Mutex<Vec<String>>,
}

impl Chooses {
    pub fn new(path: impl Into<PathBuf>) -> std::sync::Arc<Chooses> {
        std::sync::Arc::new(Chooses {
            path: path.into(),
            asked: Default::default(),
        })
    }
}

#[async_trait]
impl Dialogs for Chooses {
    async fn save_file(&self, file_name: &str, _folder: Option<&Path>) -> Option<PathBuf> {
        self.asked.lock().unwrap().push(file_name.to_string());
        Some(self.path.clone())
    }

    async fn pick_folder(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }

    async fn pick_program(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }
}
