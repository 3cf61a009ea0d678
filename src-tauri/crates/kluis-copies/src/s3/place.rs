//! [`S3Place`]: an S3-compatible bucket as the office set it. Nothing in it is secret: the
//! secret key lives in the keyring (or `KLUIS_SECRETS_DIR`), under the target's id.

use serde::{Deserialize, Serialize};

use kluis_core::{Error, Result};

/// A bucket (see the module's text).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct S3Place {
    /// The server, such as `https://s3.eu-central-1.amazonaws.com` or
    /// `https://minio.office.lan:9000`.
    pub endpoint: String,
    pub region: String,
    pub bucket: String,
    /// Put before every key, e.g. `reception-pc` when several office PCs share one bucket.
    #[serde(default)]
    pub prefix: String,
    /// Path-style addressing (`endpoint/bucket/key`: MinIO and most servers at an office)
    /// rather than virtual-host style (`bucket.endpoint/key`).
    #[serde(default)]
    pub path_style: bool,
    pub access_key_id: String,
    /// Object Lock: each copy locked against deletion for a time, where the bucket has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<ObjectLock>,
    /// A PEM file with the certificate of the CA that signed the server's (a server at the
    /// office with a CA of its own); the system's CAs are trusted as well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<String>,
}

/// How long each copy is locked, and how firmly.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectLock {
    pub mode: LockMode,
    /// Days from the copy's upload (renewed while a retention rule keeps the copy).
    pub days: u32,
}

/// S3's two retention modes.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockMode {
    /// Only a key with the special bypass permission can delete early (Kluis never asks to).
    Governance,
    /// Nobody can delete before the date, not even the account's owner.
    Compliance,
}

/// Longest lock: 100 years is S3's own limit in practice, and anything longer is a typo.
const MAX_LOCK_DAYS: u32 = 36_500;

impl S3Place {
    /// The place with its fields trimmed, or why it cannot be one.
    pub fn checked(mut self) -> Result<S3Place> {
        for field in [
            &mut self.endpoint,
            &mut self.region,
            &mut self.bucket,
            &mut self.access_key_id,
        ] {
            *field = field.trim().to_string();
        }
        self.prefix = self.prefix.trim().trim_matches('/').to_string();
        let endpoint = url::Url::parse(&self.endpoint).map_err(|_| {
            Error::Config(format!(
                "Give the S3 endpoint as a URL, such as https://s3.eu-central-1.amazonaws.com, not \"{}\".",
                self.endpoint.chars().take(80).collect::<String>()
            ))
        })?;
        // The secret key signs every request, but the data would travel in the clear.
        if endpoint.scheme() != "https" || endpoint.host_str().is_none() {
            return Err(Error::Config(
                "The S3 endpoint must be an https:// URL: backups do not travel unencrypted."
                    .into(),
            ));
        }
        let bucket_ok = (3..=63).contains(&self.bucket.len())
            && (self.bucket.chars())
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
        if !bucket_ok {
            return Err(Error::Config(format!(
                "\"{}\" is not a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens.",
                self.bucket.chars().take(80).collect::<String>()
            )));
        }
        if self.region.is_empty() || self.access_key_id.is_empty() {
            return Err(Error::Config(
                "Give the bucket's region (such as eu-central-1; us-east-1 where the provider names none) and the access key id.".into(),
            ));
        }
        if self.prefix.chars().any(char::is_control) || self.prefix.len() > 200 {
            return Err(Error::Config(
                "A prefix is at most 200 characters, none of them control characters.".into(),
            ));
        }
        if let Some(lock) = self.lock {
            if !(1..=MAX_LOCK_DAYS).contains(&lock.days) {
                return Err(Error::Config(format!(
                    "Lock each copy for 1 to {MAX_LOCK_DAYS} days."
                )));
            }
        }
        Ok(self)
    }

    /// For a list: "S3 kluis-backups at https://…/reception-pc, locked 30 days (compliance)".
    pub fn describe(&self) -> String {
        let prefix = match self.prefix.is_empty() {
            true => String::new(),
            false => format!("/{}", self.prefix),
        };
        let lock = match self.lock {
            Some(ObjectLock { mode, days }) => {
                let mode = match mode {
                    LockMode::Governance => "governance",
                    LockMode::Compliance => "compliance",
                };
                format!(", each copy locked {days} days ({mode})")
            }
            None => String::new(),
        };
        format!(
            "S3 bucket {}{prefix} at {}{lock}",
            self.bucket, self.endpoint
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(endpoint: &str, bucket: &str) -> S3Place {
        S3Place {
            endpoint: endpoint.into(),
            region: "eu-central-1".into(),
            bucket: bucket.into(),
            prefix: " /reception-pc/ ".into(),
            path_style: false,
            access_key_id: " AKIA1 ".into(),
            lock: None,
            ca_cert: None,
        }
    }

    /// A bucket is checked when it is set: https only (backups never travel unencrypted), a
    /// bucket name S3 takes, a lock of sensible length; fields are trimmed.
    #[test]
    fn a_bucket_is_checked_when_set() {
        let ok = place("https://s3.example.nl", "office-backups")
            .checked()
            .unwrap();
        assert_eq!(
            (ok.prefix.as_str(), ok.access_key_id.as_str()),
            ("reception-pc", "AKIA1")
        );
        let plain = place("http://s3.example.nl", "office")
            .checked()
            .unwrap_err();
        assert!(plain.to_string().contains("https://"), "{plain}");
        assert!(
            place("s3.example.nl", "office").checked().is_err(),
            "not a URL"
        );
        assert!(place("https://s3.example.nl", "Office Backups")
            .checked()
            .is_err());
        let forever = S3Place {
            lock: Some(ObjectLock {
                mode: LockMode::Compliance,
                days: 0,
            }),
            ..place("https://s3.example.nl", "office")
        };
        assert!(forever.checked().is_err(), "a lock of 0 days");
    }
}
