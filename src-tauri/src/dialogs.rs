//! The native dialogs, opened from Rust with the dialog plugin's API (see
//! `kluis_desktop::dialogs` for why the webview never opens one itself).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use tauri_plugin_dialog::{DialogExt, FilePath};

pub struct TauriDialogs<R: tauri::Runtime> {
    pub handle: tauri::AppHandle<R>,
    /// The end-to-end tests' answer to the certificate dialog (`KLUIS_E2E_CERTIFICATE`):
    /// WebDriver cannot drive a native dialog.
    pub certificate: Option<PathBuf>,
    /// The end-to-end tests' answer to the folder dialogs (`KLUIS_E2E_DIALOG_FOLDER`): that
    /// folder; a save dialog answers its suggested name in it.
    pub folder: Option<PathBuf>,
    /// The end-to-end tests' answer to *Import klanten…*'s file dialog (`KLUIS_E2E_IMPORT_FILE`).
    pub import_file: Option<PathBuf>,
    /// The end-to-end tests' answer to the recovery kit's file dialog (`KLUIS_E2E_RECOVERY_KEY`).
    pub recovery_key: Option<PathBuf>,
}

/// Waits for a dialog's answer, given to a callback on the UI thread.
async fn answer(
    open: impl FnOnce(tokio::sync::oneshot::Sender<Option<FilePath>>),
) -> Option<PathBuf> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    open(tx);
    rx.await.ok().flatten().and_then(|p| p.into_path().ok())
}

#[async_trait]
impl<R: tauri::Runtime> kluis_desktop::Dialogs for TauriDialogs<R> {
    async fn save_file(&self, file_name: &str, folder: Option<&Path>) -> Option<PathBuf> {
        if let Some(answer) = &self.folder {
            return Some(answer.join(file_name));
        }
        let mut dialog = self.handle.dialog().file().set_file_name(file_name);
        if let Some(folder) = folder {
            dialog = dialog.set_directory(folder);
        }
        answer(|tx| dialog.save_file(move |p| drop(tx.send(p)))).await
    }

    async fn pick_folder(&self) -> Option<PathBuf> {
        if let Some(answer) = &self.folder {
            return Some(answer.clone());
        }
        let dialog = self.handle.dialog().file().set_can_create_directories(true);
        answer(|tx| dialog.pick_folder(move |p| drop(tx.send(p)))).await
    }

    async fn pick_program(&self) -> Option<PathBuf> {
        let dialog = self.handle.dialog().file();
        answer(|tx| dialog.pick_file(move |p| drop(tx.send(p)))).await
    }

    async fn pick_certificate(&self) -> Option<PathBuf> {
        if let Some(path) = &self.certificate {
            return Some(path.clone());
        }
        let dialog = self
            .handle
            .dialog()
            .file()
            .add_filter("Certificates", &["pem", "crt", "cer"]);
        answer(|tx| dialog.pick_file(move |p| drop(tx.send(p)))).await
    }

    async fn pick_import_file(&self, kind: kluis_desktop::ImportFile) -> Option<PathBuf> {
        use kluis_desktop::ImportFile;
        if let (Some(path), ImportFile::Klanten) = (&self.import_file, kind) {
            return Some(path.clone());
        }
        let dialog = self.handle.dialog().file();
        let dialog = match kind {
            ImportFile::Klanten => dialog
                .set_title("Import klanten")
                .add_filter("Spreadsheet", &["csv", "xlsx", "txt", "tsv"]),
            ImportFile::PasswordManager => dialog
                .set_title("A password manager's export")
                .add_filter("Export", &["csv", "json", "xml", "xlsx"]),
        };
        answer(|tx| dialog.pick_file(move |p| drop(tx.send(p)))).await
    }

    async fn pick_key_file(&self) -> Option<PathBuf> {
        // Key files have no common extension (id_ed25519; PuTTY's .ppk): no filter.
        let dialog = self.handle.dialog().file();
        answer(|tx| dialog.pick_file(move |p| drop(tx.send(p)))).await
    }

    async fn pick_recovery_key(&self) -> Option<PathBuf> {
        if let Some(path) = &self.recovery_key {
            return Some(path.clone());
        }
        // The key file `kluis recovery-kit --key-file` writes, or the kit's page (.txt).
        let dialog = self.handle.dialog().file();
        answer(|tx| dialog.pick_file(move |p| drop(tx.send(p)))).await
    }
}
