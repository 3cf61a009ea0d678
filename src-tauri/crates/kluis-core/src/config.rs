//! Settings of a connection to the service, and the rules for which URLs Kluis will talk to.

use std::time::Duration;

use url::{Host, Url};

use crate::error::{Error, Result};
use crate::secret::Secret;

/// Everything needed to talk to one service account.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// `{base_url}`, including its path prefix (e.g. `…/webservice_v2`).
    pub base_url: Url,
    pub api_key: Secret,
    pub username: String,
    pub password: Secret,
    /// Extra trusted CA certificates (PEM), for corporate TLS proxies and the simulator.
    pub extra_ca_pem: Option<String>,
    /// Allow plain http to loopback hosts (tests and local tools only).
    pub allow_http_loopback: bool,
    pub timeouts: Timeouts,
}

/// Network timeouts. There is deliberately no total deadline per request: a large backup file
/// may take a long time to download, and a read timeout already catches a stalled connection.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    /// Longest silence while waiting for any bytes of an answer.
    pub read: Duration,
    /// While a job waits for its callback, how often the service is asked whether it still
    /// answers (see [`crate::client::ServiceClient::is_answering`]), so a stopped service is
    /// said within about this time instead of at the callback deadline.
    pub liveness_check: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(15),
            read: Duration::from_secs(60),
            liveness_check: Duration::from_secs(60),
        }
    }
}

impl ServiceConfig {
    /// Checks the settings and parses the base URL (see [`check_url`]).
    pub fn new(
        base_url: &str,
        api_key: Secret,
        username: String,
        password: Secret,
        allow_http_loopback: bool,
    ) -> Result<Self> {
        let base_url = parse_base_url(base_url, allow_http_loopback)?;
        if api_key.is_empty() {
            return Err(Error::Config("The api key is missing. Enter the api key the service operator gave your organisation.".into()));
        }
        if uuid::Uuid::parse_str(api_key.expose()).is_err() {
            return Err(Error::Config("The api key is not in the expected form (a UUID such as 123e4567-e89b-12d3-a456-426614174000). Check it for typing errors.".into()));
        }
        if username.trim().is_empty() {
            return Err(Error::Config(
                "The username is missing. Enter the username of the klant.".into(),
            ));
        }
        if password.is_empty() {
            return Err(Error::Config(
                "The password is missing. Enter the password of the klant.".into(),
            ));
        }
        Ok(Self {
            base_url,
            api_key,
            username,
            password,
            extra_ca_pem: None,
            allow_http_loopback,
            timeouts: Timeouts::default(),
        })
    }

    /// The URL of `endpoint` (e.g. `["util", "environment"]`) below the base URL's path.
    /// The service's OpenAPI description URL, checked to be on the base URL's origin: the api
    /// key is sent to it as a parameter, and must go nowhere else.
    pub fn openapi_url(&self, text: &str) -> Result<Url> {
        let url = Url::parse(text)
            .map_err(|_| Error::Config("The OpenAPI URL is not a valid URL.".into()))?;
        if url.origin() != self.base_url.origin() {
            return Err(Error::Config(
                "The OpenAPI URL must be on the same host as the base URL (the api key is sent to it)."
                    .into(),
            ));
        }
        Ok(url)
    }

    pub fn endpoint(&self, segments: &[&str]) -> Url {
        let mut url = self.base_url.clone();
        url.path_segments_mut()
            .expect("base URL is https, so it has a path")
            .pop_if_empty()
            .extend(segments);
        url
    }
}

/// Parses and checks a base URL: https (or http to loopback with the opt-in), a host, no
/// user info, query or fragment.
pub fn parse_base_url(text: &str, allow_http_loopback: bool) -> Result<Url> {
    let url = Url::parse(text.trim()).map_err(|e| {
        Error::Config(format!(
            "The base URL is not a valid URL ({e}). It looks like https://host/path/webservice_v2."
        ))
    })?;
    check_url(&url, allow_http_loopback)
        .map_err(|why| Error::Config(format!("The base URL {why}.")))?;
    if !url.username().is_empty()
        || url.password().is_some()
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(Error::Config(
            "The base URL must not contain a user name, password, query (?…) or fragment (#…)."
                .into(),
        ));
    }
    Ok(url)
}

/// Why `url` may not be used, if it may not: it must be https, or http to a loopback host when
/// `allow_http_loopback` is set.
pub fn check_url(url: &Url, allow_http_loopback: bool) -> std::result::Result<(), &'static str> {
    if url.host().is_none() {
        return Err("has no host");
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if allow_http_loopback && is_loopback(url) => Ok(()),
        "http" if is_loopback(url) => Err(
            "uses plain http; that is allowed for loopback addresses only with the explicit opt-in",
        ),
        _ => Err("must start with https://"),
    }
}

pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base: &str) -> ServiceConfig {
        ServiceConfig::new(
            base,
            "123e4567-e89b-12d3-a456-426614174000".into(),
            "u".into(),
            "p".into(),
            false,
        )
        .unwrap()
    }

    /// The base URL's path prefix is kept, with or without a trailing slash.
    #[test]
    fn endpoint_keeps_path_prefix() {
        assert_eq!(
            config("https://h/webservice_v2")
                .endpoint(&["util", "environment"])
                .as_str(),
            "https://h/webservice_v2/util/environment"
        );
        assert_eq!(
            config("https://h/webservice_v2/")
                .endpoint(&["webhook"])
                .as_str(),
            "https://h/webservice_v2/webhook"
        );
    }

    /// Plain http is refused except for loopback with the opt-in.
    #[test]
    fn http_only_for_opted_in_loopback() {
        assert!(parse_base_url("http://example.com/x", true).is_err());
        assert!(parse_base_url("http://127.0.0.1:8/x", false).is_err());
        assert!(parse_base_url("http://127.0.0.1:8/x", true).is_ok());
        assert!(parse_base_url("ftp://h/x", true).is_err());
        assert!(parse_base_url("https://user:pw@h/x", false).is_err());
    }

    /// A key that is not a UUID is refused before anything is sent.
    #[test]
    fn api_key_must_be_uuid() {
        let err = ServiceConfig::new(
            "https://h/x",
            "not-a-key".into(),
            "u".into(),
            "p".into(),
            false,
        )
        .unwrap_err();
        assert_eq!(err.code(), "config");
    }
}
