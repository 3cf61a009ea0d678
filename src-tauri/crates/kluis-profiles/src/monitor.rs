//! A klant's outside monitor, in the style of healthchecks.io: after each unattended backup
//! of the klant (the app's plans and Backup all, `kluis run-due`, `kluis backup --all` or
//! `--profile`), its ping URL is called — as it is on success, with `/fail` appended on
//! failure. An external monitor then notices a klant that failed, and, by pings that stop
//! coming, a Kluis that stopped running at all. The ping is a POST whose small text body (the
//! monitor keeps it as the ping's log) says what happened: bytes and SHA-256, or the error's
//! code and message — already scrubbed of secrets, never a credential or a token.
//!
//! A ping that cannot be sent never changes the backup's outcome; it is said and logged.

use std::time::Duration;

use kluis_core::http::{
    client_trusting, is_transient, is_transient_status, RedirectRule, RetryPolicy,
};
use kluis_core::{Code, Error, Result, Saved};
use url::Url;

/// What the ping reports (owned, so a ping can be sent on its own task).
#[derive(Debug, Clone)]
pub enum Ran {
    Saved {
        bytes: u64,
        sha256: String,
    },
    Failed {
        code: Code,
        message: String,
    },
    /// "Send test": a success ping that says it is a test.
    Test,
}

impl Ran {
    /// What a backup's outcome reports; nothing for one the user cancelled or that was
    /// stopped to be finished later (neither says anything about the klant's backups).
    pub fn of(outcome: std::result::Result<&Saved, &Error>) -> Option<Ran> {
        match outcome {
            Ok(saved) => Some(Ran::saved(saved)),
            Err(e) => Ran::failed(e),
        }
    }

    pub fn saved(saved: &Saved) -> Ran {
        Ran::Saved {
            bytes: saved.bytes,
            sha256: saved.sha256.clone(),
        }
    }

    /// A failure's report; none for a cancel or a stop.
    pub fn failed(error: &Error) -> Option<Ran> {
        match error {
            Error::Cancelled | Error::Interrupted => None,
            e => Some(Ran::Failed {
                code: e.code(),
                message: e.to_string(),
            }),
        }
    }
}

/// A klant's monitor: its ping URL and the extra CA to trust for it.
#[derive(Debug, Clone)]
pub struct Monitor {
    pub ping_url: String,
    pub extra_ca_pem: Option<String>,
}

impl Monitor {
    /// `profile`'s monitor, if it has one. It trusts the system's roots, the profile's extra CA
    /// (an office proxy that inspects TLS stands before every host) and `fallback_ca_pem`
    /// (`KLUIS_CA_CERT`): the monitor is another server than the service.
    pub fn of(profile: &crate::Profile, fallback_ca_pem: Option<&str>) -> Option<Monitor> {
        let cas: Vec<&str> = [profile.extra_ca_pem.as_deref(), fallback_ca_pem]
            .into_iter()
            .flatten()
            .collect();
        Some(Monitor {
            ping_url: profile.ping_url.clone()?,
            extra_ca_pem: (!cas.is_empty()).then(|| cas.join("\n")),
        })
    }

    /// Pings for `ran`.
    pub async fn ping(&self, ran: &Ran) -> Result<()> {
        ping(&self.ping_url, self.extra_ca_pem.as_deref(), ran).await
    }
}

/// A monitor that is briefly unreachable is tried again: three tries, 1 s and 2 s apart.
const RETRY: RetryPolicy = RetryPolicy {
    attempts: 3,
    first_delay: Duration::from_secs(1),
    max_delay: Duration::from_secs(2),
};

/// Checks a ping URL as the user gives it: https (plain http only to this computer, for
/// tests), no credentials in it. Returns it normalised.
pub fn check_ping_url(text: &str) -> Result<String> {
    let refuse = |why: &str| {
        Error::Config(format!(
            "The monitor's ping URL {why}; give its https address, e.g. https://hc-ping.com/<uuid>."
        ))
    };
    let url = Url::parse(text.trim()).map_err(|_| refuse("is not a URL"))?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
        return Err(refuse("is not https"));
    }
    if !url.username().is_empty() || url.password().is_some() || url.host_str().is_none() {
        return Err(refuse("has no host or holds a user name"));
    }
    Ok(url.to_string())
}

/// Where a ping of `ran` goes: the URL, or `<url>/fail`.
fn target(ping_url: &str, ran: &Ran) -> Result<Url> {
    let mut url = Url::parse(&check_ping_url(ping_url)?)
        .map_err(|_| Error::Config("The monitor's ping URL is not a URL.".into()))?;
    if let Ran::Failed { .. } = ran {
        url.path_segments_mut()
            .map_err(|_| Error::Config("The monitor's ping URL cannot take /fail.".into()))?
            .pop_if_empty()
            .push("fail");
    }
    Ok(url)
}

fn body(ran: &Ran) -> String {
    match ran {
        Ran::Saved { bytes, sha256 } => {
            format!("Kluis: backup saved, {bytes} bytes, SHA-256 {sha256}")
        }
        Ran::Failed { code, message } => format!("Kluis: backup failed ({code}): {message}"),
        Ran::Test => "Kluis: a test ping (Send test).".into(),
    }
}

/// Pings `ping_url` for `ran`, trusting the system roots and `extra_ca_pem`.
pub async fn ping(ping_url: &str, extra_ca_pem: Option<&str>, ran: &Ran) -> Result<()> {
    let url = target(ping_url, ran)?;
    let loopback_http = url.scheme() == "http";
    let timeouts = kluis_core::config::Timeouts {
        connect: Duration::from_secs(10),
        read: Duration::from_secs(10),
        ..Default::default()
    };
    let client = client_trusting(
        extra_ca_pem,
        loopback_http,
        &timeouts,
        RedirectRule::AnyAllowedUrl,
    )?;
    let body = body(ran);
    let mut attempt = 1;
    loop {
        let retry_left = attempt < RETRY.attempts;
        match client.post(url.clone()).body(body.clone()).send().await {
            Ok(response) if response.status().is_success() => return Ok(()),
            Ok(response) if retry_left && is_transient_status(response.status()) => {}
            Ok(response) => {
                return Err(Error::ServiceError(format!(
                    "The monitor answered the ping with {}. Check the ping URL.",
                    response.status()
                )))
            }
            Err(e) if retry_left && is_transient(&e) => {}
            Err(e) => {
                // Without its URL: a ping URL is a capability, like a password.
                return Err(Error::Network(format!(
                    "The monitor could not be pinged: {}. Check the ping URL and the connection.",
                    e.without_url()
                )));
            }
        }
        tokio::time::sleep(RETRY.delay(attempt)).await;
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only https (or http to this computer), no credentials; failures go to `<url>/fail`.
    #[test]
    fn ping_urls_are_checked_and_failures_go_to_fail() {
        assert!(check_ping_url("https://hc-ping.com/abc").is_ok());
        assert!(check_ping_url("http://127.0.0.1:9/x").is_ok());
        for bad in [
            "http://hc-ping.com/abc",
            "ftp://x/y",
            "https://u:p@h/x",
            "not a url",
        ] {
            assert!(check_ping_url(bad).is_err(), "{bad}");
        }
        let failed = Ran::of(Err(&Error::Config("x".into()))).unwrap();
        assert_eq!(
            target("https://hc-ping.com/abc/", &failed)
                .unwrap()
                .as_str(),
            "https://hc-ping.com/abc/fail"
        );
        assert_eq!(
            target("https://hc-ping.com/abc", &Ran::Test)
                .unwrap()
                .as_str(),
            "https://hc-ping.com/abc"
        );
        assert!(
            Ran::of(Err(&Error::Cancelled)).is_none(),
            "a cancel is no news"
        );
    }
}
