//! HTTP clients: TLS trust, timeouts, redirect rules, bounded reading of JSON answers, and the
//! retry policy for requests that may safely be sent again.

use std::time::Duration;

use reqwest::redirect::{Attempt, Policy};
use serde_json::Value;

use crate::config::{check_url, ServiceConfig};
use crate::error::{mask_secrets, Error, Peer, Result};

/// Largest JSON answer Kluis reads from the service; anything bigger is refused, not buffered.
pub const MAX_JSON_BYTES: usize = 1024 * 1024;
const MAX_REDIRECTS: usize = 5;

/// Which requests follow redirects, and where to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectRule {
    /// Service calls: only within the base URL's origin. The `token` header is a custom header
    /// that an HTTP client would carry along on any redirect, so a redirect to another origin
    /// is refused rather than followed.
    SameOrigin,
    /// Downloads (which never carry the token): any https URL (or loopback http with the opt-in).
    AnyAllowedUrl,
}

/// Builds a client that trusts the system roots, the webpki roots and the configured extra CA.
pub fn build_client(config: &ServiceConfig, rule: RedirectRule) -> Result<reqwest::Client> {
    finish(service_builder(config, rule)?)
}

/// The client that downloads backups: like [`build_client`]'s with
/// [`RedirectRule::AnyAllowedUrl`], but it keeps no idle connection. A backup is one long GET
/// per klant and run; a connection kept for the next one would wait a day, holding the receive
/// buffers the download grew (hundreds of KiB) — and the app keeps a downloader per klant: after
/// a Backup all of 200 klanten their idle connections held ~100 MiB.
pub fn download_client(config: &ServiceConfig) -> Result<reqwest::Client> {
    finish(service_builder(config, RedirectRule::AnyAllowedUrl)?.pool_max_idle_per_host(0))
}

/// [`builder_trusting`] with a service configuration's CA, http opt-in and timeouts.
fn service_builder(config: &ServiceConfig, rule: RedirectRule) -> Result<reqwest::ClientBuilder> {
    builder_trusting(
        config.extra_ca_pem.as_deref(),
        config.allow_http_loopback,
        &config.timeouts,
        rule,
    )
}

/// A client like [`build_client`]'s for a server that is not the service (a monitor's ping
/// URL): the same roots plus `extra_ca_pem`, timeouts and redirect rule.
pub fn client_trusting(
    extra_ca_pem: Option<&str>,
    allow_http: bool,
    timeouts: &crate::config::Timeouts,
    rule: RedirectRule,
) -> Result<reqwest::Client> {
    finish(builder_trusting(extra_ca_pem, allow_http, timeouts, rule)?)
}

fn builder_trusting(
    extra_ca_pem: Option<&str>,
    allow_http: bool,
    timeouts: &crate::config::Timeouts,
    rule: RedirectRule,
) -> Result<reqwest::ClientBuilder> {
    let policy = Policy::custom(move |attempt: Attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            return attempt.error("too many redirects");
        }
        if check_url(attempt.url(), allow_http).is_err() {
            return attempt.error("redirect to a URL that is not https");
        }
        if rule == RedirectRule::SameOrigin {
            let first = &attempt.previous()[0];
            if first.origin() != attempt.url().origin() {
                return attempt.error("redirect to another origin");
            }
        }
        attempt.follow()
    });
    let mut builder = reqwest::Client::builder()
        .use_preconfigured_tls(
            crate::tls_trust::client_config(extra_ca_pem)?
                .as_ref()
                .clone(),
        )
        .https_only(!allow_http)
        .user_agent(concat!("kluis/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(timeouts.connect)
        .read_timeout(timeouts.read)
        .redirect(policy);
    if allow_http {
        // Plain http exists only for a service on this machine. Through a proxy (HTTP_PROXY)
        // the whole request line — `/authenticate`'s query carries the password — would go to
        // the proxy in clear text; loopback needs no proxy.
        builder = builder.no_proxy();
    }
    Ok(builder)
}

fn finish(builder: reqwest::ClientBuilder) -> Result<reqwest::Client> {
    builder.build().map_err(|e| {
        Error::Config(format!(
            "Could not set up HTTPS: {}",
            mask_secrets(&e.without_url().to_string(), 200)
        ))
    })
}

/// Reads an answer's body as JSON, refusing more than [`MAX_JSON_BYTES`].
pub async fn read_json(response: reqwest::Response, what: &str) -> Result<Value> {
    read_json_as(response, what, MAX_JSON_BYTES).await
}

/// Reads an answer's body as JSON of type `T`, refusing more than `cap` bytes: every answer
/// Kluis reads into memory (the service's, the relay's, webhook.site's) goes through here.
pub async fn read_json_as<T: serde::de::DeserializeOwned>(
    mut response: reqwest::Response,
    what: &str,
    cap: usize,
) -> Result<T> {
    let body = read_capped(&mut response, cap).await?.ok_or_else(|| {
        Error::BadResponse(format!(
            "The answer to {what} was larger than {} KiB; it was not read.",
            cap / 1024
        ))
    })?;
    serde_json::from_slice(&body).map_err(|_| {
        Error::BadResponse(format!(
            "The answer to {what} was not valid JSON: \"{}\". The service may be down or the base URL may point elsewhere.",
            mask_secrets(&String::from_utf8_lossy(&body), 120)
        ))
    })
}

/// The body, or `None` when it is longer than `cap` bytes.
pub async fn read_capped(response: &mut reqwest::Response, cap: usize) -> Result<Option<Vec<u8>>> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Error::unreachable(Peer::Service, e))?
    {
        if body.len() + chunk.len() > cap {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// A short, secret-free excerpt of an error answer's body.
pub async fn body_excerpt(mut response: reqwest::Response) -> String {
    match read_capped(&mut response, 16 * 1024).await {
        Ok(Some(body)) => mask_secrets(&String::from_utf8_lossy(&body), 160),
        _ => String::from("(no readable body)"),
    }
}

/// Bounded exponential backoff for requests that may be sent again.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Tries in all, the first included.
    pub attempts: u32,
    pub first_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            first_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
        }
    }
}

impl RetryPolicy {
    /// The wait before try number `attempt` (1 = the first retry).
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.first_delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// Whether a failed send of an idempotent request is worth another try.
pub fn is_transient(err: &reqwest::Error) -> bool {
    err.is_connect() || err.is_timeout() || err.is_request() || err.is_body()
}

/// Whether an answer's status is worth another try of an idempotent request.
pub fn is_transient_status(status: reqwest::StatusCode) -> bool {
    status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backoff doubles and stops growing at the cap.
    #[test]
    fn backoff_doubles_up_to_cap() {
        let p = RetryPolicy {
            attempts: 10,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
        };
        assert_eq!(p.delay(1), Duration::from_millis(100));
        assert_eq!(p.delay(2), Duration::from_millis(200));
        assert_eq!(p.delay(3), Duration::from_millis(350));
        assert_eq!(p.delay(40), Duration::from_millis(350));
    }
}
