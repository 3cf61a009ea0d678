//! Settings → *Recovery kit*: the office's recovery kit made here (kluis-profiles'
//! `recovery_kit`, as `kluis recovery-kit` makes it). Its page — which holds the private key —
//! is written by Rust to a file picked in the native save dialog, owner-only, and never passes
//! through the webview; the page gets where it went and the kit's fingerprint and date. The
//! catalogs are then written to every copy target at once, so that the kit can be checked.
//! *Use the office's kit…* makes no kit: this computer writes its catalogs for the kit made on
//! another of the office's computers, its key read by Rust from the file picked in the native
//! dialog (it never passes through the webview, and only its public half and vouch key stay).

use kluis_core::Error;
use kluis_profiles::recovery_kit;
use kluis_profiles::secrets::off_thread;
use serde::Serialize;

use super::settings::AppSettings;
use crate::error::AppResult;

/// What "Make the recovery kit…" did.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct KitMade {
    /// Where its page was saved (to print, then to keep off this computer).
    pub path: String,
    /// The office key's fingerprint, as the page shows it.
    pub fingerprint: String,
    /// Each copy target whose catalog could not be written now, with why (tried again after
    /// the next backup's copies).
    pub not_written: Vec<String>,
}

impl AppSettings {
    /// Makes a new recovery kit (replacing the last: its catalogs are written again under the
    /// new one), its page saved where the native dialog says — with each copy target's own
    /// secret on it when `with_target_secrets` (for a page kept in a safe). `None` when the
    /// dialog was cancelled: nothing is made. A page whose kit could not be kept is removed
    /// again.
    pub async fn make_recovery_kit(&self, with_target_secrets: bool) -> AppResult<Option<KitMade>> {
        let before = self.current().recovery;
        let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
        let name = format!("kluis-recovery-kit-{today}.txt");
        let folder = crate::dialogs::default_folder();
        let Some(path) = (self.shared.dialogs().save_file(&name, folder.as_deref())).await else {
            return Ok(None);
        };
        let (key, setting) = recovery_kit::new_kit(before.as_ref(), None);
        let targets = match with_target_secrets {
            true => self.shared.copy_targets().await,
            false => self.current().copy_targets,
        };
        if with_target_secrets {
            recovery_kit::with_every_secret(&targets)?;
        }
        let page = recovery_kit::page(&key, &setting, &targets, before.is_some());
        let mut made = KitMade {
            path: path.display().to_string(),
            fingerprint: setting.fingerprint.clone(),
            not_written: Vec::new(),
        };
        let written = path.clone();
        tokio::task::spawn_blocking(move || {
            kluis_private::files::write_atomic(&written, page.as_bytes())
        })
        .await
        .map_err(|e| {
            Error::Io(format!(
                "Writing the recovery kit stopped unexpectedly ({e})."
            ))
        })?
        .map_err(|e| Error::io(format!("write the recovery kit to {}", path.display()), e))?;
        let profiles = self.shared.profiles.clone();
        let kept = off_thread(self.shared.secrets_for(false), move |secrets| {
            recovery_kit::keep_kit(&profiles, secrets, &key, setting)
        })
        .await;
        if let Err(e) = kept {
            let _ = std::fs::remove_file(&path);
            return Err(e.into());
        }
        made.not_written = self.shared.write_catalogs_now().await;
        Ok(Some(made))
    }

    /// *Use the office's kit…*: this computer writes its catalogs for the office's kit (made
    /// on another of its computers) from now on — its key read from the file picked in the
    /// native dialog (`None` when it was cancelled) — and writes them at once.
    pub async fn join_recovery_kit(&self) -> AppResult<Option<KitMade>> {
        let Some(file) = self.shared.dialogs().pick_recovery_key().await else {
            return Ok(None);
        };
        let key = super::recover::key_in_file(file.clone()).await?;
        let setting = recovery_kit::joined(&key, self.current().recovery.as_ref(), None);
        let mut joined = KitMade {
            path: file.display().to_string(),
            fingerprint: setting.fingerprint.clone(),
            not_written: Vec::new(),
        };
        let profiles = self.shared.profiles.clone();
        off_thread(self.shared.secrets_for(false), move |secrets| {
            recovery_kit::keep_kit(&profiles, secrets, &key, setting)
        })
        .await?;
        joined.not_written = self.shared.write_catalogs_now().await;
        Ok(Some(joined))
    }
}
