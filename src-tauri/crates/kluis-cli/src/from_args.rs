//! What the command line's flags become (their definitions are `args`): the service's
//! configuration with an error naming each missing setting, the profiles file and the history
//! opened, and a batch's speed limit, free-space minimum and retries.

use std::path::PathBuf;

use kluis_core::engine::Retry;
use kluis_core::{Error, History, Result, Secret, ServiceConfig};

use crate::args::{BatchOptions, ServiceArgs};

impl BatchOptions {
    /// The free space a backup's disk must have before it is asked for: the flag's, else the
    /// app's setting (which `settings` holds), else the default.
    pub fn min_free_bytes(&self, settings: Option<&kluis_profiles::Settings>) -> u64 {
        let mib = (self.min_free_mib).or(settings.and_then(|s| s.min_free_mib));
        kluis_profiles::settings::mib_to_bytes(mib)
    }

    /// The speed limit this run's downloads share: the flags', else the app's setting (which
    /// `settings` holds), else none.
    pub fn bandwidth(
        &self,
        settings: Option<&kluis_profiles::Settings>,
    ) -> Result<Option<std::sync::Arc<kluis_core::download::bandwidth::Bandwidth>>> {
        use kluis_core::download::bandwidth::{Bandwidth, BandwidthLimit, OfficeHours};
        let limit = match self.limit_rate {
            Some(0.0) => None,
            Some(mb_per_sec) => {
                let office_hours = match &self.office_hours {
                    Some(text) => {
                        let (from, to) = text.split_once('-').ok_or_else(|| {
                            Error::Config(
                                "Give office hours as HH:MM-HH:MM, e.g. 08:00-18:00.".into(),
                            )
                        })?;
                        Some(OfficeHours {
                            from: kluis_core::plan::ClockTime::parse(from)?,
                            to: kluis_core::plan::ClockTime::parse(to)?,
                        })
                    }
                    None => None,
                };
                Some(BandwidthLimit {
                    mb_per_sec,
                    office_hours,
                })
            }
            None => settings.and_then(|s| s.bandwidth.clone()),
        };
        match limit {
            Some(limit) => Ok(Some(std::sync::Arc::new(Bandwidth::new(Some(limit))?))),
            None => Ok(None),
        }
    }

    /// How the engine tries a klant again (the app's plans use [`Retry::UNATTENDED`] too).
    pub fn retry(&self) -> Retry {
        Retry {
            tries: self.retries,
            first_delay: std::time::Duration::from_secs(self.retry_delay),
        }
    }
}

impl ServiceArgs {
    /// The service settings, with a clear error naming each missing one.
    pub fn service_config(&self) -> Result<ServiceConfig> {
        let missing = |what: &str, var: &str| {
            Error::Config(format!(
                "The {what} is not set. Use --{} or {var}.",
                what.replace(' ', "-")
            ))
        };
        let base_url = self
            .base_url
            .as_deref()
            .ok_or_else(|| missing("base url", "KLUIS_BASE_URL"))?;
        let api_key = self
            .api_key
            .clone()
            .ok_or_else(|| missing("api key", "KLUIS_API_KEY"))?;
        let username = self
            .username
            .clone()
            .ok_or_else(|| missing("username", "KLUIS_USERNAME"))?;
        let password = self
            .password
            .clone()
            .ok_or_else(|| missing("password", "KLUIS_PASSWORD"))?;
        let mut config = ServiceConfig::new(
            base_url,
            Secret::new(api_key),
            username,
            Secret::new(password),
            self.allow_http_loopback,
        )?;
        config.extra_ca_pem = self.ca_pem()?;
        Ok(config)
    }

    /// The PEM of `--ca-cert` / `KLUIS_CA_CERT`, when given.
    pub fn ca_pem(&self) -> Result<Option<String>> {
        let Some(path) = &self.ca_cert else {
            return Ok(None);
        };
        std::fs::read_to_string(path).map(Some).map_err(|e| {
            Error::Config(format!(
                "Could not read the CA certificate {}: {e}.",
                path.display()
            ))
        })
    }
}

/// The profiles file the app uses (or `--profiles-file`).
pub fn open_profiles(path: Option<&PathBuf>) -> Result<kluis_profiles::ProfileStore> {
    let path = match path {
        Some(path) => path.clone(),
        None => {
            kluis_profiles::KluisPaths::platform()
                .map_err(kluis_profiles::ProfileError::into_core)?
                .profiles_file
        }
    };
    kluis_profiles::ProfileStore::open(path).map_err(kluis_profiles::ProfileError::into_core)
}

pub fn open_history(path: Option<&PathBuf>) -> Result<History> {
    History::open(&history_path(path)?)
}

/// The history database: `--history-db` / `KLUIS_HISTORY_DB`, else the platform's.
pub fn history_path(path: Option<&PathBuf>) -> Result<PathBuf> {
    match path {
        Some(path) => Ok(path.clone()),
        None => History::default_path(),
    }
}
