//! The SDK client for an [`S3Place`], and S3's failures said in words that name the target
//! and tell the user what to do.
//!
//! The client speaks TLS through rustls with ring (as the rest of Kluis; the SDK's default
//! aws-lc would need cmake and NASM for the Windows build) and trusts the system's CAs plus the
//! place's own. Requests are retried by the SDK's standard policy (a few tries with backoff on
//! throttling, 5xx and broken connections); what still fails is reported, and the copy is
//! pending for the next try.

use std::time::Duration;

use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::config::retry::RetryConfig;
use aws_sdk_s3::config::timeout::TimeoutConfig;
use aws_sdk_s3::config::{
    BehaviorVersion, Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation,
};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::{DateTime, DateTimeFormat};
use aws_sdk_s3::Client;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode, TlsContext, TrustStore};
use kluis_core::{Error, Result, Secret};

use super::S3Place;

/// The client for `place` (target `name`), signing with its access key and `secret`.
pub fn client(name: &str, place: &S3Place, secret: Option<&Secret>) -> Result<Client> {
    let secret = secret.filter(|s| !s.is_empty()).ok_or_else(|| {
        Error::Config(format!(
            "Copy target \"{name}\": its secret key is not saved on this computer; add the target again with its key."
        ))
    })?;
    let mut trust = TrustStore::default();
    if let Some(ca) = &place.ca_cert {
        let pem = std::fs::read(ca).map_err(|e| {
            Error::io(
                format!("read the CA certificate {ca} of copy target \"{name}\""),
                e,
            )
        })?;
        trust = trust.with_pem_certificate(pem);
    }
    let tls_context = TlsContext::builder()
        .with_trust_store(trust)
        .build()
        .map_err(|e| {
            Error::Config(format!(
                "Copy target \"{name}\": its CA certificate cannot be used ({e})."
            ))
        })?;
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .tls_context(tls_context)
        .build_https();
    let credentials = Credentials::new(&place.access_key_id, secret.expose(), None, None, "kluis");
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(place.region.clone()))
        .endpoint_url(&place.endpoint)
        .force_path_style(place.path_style)
        .credentials_provider(credentials)
        .http_client(http)
        // Kluis sends each body's SHA-256 itself (the server checks it); the SDK's own CRC on
        // top would read every part twice.
        .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
        .response_checksum_validation(ResponseChecksumValidation::WhenRequired)
        .retry_config(RetryConfig::standard().with_max_attempts(4))
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(30))
                .read_timeout(Duration::from_secs(300))
                .build(),
        )
        .build();
    Ok(Client::from_conf(config))
}

/// Beyond this, the SDK takes a server's clock to be off from this computer's (and signs its
/// next requests by the server's: its clock-skew correction).
const CLOCK_NOTICED: Duration = Duration::from_secs(4 * 60);
/// Beyond this, S3 refuses a signed request.
const CLOCK_REFUSED: Duration = Duration::from_secs(15 * 60);

/// How far the clock of the server that sent `response` (its `Date`) is from this computer's.
fn clock_off(response: &HttpResponse) -> Option<Duration> {
    let date = response.headers().get("date")?;
    let server = DateTime::from_str(date, DateTimeFormat::HttpDate).ok()?;
    let server = std::time::SystemTime::try_from(server).ok()?;
    let now = std::time::SystemTime::now();
    Some(match server.duration_since(now) {
        Ok(ahead) => ahead,
        Err(behind) => behind.duration(),
    })
}

/// Whether `response` refused a request (403) from a server whose clock is off from this
/// computer's by more than the SDK lets pass: asked again, the request is signed by the
/// server's clock.
pub fn refused_by_clock(response: Option<&HttpResponse>) -> bool {
    response.is_some_and(|r| {
        r.status().as_u16() == 403 && clock_off(r).is_some_and(|off| off > CLOCK_NOTICED)
    })
}

/// Whether the server said there is nothing at the key.
pub fn is_not_found<E>(e: &SdkError<E, HttpResponse>) -> bool {
    e.raw_response().is_some_and(|r| r.status().as_u16() == 404)
}

/// A request that failed, as far as it can be told.
#[derive(Debug)]
pub struct Failure {
    code: Option<String>,
    status: Option<u16>,
    detail: String,
    reached: bool,
    /// The server's clock (its `Date`) is off from this computer's by more than S3 allows.
    clock_refused: bool,
}

/// `e` as a [`Failure`].
pub fn failure<E: ProvideErrorMetadata + std::error::Error + 'static>(
    e: SdkError<E, HttpResponse>,
) -> Failure {
    let reached = matches!(e, SdkError::ServiceError(_) | SdkError::ResponseError(_));
    let status = e.raw_response().map(|r| r.status().as_u16());
    let clock_refused =
        (e.raw_response().and_then(clock_off)).is_some_and(|off| off > CLOCK_REFUSED);
    Failure {
        clock_refused,
        code: e.code().map(str::to_string),
        status,
        detail: match (e.message(), status) {
            (Some(message), _) => message.chars().take(300).collect(),
            // An answer without a body (a HEAD request's): its status is all there is.
            (None, Some(status)) if reached => format!("HTTP {status}"),
            (None, _) => (DisplayErrorContext(&e).to_string().chars())
                .take(300)
                .collect(),
        },
        reached,
    }
}

impl Failure {
    /// Whether the server refused because the object is locked (Object Lock).
    pub fn is_locked(&self) -> bool {
        self.code.as_deref() == Some("AccessDenied")
            && self.detail.to_ascii_lowercase().contains("lock")
    }

    /// Whether the server no longer knows the upload in parts.
    pub fn is_no_such_upload(&self) -> bool {
        self.code.as_deref() == Some("NoSuchUpload")
    }

    /// S3 refused requests signed by this computer's clock (`at`: the target and what failed).
    fn clock_wrong(at: &str) -> Error {
        Error::Config(format!(
            "{at}: this computer's clock differs too much from the server's, and S3 refuses requests signed with it. Set the clock right (automatic time), then try again."
        ))
    }

    /// The failure to `verb` ("write", "look", …) on target `name`, with what to do.
    pub fn said(&self, name: &str, verb: &str) -> Error {
        let at = format!("Copy target \"{name}\" (could not {verb})");
        match self.code.as_deref() {
            // A HEAD request's refusal has no body to say why: bad keys, or keys without the
            // right to read the bucket. Both are fixed where the keys are.
            // A bodiless refusal from a server whose clock is too far off to sign by (still,
            // after the SDK signed by it): the clock is what to set right.
            None if self.status == Some(403) && self.clock_refused => {
                Failure::clock_wrong(&at)
            }
            None if self.status == Some(403) => Error::AuthFailed(format!(
                "{at}: the server refused (HTTP 403): the access key or secret key is wrong, or the key may not read this bucket. Check them and add the target again."
            )),
            Some("InvalidAccessKeyId" | "SignatureDoesNotMatch" | "InvalidSecurity" | "InvalidToken") => {
                Error::AuthFailed(format!(
                    "{at}: the server refused the access key or secret key ({}). Check them and add the target again.",
                    self.detail
                ))
            }
            Some("RequestTimeTooSkewed") => Failure::clock_wrong(&at),
            Some("NoSuchBucket") => Error::Config(format!(
                "{at}: the bucket does not exist at this endpoint. Check the bucket name, region and endpoint."
            )),
            Some("AccessDenied") if self.is_locked() => Error::PermissionDenied(format!(
                "{at}: the object is locked (Object Lock) and cannot be deleted before its date ({})."
                , self.detail
            )),
            Some("AccessDenied" | "AllAccessDisabled" | "AccountProblem") => Error::PermissionDenied(format!(
                "{at}: access denied ({}). Give the key permission to list, read and write the bucket.",
                self.detail
            )),
            Some("InvalidRequest" | "InvalidArgument") if self.detail.to_ascii_lowercase().contains("lock") => {
                Error::Config(format!(
                    "{at}: the bucket does not take Object Lock ({}). Turn Object Lock on for the bucket (it can only be chosen when the bucket is made), or set the target without a lock.",
                    self.detail
                ))
            }
            Some("BadDigest" | "InvalidDigest" | "XAmzContentSHA256Mismatch") => Error::Network(format!(
                "{at}: the server received other bytes than were sent ({}); it is tried again later.",
                self.detail
            )),
            Some("EntityTooLarge" | "QuotaExceeded" | "StorageQuotaExceeded") => Error::Io(format!(
                "{at}: the bucket is full or the file is larger than the server takes ({}).",
                self.detail
            )),
            _ if !self.reached => Error::Network(format!(
                "{at}: the server could not be reached ({}). Check the endpoint and the connection; the copy is made later.",
                self.detail
            )),
            code => Error::ServiceError(format!(
                "{at}: the server answered {}{} ({}); the copy is made later.",
                self.status.map(|s| s.to_string()).unwrap_or_default(),
                code.map(|c| format!(" {c}")).unwrap_or_default(),
                self.detail
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal for the clock is said as the clock, with what to do — whether the server
    /// named it (`RequestTimeTooSkewed`) or, a HEAD's refusal without a body, its `Date` showed
    /// a clock too far off; a bodiless refusal with the clocks agreeing is the keys.
    #[test]
    fn a_refusal_for_the_clock_is_said_as_the_clock() {
        let failed = |code: Option<&str>, clock_refused| Failure {
            code: code.map(str::to_string),
            status: Some(403),
            detail: "HTTP 403".into(),
            reached: true,
            clock_refused,
        };
        for said in [
            failed(Some("RequestTimeTooSkewed"), false).said("Cloud", "write"),
            failed(None, true).said("Cloud", "look"),
        ] {
            assert_eq!(said.code().as_str(), "config", "{said}");
            assert!(said.to_string().contains("Set the clock right"), "{said}");
            assert!(said.to_string().contains("\"Cloud\""), "{said}");
        }
        let keys = failed(None, false).said("Cloud", "look");
        assert_eq!(keys.code().as_str(), "auth_failed", "{keys}");
    }
}
