//! Who is asking: the `Authorization: Bearer` of an inbox API request is a tenant key or the
//! shared secret. The key comes first, then the tenant's own requests-per-second quota, and
//! only then the relay-wide budget: a request without a working key, or one its tenant's quota
//! refuses, spends nothing the other tenants need (before, every request spent the relay-wide
//! budget first, so anyone without a key could make every office's inbox creation fail with
//! 429). A key id the relay's key directory holds (every key's, read at the first need and
//! again whenever keys change) is looked up at once; a key id it does not hold and every
//! request that fails to authenticate share a budget of their own, so guessing keys is slow
//! and costs the database little — and junk that spends that budget keeps no office out.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::{internal, refusal, Relay};
use crate::tenants::{authenticate, constant_time_eq, Tenant};

/// Proof that a request carries a working key, and for whom; any other is answered 401 (or
/// 429) before the handler runs.
pub struct Authorized(pub Tenant);

fn too_many(code: &str, message: &str) -> Response {
    refusal(StatusCode::TOO_MANY_REQUESTS, code, message, Some(1))
}

impl axum::extract::FromRequestParts<Arc<Relay>> for Authorized {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        relay: &Arc<Relay>,
    ) -> Result<Self, Response> {
        let unauthenticated = || {
            too_many(
                "rate_limited",
                "the relay takes no more requests a second without a working key; try again shortly",
            )
        };
        let tenant = match tenant_of(relay, &parts.headers).await {
            Ok((Some(tenant), _)) => tenant,
            // Each failure is charged once: before its look-up, or now.
            Ok((None, false)) if !relay.unauthenticated_rate.admit() => {
                return Err(unauthenticated())
            }
            Ok((None, _)) => {
                return Err(refusal(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "the key is not one this relay accepts (revoked, expired or mistyped)",
                    None,
                ))
            }
            Err(Refused::Budget) => return Err(unauthenticated()),
            Err(Refused::Store(e)) => return Err(internal(e)),
        };
        if let Some(per_sec) = tenant.quota.requests_per_sec {
            let budget = Relay::budget(
                &relay.tenant_rates,
                &tenant.name,
                |(rate, _)| *rate == per_sec,
                || {
                    let burst = (2.0 * per_sec).max(1.0);
                    (per_sec, Arc::new(relay.config.rate(per_sec, burst)))
                },
            );
            if !budget.1.admit() {
                relay.metrics.refused(&tenant.name, "requests");
                return Err(too_many(
                    "quota_requests",
                    "this tenant's requests-per-second quota is used up; try again shortly",
                ));
            }
        }
        if !relay.api_rate.admit() {
            return Err(too_many(
                "rate_limited",
                "the relay takes no more requests a second; try again shortly",
            ));
        }
        Ok(Authorized(tenant))
    }
}

/// Why no tenant could be told: the database's budget for unknown keys is spent, or it failed.
enum Refused {
    Budget,
    Store(crate::storage::StoreError),
}

/// The tenant of the request's key, if it works, and whether the request was charged to the
/// budget for unknown keys: a key id the key directory does not hold is looked up only within
/// it (junk, or a key made at another instance a moment ago whose notice is on its way).
async fn tenant_of(relay: &Relay, headers: &HeaderMap) -> Result<(Option<Tenant>, bool), Refused> {
    let given = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if let Some((id, _)) = crate::tenants::parse(given) {
        let known = (relay.keys.knows(relay.store(), id).await).map_err(Refused::Store)?;
        let charged = !known;
        if charged && !relay.unauthenticated_rate.admit() {
            return Err(Refused::Budget);
        }
        let tenant =
            (authenticate(&relay.keys, relay.store(), given).await).map_err(Refused::Store)?;
        if charged && tenant.is_some() {
            relay.keys.learn(id);
        }
        return Ok((tenant, charged));
    }
    let secret = relay.config.secret.as_bytes();
    let shared = !secret.is_empty() && constant_time_eq(given.as_bytes(), secret);
    Ok((shared.then(Tenant::shared), false))
}
