//! Connections: a profile's secrets (the OS keyring, or memory for the demo's) and its
//! kluis-core `ServiceConnection`, made on first use and kept while the app runs.

use kluis_profiles::secrets::off_thread;

use super::*;

impl DesktopApp {
    pub(super) fn store_for(&self, demo: bool) -> Arc<dyn SecretStore> {
        if demo {
            self.demo_secrets.clone()
        } else {
            self.keyring.clone()
        }
    }

    pub(super) async fn secret(
        &self,
        id: &str,
        kind: SecretKind,
        demo: bool,
    ) -> AppResult<Option<Secret>> {
        let id = id.to_string();
        Ok(off_thread(self.store_for(demo), move |store| store.get(&id, kind)).await?)
    }

    pub(super) async fn store_secret(
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

    /// The session and downloader of a profile, made on first use.
    pub(super) async fn connection(&self, id: &str) -> AppResult<Arc<ServiceConnection>> {
        if let Some(c) = self.connections.lock().unwrap().get(id) {
            return Ok(c.clone());
        }
        let profile = self.profiles.get(id)?;
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
        let config = profile.service_config(api_key, password, self.env_ca_pem.as_deref())?;
        let options = DownloadOptions {
            bandwidth: Some(self.bandwidth.clone()),
            encryption: self.encryption_for(&profile).await?,
            min_free_bytes: self.profiles.settings().min_free_bytes(),
            ..DownloadOptions::default()
        };
        let connection = Arc::new(ServiceConnection::open(config, options)?);
        self.connections
            .lock()
            .unwrap()
            .insert(id.to_string(), connection.clone());
        Ok(connection)
    }
}
