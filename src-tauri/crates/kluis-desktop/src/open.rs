//! Showing a saved backup in the system's file manager.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{AppError, AppResult};

/// A file manager starts as it always does: without the window's script engine options.
trait WithoutEngineOptions {
    fn envs_removed(&mut self) -> &mut Self;
}

impl WithoutEngineOptions for Command {
    fn envs_removed(&mut self) -> &mut Self {
        for name in crate::window::SCRIPT_ENGINE_OPTIONS {
            self.env_remove(name);
        }
        self
    }
}

/// Opens the folder that holds `file`, with `file` selected where the file manager allows.
pub fn show_in_folder(file: &Path, select: bool) -> AppResult<()> {
    let folder = file
        .parent()
        .ok_or_else(|| AppError::NotFound("The backup's folder is unknown.".into()))?;
    if !folder.is_dir() {
        return Err(AppError::NotFound(format!(
            "The folder {} no longer exists.",
            folder.display()
        )));
    }
    let spawned = if cfg!(target_os = "macos") {
        let mut c = Command::new("open");
        if select {
            c.arg("-R").arg(file)
        } else {
            c.arg(folder)
        };
        c.stdin(Stdio::null()).spawn()
    } else if cfg!(target_os = "windows") {
        let mut c = Command::new("explorer");
        if select {
            c.arg(format!("/select,{}", file.display()))
        } else {
            c.arg(folder)
        };
        c.spawn()
    } else {
        // The freedesktop file-manager interface selects the file; xdg-open only opens folders.
        let uri = url::Url::from_file_path(file)
            .map(|u| u.to_string())
            .unwrap_or_default();
        let shown = select
            && Command::new("dbus-send")
                .envs_removed()
                .args([
                    "--session",
                    "--dest=org.freedesktop.FileManager1",
                    "--type=method_call",
                    "/org/freedesktop/FileManager1",
                    "org.freedesktop.FileManager1.ShowItems",
                ])
                .arg(format!("array:string:{uri}"))
                .arg("string:")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if shown {
            return Ok(());
        }
        Command::new("xdg-open")
            .envs_removed()
            .arg(folder)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    };
    spawned.map(|_| ()).map_err(|e| {
        AppError::InvalidState(format!(
            "No file manager could be opened ({e}). The file is at {}.",
            file.display()
        ))
    })
}
