//! kluis-demo: [`Demo`], the service simulator started in this process, so a newcomer can try
//! the whole flow without an account — `kluis demo` and the app's demo mode. Its accounts
//! ([`DEMO_ACCOUNTS`]) hold no real secret: the simulator's fixed demo key (and one restricted
//! key, to show a refusal). It stands above kluis-core (which knows nothing of the simulator)
//! and beside the hosts that offer the demo: the CLI and the desktop app.

use kluis_sim::{config as sim, Sim, SimConfig};
use std::time::Duration;
use url::Url;

use kluis_core::{Error, Result, Secret, ServiceConfig};

/// A demo account: the profile it becomes in the app, its api key and its klant's user name.
#[derive(Debug, Clone, Copy)]
pub struct DemoAccount {
    pub id: &'static str,
    pub name: &'static str,
    api_key: uuid::Uuid,
    username: &'static str,
}

/// The demo's klanten: the full demo key; one whose key may not use `/backup/owner` (to show
/// a refusal, and a klant that needs attention); and two more klanten of the same office, so
/// that Backup all and the dashboard show an office rather than one klant.
pub const DEMO_ACCOUNTS: [DemoAccount; 4] = [
    DemoAccount {
        id: "demo",
        name: "Demo",
        api_key: sim::DEMO_API_KEY,
        username: sim::DEMO_USERNAME,
    },
    DemoAccount {
        id: "demo-restricted",
        name: "Demo (key without backups)",
        api_key: sim::RESTRICTED_API_KEY,
        username: sim::DEMO_USERNAME,
    },
    DemoAccount {
        id: "demo-jansen",
        name: "Bakkerij Jansen",
        api_key: sim::DEMO_API_KEY,
        username: "jansen",
    },
    DemoAccount {
        id: "demo-de-vries",
        name: "Fietsen De Vries",
        api_key: sim::DEMO_API_KEY,
        username: "devries",
    },
];

impl DemoAccount {
    pub fn api_key(&self) -> Secret {
        Secret::new(self.api_key.to_string())
    }

    pub fn username(&self) -> &'static str {
        self.username
    }

    pub fn password(&self) -> Secret {
        Secret::new(sim::DEMO_PASSWORD)
    }

    /// Whether `profile` is one of the demo's (whose service ends with the program).
    pub fn is_demo(profile: &str) -> bool {
        DEMO_ACCOUNTS.iter().any(|a| a.id == profile)
    }
}

/// The running demo service; it stops when dropped.
pub struct Demo {
    sim: Sim,
}

impl Demo {
    /// Starts the simulator with a backup of `payload_bytes`. `paced`: slow enough that each
    /// stage can be seen (the app), or as fast as it goes (the CLI).
    pub async fn start(payload_bytes: u64, paced: bool) -> Result<Demo> {
        let mut config = SimConfig {
            payload_size: payload_bytes,
            ..SimConfig::default()
        };
        // The klanten besides the simulator's own two (same key and password, their own user).
        for account in DEMO_ACCOUNTS
            .iter()
            .filter(|a| a.username != sim::DEMO_USERNAME)
        {
            config.accounts.push(sim::Account {
                username: account.username.into(),
                ..sim::Account::demo()
            });
        }
        if paced {
            config.faults.callback_delay = Duration::from_millis(1500);
            config.faults.download_rate = Some(24 * 1024 * 1024);
        }
        let sim = Sim::start(config)
            .await
            .map_err(|e| Error::Io(format!("The demo service could not start ({e}).")))?;
        Ok(Demo { sim })
    }

    pub fn base_url(&self) -> &Url {
        self.sim.base_url()
    }

    /// The certificate of the demo's own CA, which only the demo's profiles trust.
    pub fn ca_pem(&self) -> &str {
        self.sim.ca_pem()
    }

    /// The demo's stand-in for webhook.site.
    pub fn webhook_site_url(&self) -> String {
        self.sim.webhook_site_url().to_string()
    }

    /// The service settings of `account`, trusting the demo's CA.
    pub fn config(&self, account: &DemoAccount) -> Result<ServiceConfig> {
        let mut config = ServiceConfig::new(
            self.base_url().as_str(),
            account.api_key(),
            account.username().into(),
            account.password(),
            false,
        )?;
        config.extra_ca_pem = Some(self.ca_pem().to_string());
        Ok(config)
    }
}

/// The bytes of a demo backup of `size` bytes: the simulator's own file (a zip archive that
/// restores, whose entry is a pattern), for the demo's past backups.
pub fn backup_bytes(size: u64) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(size as usize);
    while (bytes.len() as u64) < size {
        let len = (size - bytes.len() as u64).min(kluis_sim::payload::MAX_CHUNK as u64) as usize;
        bytes.extend_from_slice(&kluis_sim::payload::file_slice(
            size,
            bytes.len() as u64,
            len,
        ));
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every demo klant signs in to the demo service with its own user; each sees its own
    /// environment.
    #[tokio::test]
    async fn every_demo_klant_signs_in() {
        let demo = Demo::start(1024, false).await.unwrap();
        for account in DEMO_ACCOUNTS {
            let client = kluis_core::ServiceClient::new(demo.config(&account).unwrap()).unwrap();
            let session = kluis_core::Session::new(client);
            let environment = session.environment().await;
            assert!(environment.is_ok(), "{}: {environment:?}", account.name);
        }
    }
}
