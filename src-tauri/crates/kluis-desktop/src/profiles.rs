//! Profiles (one per klant) and app settings, in a small JSON file in the config folder.
//! Nothing secret is in it: the api key and password of a profile live in the keyring.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::error::{AppError, AppResult};
use crate::permissions::Endpoint;

/// A saved profile, without its secrets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub base_url: String,
    pub username: String,
    /// The service's OpenAPI description URL (on the base URL's origin), if known.
    #[serde(default)]
    pub openapi_url: Option<String>,
    /// Endpoints the service refused with 403 for this profile's key.
    #[serde(default)]
    pub denied: Vec<Endpoint>,
    /// Endpoints that answered this profile's key (the newest answer wins over a 403).
    #[serde(default)]
    pub allowed: Vec<Endpoint>,
    /// A demo profile (simulator, secrets in memory): never written to disk.
    #[serde(skip)]
    pub demo: bool,
    /// Extra CA certificates (PEM) this profile trusts: the user's choice for a service with a
    /// private CA or behind a TLS-inspecting proxy, or the demo's simulator CA. Public, not
    /// secret, so it is kept in the profile file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_ca_pem: Option<String>,
    /// When this klant is backed up without a click (none: only by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<kluis_core::plan::Plan>,
}

/// What the UI sees of a profile.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ProfileView {
    pub id: String,
    pub name: String,
    pub base_url: String,
    pub username: String,
    pub openapi_url: Option<String>,
    pub demo: bool,
    /// The extra CAs this profile trusts (none for the demo, whose CA is its own).
    pub trusted_cas: Vec<kluis_core::trust::TrustedCa>,
    pub plan: Option<kluis_core::plan::Plan>,
    /// When the plan runs next (ms since the epoch; now when due), or null.
    #[ts(type = "number | null")]
    pub next_backup_ms: Option<i64>,
}

impl From<&Profile> for ProfileView {
    fn from(p: &Profile) -> Self {
        ProfileView {
            id: p.id.clone(),
            name: p.name.clone(),
            base_url: p.base_url.clone(),
            username: p.username.clone(),
            openapi_url: p.openapi_url.clone(),
            demo: p.demo,
            trusted_cas: match (&p.extra_ca_pem, p.demo) {
                (Some(pem), false) => kluis_core::trust::describe(pem).unwrap_or_default(),
                _ => Vec::new(),
            },
            plan: p.plan.clone(),
            next_backup_ms: None,
        }
    }
}

/// What the UI sends to create or change a profile. Empty secrets on an existing profile
/// mean "keep the stored ones" (the UI never receives them back to show).
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct ProfileInput {
    pub id: Option<String>,
    pub name: String,
    pub base_url: String,
    pub username: String,
    pub api_key: Option<String>,
    pub password: Option<String>,
    pub openapi_url: Option<String>,
}

/// Shows whether a secret was given, never its value.
impl std::fmt::Debug for ProfileInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let given = |s: &Option<String>| s.as_ref().map(|_| "«hidden»");
        f.debug_struct("ProfileInput")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("username", &self.username)
            .field("api_key", &given(&self.api_key))
            .field("password", &given(&self.password))
            .field("openapi_url", &self.openapi_url)
            .finish()
    }
}

/// App settings the UI may read and change.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ts_rs::TS)]
pub struct Settings {
    /// Save every backup in this folder instead of asking with a save dialog.
    pub save_folder: Option<String>,
    /// How the service's callback reaches this computer.
    #[serde(default)]
    pub callback: kluis_core::CallbackChoice,
    /// Whether a relay secret is in the keyring (the secret itself never leaves it).
    #[serde(default)]
    pub relay_secret_saved: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    profiles: Vec<Profile>,
    #[serde(default)]
    settings: Settings,
}

/// The profiles file, or memory only (tests).
pub struct ProfileStore {
    path: Option<PathBuf>,
    stored: Mutex<Stored>,
    demo: Mutex<Vec<Profile>>,
}

impl ProfileStore {
    /// Loads `path`. A file that cannot be parsed is kept aside as `*.unreadable` (so nothing
    /// is lost) and an empty store is used.
    pub fn open(path: PathBuf) -> AppResult<Self> {
        let stored = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(%e, "the profiles file is unreadable; keeping it aside");
                let _ = std::fs::rename(&path, path.with_extension("unreadable"));
                Stored::default()
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Stored::default(),
            Err(e) => {
                return Err(kluis_core::Error::io(format!("read {}", path.display()), e).into())
            }
        };
        Ok(Self {
            path: Some(path),
            stored: Mutex::new(stored),
            demo: Mutex::default(),
        })
    }

    pub fn in_memory() -> Self {
        Self {
            path: None,
            stored: Mutex::default(),
            demo: Mutex::default(),
        }
    }

    pub fn list(&self) -> Vec<Profile> {
        let mut all = self.demo.lock().unwrap().clone();
        all.extend(self.stored.lock().unwrap().profiles.iter().cloned());
        all
    }

    pub fn get(&self, id: &str) -> AppResult<Profile> {
        self.list().into_iter().find(|p| p.id == id).ok_or_else(|| {
            AppError::NotFound("That profile no longer exists. Choose or add another one.".into())
        })
    }

    /// Adds or replaces a profile (demo profiles stay in memory).
    pub fn put(&self, profile: Profile) -> AppResult<()> {
        if profile.demo {
            let mut demo = self.demo.lock().unwrap();
            demo.retain(|p| p.id != profile.id);
            demo.push(profile);
            return Ok(());
        }
        let mut stored = self.stored.lock().unwrap();
        match stored.profiles.iter_mut().find(|p| p.id == profile.id) {
            Some(existing) => *existing = profile,
            None => stored.profiles.push(profile),
        }
        self.write(&stored)
    }

    pub fn remove(&self, id: &str) -> AppResult<()> {
        self.demo.lock().unwrap().retain(|p| p.id != id);
        let mut stored = self.stored.lock().unwrap();
        stored.profiles.retain(|p| p.id != id);
        self.write(&stored)
    }

    pub fn settings(&self) -> Settings {
        self.stored.lock().unwrap().settings.clone()
    }

    pub fn set_settings(&self, settings: Settings) -> AppResult<()> {
        let mut stored = self.stored.lock().unwrap();
        stored.settings = settings;
        self.write(&stored)
    }

    /// Writes atomically (a temporary file, fsync, rename), owner-only.
    fn write(&self, stored: &Stored) -> AppResult<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let io = |e| kluis_core::Error::io(format!("write {}", path.display()), e);
        let dir = path.parent().unwrap_or(Path::new("."));
        kluis_https::private::create_dir_all(dir).map_err(io)?;
        let bytes = serde_json::to_vec_pretty(stored).expect("profiles serialise");
        kluis_https::private::write_atomic(path, &bytes).map_err(io)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the UI sends prints no secret in `Debug` (a log line or a panic message).
    #[test]
    fn input_debug_hides_secrets() {
        let input = ProfileInput {
            id: None,
            name: "Klant".into(),
            base_url: "https://h/webservice_v2".into(),
            username: "u".into(),
            api_key: Some("api-key-value-1234".into()),
            password: Some("password-value-5678".into()),
            openapi_url: None,
        };
        let shown = format!("{input:?}");
        assert!(
            !shown.contains("api-key-value") && !shown.contains("password-value"),
            "{shown}"
        );
        assert!(shown.contains("Klant"));
    }

    fn profile(id: &str) -> Profile {
        Profile {
            id: id.into(),
            name: "Klant".into(),
            base_url: "https://h/webservice_v2".into(),
            username: "u".into(),
            openapi_url: None,
            denied: vec![],
            allowed: vec![],
            demo: false,
            extra_ca_pem: None,
            plan: None,
        }
    }

    /// Profiles survive a reopen; demo profiles never reach the file.
    #[test]
    fn persists_real_profiles_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        let store = ProfileStore::open(path.clone()).unwrap();
        store.put(profile("a")).unwrap();
        store
            .put(Profile {
                demo: true,
                ..profile("demo")
            })
            .unwrap();
        let reopened = ProfileStore::open(path.clone()).unwrap();
        assert_eq!(
            reopened
                .list()
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>(),
            ["a"]
        );
        assert!(!std::fs::read_to_string(&path).unwrap().contains("demo"));
    }

    /// A corrupt file is kept aside, not overwritten or fatal.
    #[test]
    fn corrupt_file_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profiles.json");
        std::fs::write(&path, b"{not json").unwrap();
        let store = ProfileStore::open(path.clone()).unwrap();
        assert!(store.list().is_empty());
        assert_eq!(
            std::fs::read(path.with_extension("unreadable")).unwrap(),
            b"{not json"
        );
    }
}
