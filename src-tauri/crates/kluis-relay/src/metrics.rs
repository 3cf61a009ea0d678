//! What an operator's Prometheus scrapes from `/metrics` (served on `--metrics-listen` only:
//! the per-tenant labels name the relay's customers, which the public listener must not show).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QuotaLabels {
    /// `*` for the shared secret.
    pub tenant: String,
    /// `requests`, `inboxes`, `events` or `bytes`.
    pub quota: String,
}

pub struct Metrics {
    registry: Registry,
    pub callbacks_stored: Counter,
    pub polls_parked: Gauge,
    /// Seconds from a callback being stored to a long-poll answering with it.
    pub delivery_latency: Histogram,
    pub quota_refusals: Family<QuotaLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let callbacks_stored = Counter::default();
        let polls_parked = Gauge::default();
        // 1 ms … 16 s.
        let delivery_latency = Histogram::new(exponential_buckets(0.001, 2.0, 15));
        let quota_refusals = Family::<QuotaLabels, Counter>::default();
        let mut registry = Registry::with_prefix("kluis_relay");
        registry.register(
            "callbacks_stored",
            "Callbacks stored for delivery",
            callbacks_stored.clone(),
        );
        registry.register(
            "long_polls_parked",
            "Long-polls waiting for a callback at this instance",
            polls_parked.clone(),
        );
        registry.register(
            "delivery_latency_seconds",
            "From a callback being stored to a long-poll answering with it",
            delivery_latency.clone(),
        );
        registry.register(
            "quota_refusals",
            "Requests and callbacks refused by a tenant's quota",
            quota_refusals.clone(),
        );
        Self {
            registry,
            callbacks_stored,
            polls_parked,
            delivery_latency,
            quota_refusals,
        }
    }
}

impl Metrics {
    pub fn refused(&self, tenant: &str, quota: &str) {
        self.quota_refusals
            .get_or_create(&QuotaLabels {
                tenant: tenant.into(),
                quota: quota.into(),
            })
            .inc();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
