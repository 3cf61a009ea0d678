//! Sign-in, token reuse and renewal, against the simulator over real TLS.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use kluis_core::clock::Clock;
use kluis_core::session::{TOKEN_LIFETIME, TOKEN_MARGIN};
use kluis_core::{Secret, ServiceClient, Session};
use tokio::time::Instant;

/// A clock tests move by hand (real network I/O cannot run under tokio's paused clock).
struct ManualClock {
    start: Instant,
    offset: Mutex<Duration>,
}

impl ManualClock {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            start: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        })
    }
    fn advance(&self, by: Duration) {
        *self.offset.lock().unwrap() += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + *self.offset.lock().unwrap()
    }
}

/// A second call reuses the token: one /authenticate for two calls.
#[tokio::test]
async fn token_is_reused_while_valid() {
    let sim = sim(|_| {}).await;
    let session = session(demo_config(&sim));
    let env = session.environment().await.expect("environment");
    assert_eq!(
        env["username"], "demo",
        "the environment answer is passed through as JSON"
    );
    session.environment().await.unwrap();
    assert_eq!(sim.stats().authenticate, 1);
    assert_eq!(sim.stats().environment, 2);
}

/// 100 concurrent calls when the token is about to expire cause exactly one new sign-in.
#[tokio::test]
async fn concurrent_calls_at_expiry_share_one_renewal() {
    let sim = sim(|_| {}).await;
    let clock = ManualClock::new();
    let session = Arc::new(
        Session::new(
            ServiceClient::new(demo_config(&sim))
                .unwrap()
                .with_retry(FAST_RETRY),
        )
        .with_clock(clock.clone()),
    );
    session.sign_in().await.unwrap();
    clock.advance(TOKEN_LIFETIME - TOKEN_MARGIN + Duration::from_secs(1));
    let calls = (0..100).map(|_| {
        let session = session.clone();
        tokio::spawn(async move { session.environment().await })
    });
    for call in futures_util::future::join_all(calls).await {
        call.unwrap().expect("every call succeeds");
    }
    assert_eq!(
        sim.stats().authenticate,
        2,
        "one sign-in at the start, exactly one renewal"
    );
    assert_eq!(sim.stats().environment, 100);
}

/// When the server drops tokens early, 100 concurrent calls get 401 and share one re-sign-in.
#[tokio::test]
async fn concurrent_401s_share_one_reauthentication() {
    let sim = sim(|_| {}).await;
    let session = Arc::new(session(demo_config(&sim)));
    session.sign_in().await.unwrap();
    sim.expire_all_tokens();
    let calls = (0..100).map(|_| {
        let session = session.clone();
        tokio::spawn(async move { session.environment().await })
    });
    for call in futures_util::future::join_all(calls).await {
        call.unwrap()
            .expect("every call succeeds after one renewal");
    }
    assert_eq!(
        sim.stats().authenticate,
        2,
        "the 401s must not each sign in again"
    );
}

/// A token the server no longer accepts is renewed and the call retried once, not in a loop.
#[tokio::test]
async fn unauthorized_is_retried_once_only() {
    let sim = sim(|c| c.token_lifetime = Duration::ZERO).await;
    let session = session(demo_config(&sim));
    let err = session
        .environment()
        .await
        .expect_err("every token is already expired");
    assert_eq!(err.code(), "auth_failed");
    assert_eq!(
        sim.stats().authenticate,
        2,
        "first sign-in plus one renewal, then stop"
    );
    assert_eq!(sim.stats().environment, 2);
}

/// Wrong credentials give auth_failed, and the message carries no secret.
#[tokio::test]
async fn wrong_password_is_auth_failed() {
    let sim = sim(|_| {}).await;
    let config = service_config(
        &sim,
        &kluis_sim::config::DEMO_API_KEY.to_string(),
        "wrong-password-123",
    );
    let err = session(config).environment().await.unwrap_err();
    assert_eq!(err.code(), "auth_failed");
    let shown = format!("{err} {err:?}");
    assert!(
        !shown.contains("wrong-password-123")
            && !shown.contains(&kluis_sim::config::DEMO_API_KEY.to_string()),
        "{shown}"
    );
}

/// A 403 with a token fetched for the call is the api_key's verdict: no second sign-in.
#[tokio::test]
async fn forbidden_with_fresh_token_is_permission_denied() {
    let sim = sim(|_| {}).await;
    let session = session(restricted_config(&sim));
    let url = url::Url::parse("https://127.0.0.1:9/cb").unwrap();
    let err = session.backup_owner(&url).await.unwrap_err();
    assert_eq!(err.code(), "permission_denied");
    assert_eq!(sim.stats().authenticate, 1);
    assert_eq!(sim.stats().backups_started, 0);
}

/// A 403 with a cached token may be a stale token: one renewal, then permission_denied.
#[tokio::test]
async fn forbidden_with_cached_token_renews_once() {
    let sim = sim(|_| {}).await;
    let session = session(restricted_config(&sim));
    session
        .environment()
        .await
        .expect("this key may read the environment");
    let url = url::Url::parse("https://127.0.0.1:9/cb").unwrap();
    let err = session.backup_owner(&url).await.unwrap_err();
    assert_eq!(err.code(), "permission_denied");
    assert_eq!(sim.stats().authenticate, 2);
}

/// A non-https webhook_url is refused by the service (400) and reported as a service error.
#[tokio::test]
async fn http_webhook_url_is_refused_by_the_service() {
    let sim = sim(|_| {}).await;
    let session = session(demo_config(&sim));
    let err = session
        .backup_owner(&url::Url::parse("http://127.0.0.1:9/cb").unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "service_error");
    assert!(err.to_string().contains("400"), "{err}");
}

/// The server's own certificate must be trusted: without the extra CA the call fails — named
/// as a certificate this computer does not trust (a private CA, or an office proxy that
/// inspects TLS), never as "check the internet connection and the base URL" (197df1f).
#[tokio::test]
async fn untrusted_certificate_is_refused() {
    let sim = sim(|_| {}).await;
    let mut config = demo_config(&sim);
    config.extra_ca_pem = None;
    let err = session(config).environment().await.unwrap_err();
    assert_eq!(err.code(), "certificate");
    assert!(err.to_string().contains("not trusted"), "{err}");
    assert!(!err.to_string().contains("base URL"), "{err}");
    // What the server sent is named, to compare with the CA file before trusting it.
    let ca = &kluis_core::trust::describe(sim.ca_pem()).unwrap()[0];
    let message = err.to_string();
    assert!(
        message.contains("issued by CN=kluis-sim local CA"),
        "{message}"
    );
    assert!(
        message.contains(&format!("ends at {} (SHA-256 {})", ca.subject, ca.sha256)),
        "{message}"
    );
    assert_eq!(
        sim.stats().authenticate,
        0,
        "no request may pass an unverified TLS handshake (the look at the certificate sends none)"
    );
}

/// A secret never shows in the session's Debug output.
#[test]
fn secrets_do_not_debug_print() {
    let s = Secret::new("5d1b7c3e-0000-4000-8000-00000000de40");
    assert!(!format!("{s:?}").contains("5d1b7c3e"));
}
