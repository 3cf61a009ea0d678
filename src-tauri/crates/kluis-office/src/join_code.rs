//! [`JoinCode`]: what a PC of the office gives the next PC to join — the hub's address, the
//! one-time enrolment token the hub issued for that PC, the office key, and the hub's CA when
//! the office's PCs trust one of their own — as one line to paste (`KLUIS-JOIN-…`). It is
//! shown once, on the inviting PC, and never passes through the hub (the hub made the token,
//! never the code: it never sees the office key).

use base64::Engine as _;
use kluis_core::Secret;
use serde::{Deserialize, Serialize};

use crate::error::{OfficeError, OfficeResult};
use crate::key::OfficeKey;
use crate::membership::Membership;

const PREFIX: &str = "KLUIS-JOIN-";
/// The longest code read (a CA's certificate makes one long; anything longer is not a code).
const MOST: usize = 16 * 1024;

/// See the module.
pub struct JoinCode {
    pub hub: String,
    pub token: Secret,
    pub office_key: OfficeKey,
    pub hub_ca_pem: Option<String>,
}

impl std::fmt::Debug for JoinCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JoinCode({}, …)", self.hub)
    }
}

#[derive(Serialize, Deserialize)]
struct Wire {
    hub: String,
    token: String,
    office_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hub_ca_pem: Option<String>,
}

impl JoinCode {
    /// The code as one line.
    pub fn text(&self) -> Secret {
        let wire = Wire {
            hub: self.hub.clone(),
            token: self.token.expose().to_string(),
            office_key: self.office_key.text().expose().to_string(),
            hub_ca_pem: self.hub_ca_pem.clone(),
        };
        let json = serde_json::to_vec(&wire).expect("a join code serialises");
        let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
        Secret::new(format!("{PREFIX}{text}"))
    }

    /// The code in `text` (as pasted: spaces and line breaks are ignored), each part checked.
    pub fn parse(text: &str) -> OfficeResult<JoinCode> {
        let refused = || {
            OfficeError::Input(
                "That is not a join code (KLUIS-JOIN-…): copy the whole code again from the PC that made it.".into(),
            )
        };
        if text.len() > MOST {
            return Err(refused());
        }
        let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let body = text.strip_prefix(PREFIX).ok_or_else(refused)?;
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| refused())?;
        let wire: Wire = serde_json::from_slice(&json).map_err(|_| refused())?;
        Membership::check_hub(&wire.hub)?;
        let token_ok = wire.token.len() == 64 && wire.token.bytes().all(|b| b.is_ascii_hexdigit());
        let ca_ok = wire
            .hub_ca_pem
            .as_ref()
            .is_none_or(|pem| pem.contains("-----BEGIN CERTIFICATE-----"));
        if !token_ok || !ca_ok {
            return Err(refused());
        }
        Ok(JoinCode {
            hub: wire.hub,
            token: Secret::new(wire.token),
            office_key: OfficeKey::parse(&wire.office_key)?,
            hub_ca_pem: wire.hub_ca_pem,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A code reads back as made, pasted across lines too; anything else is refused, and a
    /// code never shows its token or key in a debug line.
    #[test]
    fn a_join_code_reads_back_and_nothing_else_does() {
        let code = JoinCode {
            hub: "https://hub.office.nl".into(),
            token: Secret::new("ab".repeat(32)),
            office_key: OfficeKey::generate().unwrap(),
            hub_ca_pem: Some(
                "-----BEGIN CERTIFICATE-----\nMII…\n-----END CERTIFICATE-----\n".into(),
            ),
        };
        let text = code.text().expose().to_string();
        let wrapped: String = (text.as_bytes().chunks(40))
            .map(|c| format!("{}\n  ", String::from_utf8_lossy(c)))
            .collect();
        for pasted in [text.clone(), wrapped] {
            let read = JoinCode::parse(&pasted).unwrap();
            assert_eq!(
                (read.hub.as_str(), read.token.expose()),
                ("https://hub.office.nl", "ab".repeat(32).as_str())
            );
            assert_eq!(read.office_key, code.office_key);
            assert_eq!(read.hub_ca_pem, code.hub_ca_pem);
        }
        assert!(!format!("{code:?}").contains(code.token.expose()));
        let forged = |wire: serde_json::Value| {
            let json = serde_json::to_vec(&wire).unwrap();
            format!(
                "{PREFIX}{}",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
            )
        };
        let key = code.office_key.text().expose().to_string();
        for bad in [
            String::new(),
            "KLUIS-JOIN-".into(),
            text.replace(PREFIX, ""),
            format!("{text}!"),
            "x".repeat(MOST + 1),
            forged(
                serde_json::json!({ "hub": "http://hub.office.nl", "token": "ab".repeat(32), "office_key": key }),
            ),
            forged(
                serde_json::json!({ "hub": "https://hub.office.nl", "token": "short", "office_key": key }),
            ),
            forged(
                serde_json::json!({ "hub": "https://hub.office.nl", "token": "ab".repeat(32), "office_key": "kluis-office-key-00" }),
            ),
            forged(
                serde_json::json!({ "hub": "https://hub.office.nl", "token": "ab".repeat(32), "office_key": key, "hub_ca_pem": "not a pem" }),
            ),
        ] {
            assert!(JoinCode::parse(&bad).is_err(), "{bad:.60}");
        }
    }
}
