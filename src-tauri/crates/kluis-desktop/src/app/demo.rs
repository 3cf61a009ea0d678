//! The demo: the simulator in this process, with its profiles.

use super::*;

impl DesktopApp {
    /// Starts the simulator in this process and adds two demo profiles (full and restricted
    /// key), whose secrets stay in memory.
    pub async fn start_demo(&self) -> AppResult<DemoInfo> {
        let mut demo = self.demo.lock().await;
        if demo.is_none() {
            let mut config = SimConfig {
                payload_size: 48 * 1024 * 1024,
                ..SimConfig::default()
            };
            // Slow enough that each stage can be seen, quick enough not to bore.
            config.faults.callback_delay = Duration::from_millis(1500);
            config.faults.download_rate = Some(24 * 1024 * 1024);
            let sim = Sim::start(config)
                .await
                .map_err(|e| Error::Io(e.to_string()))?;
            let accounts = [
                (DEMO_ID, "Demo", kluis_sim::config::DEMO_API_KEY),
                (
                    DEMO_RESTRICTED_ID,
                    "Demo (key without backups)",
                    kluis_sim::config::RESTRICTED_API_KEY,
                ),
            ];
            for (id, name, key) in accounts {
                self.demo_secrets
                    .set(id, SecretKind::ApiKey, &Secret::new(key.to_string()))?;
                self.demo_secrets.set(
                    id,
                    SecretKind::Password,
                    &Secret::new(kluis_sim::config::DEMO_PASSWORD),
                )?;
                self.profiles.put(Profile {
                    id: id.into(),
                    name: name.into(),
                    base_url: sim.base_url().to_string(),
                    username: kluis_sim::config::DEMO_USERNAME.into(),
                    openapi_url: Some(format!("{}/openapi.json", sim.base_url())),
                    denied: Vec::new(),
                    demo: true,
                    extra_ca_pem: Some(sim.ca_pem().to_string()),
                })?;
            }
            *demo = Some(sim);
        }
        let sim = demo.as_ref().expect("started above");
        Ok(DemoInfo {
            base_url: sim.base_url().to_string(),
            profiles: self.profiles().into_iter().filter(|p| p.demo).collect(),
        })
    }
}
