//! The webhook.site transport against the simulator's fake of webhook.site's API.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use kluis_core::callback::WebhookSiteTransport;

/// The callback is caught at (fake) webhook.site and found there by polling.
#[tokio::test]
async fn backup_through_webhook_site() {
    let mut h = Harness::new(|c| c.faults.duplicate_callbacks = 1).await;
    let transport = WebhookSiteTransport::new(h.sim.webhook_site_url().as_str(), &h.config)
        .unwrap()
        .with_poll_interval(Duration::from_millis(50));
    h.transport = Arc::new(transport);
    let (saved, _) = h.backup().await;
    let saved = saved.expect("the id is found at webhook.site");
    assert_eq!(saved.sha256, expected_sha(saved.bytes));
    assert_eq!(
        h.sim.stats().webhook,
        1,
        "the duplicate is not redeemed twice"
    );
    assert_eq!(
        h.history.list(None, 1).unwrap()[0].transport,
        "webhook-site"
    );
}

/// Only https is accepted for the webhook.site URL.
#[tokio::test]
async fn webhook_site_url_must_be_https() {
    let h = Harness::new(|_| {}).await;
    assert_eq!(
        WebhookSiteTransport::new("http://webhook.site", &h.config)
            .err()
            .unwrap()
            .code(),
        "config"
    );
}
