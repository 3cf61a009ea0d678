//! [`Accounts`]: the klanten's profiles (one per klant, secrets in the keyring) and their
//! sessions — sign-in, environment, permissions, an extra CA trusted — their encryption
//! (`encryption.rs`) and the demo's profiles (`demo.rs`).

use std::path::Path;
use std::sync::Arc;

use kluis_core::{Error, Secret, ServiceConfig};
use serde_json::Value;
use uuid::Uuid;

use super::access::{access_learner, LearnAccess};
use super::connections::Connections;
use super::shared::Shared;
use super::SessionInfo;
use crate::error::{AppError, AppResult};
use crate::permissions::{Endpoint, Permissions};
use crate::profiles::{Profile, ProfileInput, ProfileView};
use crate::secrets::SecretKind;

/// See the module's text.
pub struct Accounts {
    pub(super) shared: Arc<Shared>,
    pub(super) connections: Arc<Connections>,
    learn: Arc<LearnAccess>,
}

impl Accounts {
    pub(super) fn new(shared: Arc<Shared>, connections: Arc<Connections>) -> Accounts {
        Accounts {
            learn: access_learner(shared.profiles.clone()),
            shared,
            connections,
        }
    }

    /// Every profile, as the UI sees it.
    pub fn list(&self) -> Vec<ProfileView> {
        (self.shared.profiles.list().iter())
            .map(|p| self.shared.view(p))
            .collect()
    }

    /// Creates or updates a profile; the secrets go to the keyring, the rest to the file.
    pub async fn save_profile(&self, input: ProfileInput) -> AppResult<ProfileView> {
        let existing = match &input.id {
            Some(id) => Some(self.shared.profiles.get(id)?),
            None => None,
        };
        let id = existing
            .as_ref()
            .map(|p| p.id.clone())
            .unwrap_or_else(|| Uuid::new_v4().to_string());
        let demo = existing.as_ref().is_some_and(|p| p.demo);
        let given = |v: &Option<String>| {
            v.as_ref()
                .filter(|s| !s.is_empty())
                .map(|s| Secret::new(s.clone()))
        };
        let api_key = match given(&input.api_key) {
            Some(key) => key,
            None => (self.connections)
                .secret(&id, SecretKind::ApiKey, demo)
                .await?
                .ok_or_else(|| {
                    AppError::Core(Error::Config(
                        "Enter the api key the service operator gave your organisation.".into(),
                    ))
                })?,
        };
        let password = match given(&input.password) {
            Some(password) => password,
            None => (self.connections)
                .secret(&id, SecretKind::Password, demo)
                .await?
                .ok_or_else(|| {
                    AppError::Core(Error::Config("Enter the klant's password.".into()))
                })?,
        };
        // Validates the URL and the key's form before anything is stored.
        let config = ServiceConfig::new(
            &input.base_url,
            api_key.clone(),
            input.username.trim().to_string(),
            password.clone(),
            false,
        )?;
        let openapi_url = input
            .openapi_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(|u| config.openapi_url(u).map(String::from))
            .transpose()?;
        let name = if input.name.trim().is_empty() {
            input.username.trim().to_string()
        } else {
            input.name.trim().to_string()
        };
        // What the form does not edit is kept: the trusted CA, the plan, the monitor, the
        // retention rule, monthly verification and encryption (and the tags, unless given).
        let mut kept = existing.unwrap_or_else(|| Profile::new(&name, "", ""));
        if let Some(tags) = &input.tags {
            kept.set_tags(tags)?;
        }
        let profile = Profile {
            id: id.clone(),
            name,
            base_url: config.base_url.to_string(),
            username: config.username.clone(),
            openapi_url,
            denied: Vec::new(),
            allowed: Vec::new(),
            demo,
            ..kept
        };
        self.connections
            .store_secret(&id, SecretKind::ApiKey, api_key, demo)
            .await?;
        self.connections
            .store_secret(&id, SecretKind::Password, password, demo)
            .await?;
        self.shared.profiles.put(profile.clone())?;
        self.connections.forget(&id);
        self.shared.office_changed.notify_one();
        Ok(self.shared.view(&profile))
    }

    /// Signs out and removes the profile and its secrets from the keyring.
    pub async fn forget_profile(&self, id: &str) -> AppResult<()> {
        let profile = self.shared.profiles.get(id)?;
        self.sign_out(id).await?;
        let owned_id = id.to_string();
        kluis_profiles::secrets::off_thread(
            self.connections.store_for(profile.demo),
            move |store| {
                for kind in [SecretKind::ApiKey, SecretKind::Password] {
                    store.delete(&owned_id, kind)?;
                }
                Ok(())
            },
        )
        .await?;
        self.shared.profiles.remove(id)?;
        self.shared.office_changed.notify_one();
        Ok(())
    }

    pub async fn sign_in(&self, id: &str) -> AppResult<SessionInfo> {
        let connection = self.connections.connection(id).await?;
        if let Err(e) = connection.session.sign_in().await {
            self.connections.forget(id);
            return Err(e.into());
        }
        Ok(SessionInfo {
            profile_id: id.to_string(),
            username: self.shared.profiles.get(id)?.username,
        })
    }

    pub async fn sign_out(&self, id: &str) -> AppResult<()> {
        let removed = self.connections.forget(id);
        if let Some(connection) = removed {
            connection.session.sign_out().await;
        }
        Ok(())
    }

    pub async fn environment(&self, id: &str) -> AppResult<Value> {
        let connection = self.connections.connection(id).await?;
        let outcome = connection.session.environment().await;
        (self.learn)(id, outcome.as_ref().map(|_| ()), &[Endpoint::Environment]);
        Ok(outcome?)
    }

    pub async fn permissions(&self, id: &str) -> AppResult<Permissions> {
        let profile = self.shared.profiles.get(id)?;
        let Some(openapi_url) = &profile.openapi_url else {
            return Ok(Permissions::learnt(&profile.denied, &profile.allowed));
        };
        let connection = self.connections.connection(id).await?;
        let Some(document) = connection.session.client().description(openapi_url).await? else {
            return Ok(Permissions::learnt(&profile.denied, &profile.allowed));
        };
        Ok(Permissions::from_openapi(&document)
            .unwrap_or_else(|| Permissions::learnt(&profile.denied, &profile.allowed)))
    }

    /// "Trust a certificate": a CA certificate file picked in a native dialog opened here (the
    /// webview names no path), checked and kept with the profile; the profile's connection is
    /// made again with it. Unchanged when the dialog is cancelled.
    pub async fn choose_profile_ca(&self, id: &str) -> AppResult<ProfileView> {
        let profile = self.shared.profiles.get(id)?;
        let Some(path) = self.shared.dialogs().pick_certificate().await else {
            return Ok(self.shared.view(&profile));
        };
        let pem = read_certificate_file(&path)?;
        kluis_core::trust::describe(&pem)?;
        let profile = self.shared.profiles.update(id, |profile| {
            profile.extra_ca_pem = Some(pem);
            Ok(())
        })?;
        self.connections.forget(id);
        Ok(self.shared.view(&profile))
    }

    /// Stops trusting the profile's extra CA.
    pub fn clear_profile_ca(&self, id: &str) -> AppResult<ProfileView> {
        let mut profile = self.shared.profiles.get(id)?;
        if !profile.demo {
            profile = self.shared.profiles.update(id, |profile| {
                profile.extra_ca_pem = None;
                Ok(())
            })?;
            self.connections.forget(id);
        }
        Ok(self.shared.view(&profile))
    }
}

/// The text of a certificate file the user picked, read no further than a certificate needs.
pub(super) fn read_certificate_file(path: &Path) -> AppResult<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| {
            file.take(kluis_core::trust::MAX_PEM_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
        })
        .map_err(|e| Error::io(format!("read {}", path.display()), e))?;
    String::from_utf8(bytes).map_err(|_| {
        Error::Config(
            "That certificate is in binary (DER) form. Export it as PEM (\"Base-64 encoded\"), or ask for a .pem file."
                .into(),
        )
        .into()
    })
}
