//! The native dialogs, opened by the Rust side.
//!
//! A path never travels from the webview: if the page were ever compromised (an injected
//! script, a malicious service answer rendered as HTML), a command taking a path would let it
//! write a backup with a server-chosen name anywhere — over an existing file, or into an
//! autostart folder — or run any program as "cloudflared". So the commands that need a place
//! or a program open the dialog themselves through [`Dialogs`], and only what the user chose
//! there is used. The save dialog asks before it replaces an existing file (GTK's overwrite
//! confirmation); that file is the only one Kluis ever replaces.
//!
//! The Tauri shell implements [`Dialogs`] with the dialog plugin's Rust API; tests give a
//! scripted one.

use std::path::{Path, PathBuf};

use async_trait::async_trait;

/// What the user chose in a native dialog; `None` when it was cancelled.
#[async_trait]
pub trait Dialogs: Send + Sync {
    /// Where to save `file_name`, starting in `folder`.
    async fn save_file(&self, file_name: &str, folder: Option<&Path>) -> Option<PathBuf>;
    /// A folder (for "Always save to this folder").
    async fn pick_folder(&self) -> Option<PathBuf>;
    /// A program (cloudflared, when it is not on `PATH`).
    async fn pick_program(&self) -> Option<PathBuf>;
    /// A CA certificate file (PEM) for a profile to trust.
    async fn pick_certificate(&self) -> Option<PathBuf>;
    /// A private key file (an SFTP copy target's login). None where no dialog offers it.
    async fn pick_key_file(&self) -> Option<PathBuf> {
        None
    }
    /// A list of klanten to import, or a password manager's export (*Import klanten…*). None
    /// where no dialog offers it.
    async fn pick_import_file(&self, _kind: ImportFile) -> Option<PathBuf> {
        None
    }
    /// The recovery kit's key file, or its page (*Restore from a copy…*). None where no
    /// dialog offers it.
    async fn pick_recovery_key(&self) -> Option<PathBuf> {
        None
    }
}

/// Which file *Import klanten…* asks for (the dialog's filter and title follow it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFile {
    /// The office's list: a spreadsheet's CSV or workbook.
    Klanten,
    /// A password manager's export (CSV, JSON or XML).
    PasswordManager,
}

/// No dialogs (headless use before the shell set its own): every dialog counts as cancelled.
pub struct NoDialogs;

#[async_trait]
impl Dialogs for NoDialogs {
    async fn save_file(&self, _: &str, _: Option<&Path>) -> Option<PathBuf> {
        None
    }

    async fn pick_folder(&self) -> Option<PathBuf> {
        None
    }

    async fn pick_program(&self) -> Option<PathBuf> {
        None
    }

    async fn pick_certificate(&self) -> Option<PathBuf> {
        None
    }
}

/// Where a save dialog starts: the user's Downloads (or Documents, or home) folder, never the
/// app's working directory.
pub fn default_folder() -> Option<PathBuf> {
    let dirs = directories::UserDirs::new()?;
    dirs.download_dir()
        .or(dirs.document_dir())
        .map(Path::to_path_buf)
        .or_else(|| Some(dirs.home_dir().to_path_buf()))
}
