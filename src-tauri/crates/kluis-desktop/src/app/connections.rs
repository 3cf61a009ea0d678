//! [`Connections`]: how the app reaches the service for a klant — the klant's secrets (the OS
//! keyring, or memory for the demo's), its kluis-core `ServiceConnection` (made on first use
//! and kept while the app runs; forgotten when what it was made from changes), and the
//! callback transport its jobs use, built from the settings and kept in the engine.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::encryption::Encryption;
use kluis_core::engine::{CallbackChoice, ServiceConnection, TransportNeeds};
use kluis_core::{CallbackTransport, DownloadOptions, Error, Secret};
use kluis_demo::Demo;
use kluis_profiles::secrets::off_thread;

use super::shared::Shared;
use crate::error::{AppError, AppResult};
use crate::profiles::Profile;
use crate::secrets::{MemoryStore, SecretKind, SecretStore, APP};

/// See the module's text.
pub(crate) struct Connections {
    shared: Arc<Shared>,
    /// The demo profiles' secrets: in memory, gone with the app (the same as `Shared`'s).
    pub demo_secrets: Arc<MemoryStore>,
    /// Each profile's session and downloader, made on first use.
    made: Mutex<HashMap<String, Arc<ServiceConnection>>>,
    /// Whether `made` keeps them: not in a process whose klanten are changed by another
    /// (`kluis-tray`, while the window edits them: [`DesktopAppBuilder::fresh_connections`]).
    ///
    /// [`DesktopAppBuilder::fresh_connections`]: super::DesktopAppBuilder::fresh_connections
    keep: bool,
    /// The download speed limit every download shares (Settings → Download speed).
    pub bandwidth: Arc<Bandwidth>,
    /// The demo's simulator, once started (its webhook.site stand-in serves demo profiles).
    pub demo: tokio::sync::Mutex<Option<Demo>>,
    /// webhook.site's address (tests; the demo uses its simulator's stand-in).
    webhook_site: String,
}

impl Connections {
    /// `keep`: whether each profile's connection is kept for its next backups (see
    /// [`Connections::keep`]).
    pub fn new(
        shared: Arc<Shared>,
        bandwidth: Arc<Bandwidth>,
        webhook_site: String,
        keep: bool,
    ) -> Connections {
        Connections {
            demo_secrets: shared.demo_secrets.clone(),
            shared,
            made: Mutex::default(),
            keep,
            bandwidth,
            demo: tokio::sync::Mutex::new(None),
            webhook_site,
        }
    }

    pub fn store_for(&self, demo: bool) -> Arc<dyn SecretStore> {
        self.shared.secrets_for(demo)
    }

    pub async fn secret(
        &self,
        id: &str,
        kind: SecretKind,
        demo: bool,
    ) -> AppResult<Option<Secret>> {
        let id = id.to_string();
        Ok(off_thread(self.store_for(demo), move |store| store.get(&id, kind)).await?)
    }

    pub async fn store_secret(
        &self,
        id: &str,
        kind: SecretKind,
        value: Secret,
        demo: bool,
    ) -> AppResult<()> {
        let id = id.to_string();
        Ok(off_thread(self.store_for(demo), move |store| {
            store.set(&id, kind, &value)
        })
        .await?)
    }

    /// Removes `id`'s secret of `kind` (none there is fine).
    pub async fn delete_secret(&self, id: &str, kind: SecretKind, demo: bool) -> AppResult<()> {
        let id = id.to_string();
        Ok(off_thread(self.store_for(demo), move |store| store.delete(&id, kind)).await?)
    }

    /// The session and downloader of profile `id`, made on first use.
    pub async fn connection(&self, id: &str) -> AppResult<Arc<ServiceConnection>> {
        if let Some(c) = self.made.lock().unwrap().get(id) {
            return Ok(c.clone());
        }
        let profile = self.shared.profiles.get(id)?;
        let missing = || {
            AppError::Core(Error::Config(
                "This profile has no saved api key or password. Edit the profile and enter them."
                    .into(),
            ))
        };
        let api_key = self
            .secret(id, SecretKind::ApiKey, profile.demo)
            .await?
            .ok_or_else(missing)?;
        let password = self
            .secret(id, SecretKind::Password, profile.demo)
            .await?
            .ok_or_else(missing)?;
        let config =
            profile.service_config(api_key, password, self.shared.env_ca_pem.as_deref())?;
        let options = DownloadOptions {
            bandwidth: Some(self.bandwidth.clone()),
            encryption: self.encryption_for(&profile).await?,
            min_free_bytes: self.shared.profiles.settings().min_free_bytes(),
            ..DownloadOptions::default()
        };
        let connection = Arc::new(ServiceConnection::open(config, options)?);
        if self.keep {
            (self.made.lock().unwrap()).insert(id.to_string(), connection.clone());
        }
        Ok(connection)
    }

    /// Profile `id`'s connection, forgotten (returned, to sign it out): the next one is made
    /// from the profile as it is then.
    pub fn forget(&self, id: &str) -> Option<Arc<ServiceConnection>> {
        self.made.lock().unwrap().remove(id)
    }

    /// Every connection forgotten (a setting each carries changed).
    pub fn forget_all(&self) {
        self.made.lock().unwrap().clear();
    }

    /// How `profile`'s backups are encrypted: its setting, with the passphrase from its store.
    async fn encryption_for(&self, profile: &Profile) -> AppResult<Option<Arc<Encryption>>> {
        let Some(setting) = &profile.encryption else {
            return Ok(None);
        };
        let kind = SecretKind::EncryptionPassphrase;
        let passphrase = match setting.needs_passphrase() {
            true => self.secret(&profile.id, kind, profile.demo).await?,
            false => None,
        };
        let encryption = Encryption::of(setting, passphrase.as_ref())?;
        Ok(Some(Arc::new(encryption)))
    }

    /// [`Connections::transport`] for someone at the screen (Back up now, Test connection):
    /// an earlier failure to set it up is tried again, not told again unbuilt.
    pub async fn transport_now(
        &self,
        profile_id: &str,
        connection: &ServiceConnection,
    ) -> AppResult<Arc<dyn CallbackTransport>> {
        let choice = self.shared.profiles.settings().callback;
        let transports = self.shared.engine.transports();
        transports.forget_failure(&choice.cache_key(profile_id));
        self.transport_of(choice, profile_id, connection).await
    }

    /// The callback transport of the current setting, for `profile_id`'s jobs.
    pub async fn transport(
        &self,
        profile_id: &str,
        connection: &ServiceConnection,
    ) -> AppResult<Arc<dyn CallbackTransport>> {
        let choice = self.shared.profiles.settings().callback;
        self.transport_of(choice, profile_id, connection).await
    }

    /// The callback transport `choice` makes for `profile_id`'s jobs: the one kept, else built.
    async fn transport_of(
        &self,
        choice: CallbackChoice,
        profile_id: &str,
        connection: &ServiceConnection,
    ) -> AppResult<Arc<dyn CallbackTransport>> {
        // The keyring and the demo are only asked when the transport is built, not per backup.
        let build = async {
            let relay_secret = match choice {
                CallbackChoice::Relay { .. } => {
                    self.secret(APP, SecretKind::RelaySecret, false).await?
                }
                _ => None,
            };
            let demo_profile = self.shared.profiles.get(profile_id).is_ok_and(|p| p.demo);
            let webhook_site = match self.demo.lock().await.as_ref() {
                Some(demo) if demo_profile => demo.webhook_site_url(),
                _ => self.webhook_site.clone(),
            };
            let needs = TransportNeeds {
                relay_secret,
                webhook_site: Some(webhook_site),
            };
            Ok::<_, AppError>(choice.build(connection.config(), needs).await?)
        };
        let (key, keep_failure) = (choice.cache_key(profile_id), choice.keeps_failures());
        self.shared
            .engine
            .transports()
            .get_or_build(&key, keep_failure, build)
            .await
    }
}
