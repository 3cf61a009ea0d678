//! Who is asking: the `Authorization: Bearer` of an inbox API request is a tenant key or the
//! shared secret. The relay-wide rate limit comes first (so guessing keys is slow and costs no
//! database read), then the key, then the tenant's own requests-per-second quota.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::{internal, refusal, Relay};
use crate::tenants::{authenticate, constant_time_eq, Tenant};

/// Proof that a request carries a working key, and for whom; any other is answered 401 (or
/// 429) before the handler runs.
pub struct Authorized(pub Tenant);

impl axum::extract::FromRequestParts<Arc<Relay>> for Authorized {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        relay: &Arc<Relay>,
    ) -> Result<Self, Response> {
        if !relay.api_rate.admit() {
            return Err(refusal(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "the relay takes no more requests a second; try again shortly",
                Some(1),
            ));
        }
        let tenant = match tenant_of(relay, &parts.headers).await {
            Ok(Some(tenant)) => tenant,
            Ok(None) => {
                return Err(refusal(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "the key is not one this relay accepts (revoked, expired or mistyped)",
                    None,
                ))
            }
            Err(e) => return Err(internal(e)),
        };
        if let Some(per_sec) = tenant.quota.requests_per_sec {
            let budget = Relay::budget(
                &relay.tenant_rates,
                &tenant.name,
                |(rate, _)| *rate == per_sec,
                || {
                    let burst = (2.0 * per_sec).max(1.0);
                    (
                        per_sec,
                        Arc::new(kluis_https::RateLimit::new(per_sec, burst)),
                    )
                },
            );
            if !budget.1.admit() {
                relay.metrics.refused(&tenant.name, "requests");
                return Err(refusal(
                    StatusCode::TOO_MANY_REQUESTS,
                    "quota_requests",
                    "this tenant's requests-per-second quota is used up; try again shortly",
                    Some(1),
                ));
            }
        }
        Ok(Authorized(tenant))
    }
}

async fn tenant_of(
    relay: &Relay,
    headers: &HeaderMap,
) -> Result<Option<Tenant>, crate::storage::StoreError> {
    let given = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if crate::tenants::parse(given).is_some() {
        return authenticate(&relay.keys, relay.store(), given).await;
    }
    let secret = relay.config.secret.as_bytes();
    Ok((!secret.is_empty() && constant_time_eq(given.as_bytes(), secret)).then(Tenant::shared))
}
