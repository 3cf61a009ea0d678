//! Settings → "How the service reaches this computer": what the form sends and what a test
//! answers. The choice itself is kluis-core's [`CallbackChoice`] (the CLI's `--callback`);
//! the engine builds it per profile (the profile gives the TLS trust). The relay's secret is
//! kept in the keyring, never in the settings file.

use kluis_core::CallbackChoice;
use serde::{Deserialize, Serialize};

/// What the Settings form sends: the choice, and the relay's secret when it is entered or
/// changed (empty or absent: keep the saved one).
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct CallbackInput {
    pub setting: CallbackChoice,
    pub relay_secret: Option<String>,
}

/// Shows whether a relay secret was given, never its value.
impl std::fmt::Debug for CallbackInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackInput")
            .field("setting", &self.setting)
            .field(
                "relay_secret",
                &self.relay_secret.as_ref().map(|_| "«hidden»"),
            )
            .finish()
    }
}

/// A successful "Test connection".
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct CallbackTestResult {
    pub transport: String,
    #[ts(type = "number")]
    pub millis: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relay secret the Settings form sends prints as a placeholder in `Debug`.
    #[test]
    fn input_debug_hides_the_relay_secret() {
        let input = CallbackInput {
            setting: CallbackChoice::Loopback,
            relay_secret: Some("relay-secret-value".into()),
        };
        assert!(!format!("{input:?}").contains("relay-secret-value"));
    }
}
