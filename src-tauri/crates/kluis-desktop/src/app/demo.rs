//! The demo: kluis-demo's service in this process, with its accounts as profiles.

use kluis_demo::{Demo, DEMO_ACCOUNTS};

use super::accounts::Accounts;
use super::DemoInfo;
use crate::error::AppResult;
use crate::profiles::Profile;
use crate::secrets::{SecretKind, SecretStore};

impl Accounts {
    /// Starts the demo service and adds its profiles (full and restricted key), whose secrets
    /// stay in memory.
    pub async fn start_demo(&self) -> AppResult<DemoInfo> {
        let mut running = self.connections.demo.lock().await;
        if running.is_none() {
            // Paced, so that each stage can be seen.
            let demo = Demo::start(48 * 1024 * 1024, true).await?;
            for account in DEMO_ACCOUNTS {
                self.connections.demo_secrets.set(
                    account.id,
                    SecretKind::ApiKey,
                    &account.api_key(),
                )?;
                self.connections.demo_secrets.set(
                    account.id,
                    SecretKind::Password,
                    &account.password(),
                )?;
                self.shared.profiles.put(Profile {
                    id: account.id.into(),
                    name: account.name.into(),
                    base_url: demo.base_url().to_string(),
                    username: account.username().into(),
                    openapi_url: Some(format!("{}/openapi.json", demo.base_url())),
                    denied: Vec::new(),
                    allowed: Vec::new(),
                    demo: true,
                    extra_ca_pem: Some(demo.ca_pem().to_string()),
                    plan: None,
                    ping_url: None,
                    retention: None,
                    verify_monthly: false,
                    restore_test_monthly: true,
                    encryption: None,
                    copy_to: None,
                    tags: Vec::new(),
                    save_folder: None,
                })?;
            }
            *running = Some(demo);
        }
        let demo = running.as_ref().expect("started above");
        Ok(DemoInfo {
            base_url: demo.base_url().to_string(),
            profiles: self.list().into_iter().filter(|p| p.demo).collect(),
        })
    }
}
