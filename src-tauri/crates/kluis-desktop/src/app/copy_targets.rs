//! Settings → *Copies off this computer*: the copy targets (kluis-copies) every klant's
//! backups are copied to after each backup — added from a folder picked in a native dialog
//! opened here (the webview names no path), tested, removed. The copying itself follows each
//! save (`kluis_profiles::unattended::after_save`).

use kluis_copies::{CopyTarget, Place};
use kluis_core::Error;

use super::settings::AppSettings;
use crate::error::{AppError, AppResult};
use crate::profiles::Settings;

impl AppSettings {
    /// "Add a folder…": a folder picked in the native dialog becomes copy target `name`, once
    /// a test file could be written there. Unchanged when the dialog is cancelled.
    pub async fn add_copy_folder(&self, name: &str) -> AppResult<Settings> {
        // The name first: a bad one is said before a dialog is opened for nothing.
        CopyTarget::checked_name(name)?;
        let Some(folder) = self.shared.dialogs().pick_folder().await else {
            return Ok(self.current());
        };
        let place = Place::Folder {
            path: folder.to_string_lossy().into_owned(),
        };
        let target = CopyTarget::new(name, place)?;
        tested(target.clone()).await?;
        self.shared.profiles.add_copy_target(target)?;
        Ok(self.current())
    }

    /// "Test": whether copy target `id` can be written now.
    pub async fn test_copy_target(&self, id: &str) -> AppResult<()> {
        tested(self.copy_target(id)?).await
    }

    /// "Remove": no more copies go to target `id` (those it holds stay).
    pub fn remove_copy_target(&self, id: &str) -> AppResult<Settings> {
        self.copy_target(id)?;
        self.shared.profiles.remove_copy_target(id)?;
        Ok(self.current())
    }

    fn copy_target(&self, id: &str) -> AppResult<CopyTarget> {
        (self.current().copy_targets.into_iter())
            .find(|t| t.id == id)
            .ok_or_else(|| AppError::NotFound("That copy target is no longer set.".into()))
    }
}

/// `target` tested off the async threads (a share may take long to answer).
async fn tested(target: CopyTarget) -> AppResult<()> {
    tokio::task::spawn_blocking(move || kluis_copies::test(&target))
        .await
        .map_err(|e| Error::Io(format!("The test stopped unexpectedly ({e}).")))??;
    Ok(())
}
