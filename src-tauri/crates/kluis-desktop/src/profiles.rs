//! What the UI sees of a profile ([`ProfileView`]) and sends to make or change one
//! ([`ProfileInput`]). The profiles themselves, their file and their secrets are
//! kluis-profiles' (shared with the CLI).

use serde::{Deserialize, Serialize};

pub use kluis_profiles::{Profile, ProfileStore, Settings};

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
    /// Whether an outside monitor is pinged after each unattended backup (its URL, a
    /// capability like a password, is not sent back).
    pub monitor: bool,
    /// When the plan runs next (ms since the epoch; now when due), or null.
    #[ts(type = "number | null")]
    pub next_backup_ms: Option<i64>,
    /// Which backups are kept (null: every one).
    pub retention: Option<kluis_core::retention::Retention>,
    /// Whether the klant's backups are read again once a month.
    pub verify_monthly: bool,
    /// Whether the klant's newest backup is restore-tested once a month.
    pub restore_test_monthly: bool,
    /// How its backups are encrypted (no secret: a passphrase stays in the keyring).
    pub encryption: Option<kluis_core::encryption::EncryptionSetting>,
    /// The copy targets (ids) its backups go to; null: every one.
    pub copy_to: Option<Vec<String>>,
    /// The office's labels for the klant (a colleague, a kind of klant).
    pub tags: Vec<String>,
    /// The klant's own folder for its backups (null: one under the office's save folder).
    pub save_folder: Option<String>,
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
            monitor: p.ping_url.is_some(),
            next_backup_ms: None,
            retention: p.retention.clone(),
            verify_monthly: p.verify_monthly,
            restore_test_monthly: p.restore_test_monthly,
            encryption: p.encryption.clone(),
            copy_to: p.copy_to.clone(),
            tags: p.tags.clone(),
            save_folder: p.save_folder.clone(),
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
    /// The klant's tags (null: kept as they are).
    #[serde(default)]
    pub tags: Option<Vec<String>>,
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
            .field("tags", &self.tags)
            .finish()
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
            tags: None,
        };
        let shown = format!("{input:?}");
        assert!(
            !shown.contains("api-key-value") && !shown.contains("password-value"),
            "{shown}"
        );
        assert!(shown.contains("Klant"));
    }
}
