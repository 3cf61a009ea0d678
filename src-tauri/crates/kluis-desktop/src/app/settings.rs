//! [`AppSettings`]: the save folder and the tunnel program (from Rust-side dialogs), how the
//! service reaches this computer and Test connection, the download speed, the free space kept
//! and how unattended backups' files are named; the window's language, for the tray. (How many backups run at once is the plans'
//! setting, `plans.rs`; e-mail and notifications are the alerts', `alerts.rs`, `mail.rs`.)

use std::path::PathBuf;
use std::sync::Arc;

use kluis_core::download::bandwidth::BandwidthLimit;
use kluis_core::engine::CallbackChoice;
use kluis_core::{Error, Secret};

use super::connections::Connections;
use super::shared::Shared;
use super::TUNNEL_PROGRAM;
use crate::callback::{CallbackInput, CallbackTestResult};
use crate::error::AppResult;
use crate::profiles::Settings;
use crate::secrets::{SecretKind, APP};

/// See the module's text.
pub struct AppSettings {
    pub(super) shared: Arc<Shared>,
    pub(super) connections: Arc<Connections>,
}

impl AppSettings {
    /// The settings as the app applies them.
    pub fn current(&self) -> Settings {
        self.shared.settings()
    }

    /// The language Kluis speaks where the window does not (the tray, notifications): the
    /// window's, else the OS's.
    pub fn language(&self) -> kluis_profiles::Language {
        self.shared.language()
    }

    /// "Always save to this folder": the folder comes from a native dialog opened here.
    /// Unchanged when the dialog is cancelled.
    pub async fn choose_save_folder(&self) -> AppResult<Settings> {
        match self.shared.dialogs().pick_folder().await {
            Some(folder) => self.set_save_folder(Some(folder)),
            None => Ok(self.current()),
        }
    }

    /// Back to asking where to save each backup.
    pub fn clear_save_folder(&self) -> AppResult<Settings> {
        self.set_save_folder(None)
    }

    fn set_save_folder(&self, folder: Option<PathBuf>) -> AppResult<Settings> {
        if let Some(folder) = &folder {
            if !folder.is_dir() {
                let folder = folder.display();
                return Err(Error::Config(format!("The folder {folder} does not exist.")).into());
            }
        }
        self.shared.profiles.update_settings(|settings| {
            settings.save_folder = folder.map(|f| f.to_string_lossy().into_owned());
            Ok(())
        })?;
        Ok(self.current())
    }

    /// The language the window shows (its choice, or the OS's it detected), kept so that the
    /// tray speaks it too; unchanged settings are not written again.
    pub fn set_language(&self, language: kluis_profiles::Language) -> AppResult<Settings> {
        if self.current().language != Some(language) {
            self.shared.profiles.update_settings(|settings| {
                settings.language = Some(language);
                Ok(())
            })?;
        }
        Ok(self.current())
    }

    /// Settings → download speed: one limit for every download together (none: no limit),
    /// optionally during office hours only; running downloads follow it at once.
    pub fn set_bandwidth(&self, limit: Option<BandwidthLimit>) -> AppResult<Settings> {
        if let Some(limit) = &limit {
            limit.check()?;
        }
        self.shared.profiles.update_settings(|settings| {
            settings.bandwidth = limit.clone();
            Ok(())
        })?;
        self.connections.bandwidth.set_limit(limit.clone())?;
        self.shared.upload_pace.set_limit(limit)?;
        Ok(self.current())
    }

    /// Settings → free space: no backup is asked for while the disk it goes to has less free
    /// than `mib` MiB (none: the default, 100). Backups started after this follow it.
    pub fn set_min_free(&self, mib: Option<u64>) -> AppResult<Settings> {
        self.shared.profiles.update_settings(|settings| {
            settings.min_free_mib = mib;
            Ok(())
        })?;
        // Each klant's connection carries the minimum: made again at the next backup.
        self.connections.forget_all();
        Ok(self.current())
    }

    /// Settings → how unattended backups' files are named (see `kluis_profiles::file_names`);
    /// an empty template goes back to the default. Refused, with the reason, when it cannot
    /// name each day's backup.
    pub fn set_file_name_template(&self, template: &str) -> AppResult<Settings> {
        let template = match template.trim() {
            "" => None,
            text => Some(
                kluis_profiles::FileNameTemplate::parse(text)?
                    .as_str()
                    .to_string(),
            ),
        };
        self.shared.profiles.update_settings(|settings| {
            settings.file_name_template = template;
            Ok(())
        })?;
        Ok(self.current())
    }

    /// Settings → tunnel: cloudflared picked in a native dialog opened here (when it is not
    /// on `PATH`), and saved as the tunnel setting. Unchanged when the dialog is cancelled.
    pub async fn choose_tunnel_program(&self) -> AppResult<Settings> {
        let Some(program) = self.shared.dialogs().pick_program().await else {
            return Ok(self.current());
        };
        self.shared.profiles.update_settings(|settings| {
            settings.callback = CallbackChoice::Tunnel {
                program: program.to_string_lossy().into_owned(),
            };
            Ok(())
        })?;
        self.shared.engine.transports().clear();
        Ok(self.current())
    }

    /// Saves how the service reaches this computer (and the relay's secret, to the keyring).
    pub async fn set_callback(&self, input: CallbackInput) -> AppResult<Settings> {
        input.setting.check()?;
        // The webview names no program: `cloudflared` (found on PATH), or the one the user
        // picked in the dialog of [`AppSettings::choose_tunnel_program`], unchanged.
        if let CallbackChoice::Tunnel { program } = &input.setting {
            let picked = matches!(&self.shared.profiles.settings().callback, CallbackChoice::Tunnel { program: p } if p == program);
            if program.trim() != TUNNEL_PROGRAM && !picked {
                return Err(Error::Config(
                    "Choose the cloudflared program with “Choose…”, or use cloudflared from the PATH.".into(),
                )
                .into());
            }
        }
        let mut secret_saved_now = false;
        if let Some(secret) = input.relay_secret.filter(|s| !s.trim().is_empty()) {
            (self.connections)
                .store_secret(
                    APP,
                    SecretKind::RelaySecret,
                    Secret::new(secret.trim().to_string()),
                    false,
                )
                .await?;
            secret_saved_now = true;
        }
        self.shared.profiles.update_settings(|settings| {
            settings.relay_secret_saved |= secret_saved_now;
            if matches!(input.setting, CallbackChoice::Relay { .. }) && !settings.relay_secret_saved
            {
                return Err(kluis_profiles::ProfileError::Core(Error::Config(
                    "Enter the relay's secret (KLUIS_RELAY_SECRET on the relay server).".into(),
                )));
            }
            settings.callback = input.setting;
            Ok(())
        })?;
        self.shared.engine.transports().clear();
        Ok(self.current())
    }

    /// Sends a test call through the chosen transport's public address, as the service
    /// would, and reports how long it took to come back — or which step failed.
    pub async fn test_callback(&self, profile_id: &str) -> AppResult<CallbackTestResult> {
        let connection = self.connections.connection(profile_id).await?;
        let transport = self
            .connections
            .transport_now(profile_id, &connection)
            .await?;
        let took = kluis_core::engine::test_transport(&*transport, connection.config()).await?;
        Ok(CallbackTestResult {
            transport: transport.name().to_string(),
            millis: took.as_millis() as u64,
        })
    }
}
