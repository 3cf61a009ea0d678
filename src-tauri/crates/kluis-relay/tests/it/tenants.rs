//! Tenants over real HTTP on 127.0.0.1: each key sees only its own inboxes (another's is 404,
//! exactly like one that does not exist), quotas answer 429/507 with a code and are counted in
//! the metrics, and revoked or rotated-out keys stop working.

use kluis_relay::storage::now_ms;
use kluis_relay::{Quota, RelayConfig, SqliteStore, Storage};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::common;
use crate::common::{start, start_with, Running, SECRET};

/// Adds tenant `name` with `quota` and returns its key.
async fn tenant(relay: &Running, name: &str, quota: Quota) -> String {
    let key = kluis_relay::tenants::new_key();
    assert!(relay
        .relay
        .store()
        .add_tenant(name, quota, &key.id, key.hash)
        .await
        .unwrap());
    key.text
}

/// Status and `code` of a refusal.
async fn answer(r: reqwest::Response) -> (StatusCode, Value) {
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// One tenant's key cannot read, acknowledge or delete another's inbox, nor can the shared
/// secret; each such request gets the very answer an inbox that never existed gets.
#[tokio::test]
async fn a_key_sees_only_its_own_inboxes() {
    let relay = start(SqliteStore::in_memory().unwrap()).await;
    let acme = tenant(&relay, "acme", Quota::UNLIMITED).await;
    let other = tenant(&relay, "other", Quota::UNLIMITED).await;
    let (inbox, path) = relay.create_as(&acme).await;
    assert_eq!(relay.callback(&path).await, StatusCode::OK);

    let never = "0".repeat(40);
    for key in [other.as_str(), SECRET] {
        for target in [inbox.as_str(), never.as_str()] {
            let poll = relay.api(Method::GET, &format!("/api/inboxes/{target}/events"), key);
            let ack = relay
                .api(Method::POST, &format!("/api/inboxes/{target}/ack"), key)
                .json(&json!({ "up_to": i64::MAX }));
            let delete = relay.api(Method::DELETE, &format!("/api/inboxes/{target}"), key);
            for request in [poll, ack, delete] {
                let (status, body) = answer(request.send().await.unwrap()).await;
                assert_eq!(
                    (status, body["code"].as_str()),
                    (StatusCode::NOT_FOUND, Some("no_inbox")),
                    "{target} with another's key: 404, as if it did not exist"
                );
            }
        }
    }
    let own = relay
        .api(Method::GET, &format!("/api/inboxes/{inbox}/events"), &acme)
        .send()
        .await
        .unwrap();
    let own: Value = own.json().await.unwrap();
    assert_eq!(
        own["events"].as_array().unwrap().len(),
        1,
        "the owner still has its callback: nothing was acknowledged or deleted by the others"
    );
}

/// Inboxes, unacknowledged callbacks and their bytes are bounded per tenant (507 with the
/// quota's code, counted in the metrics), and acknowledging makes room again; another tenant
/// is not affected.
#[tokio::test]
async fn storage_quotas_refuse_with_507() {
    let relay = start(SqliteStore::in_memory().unwrap()).await;
    let quota = Quota {
        max_inboxes: Some(2),
        max_events: Some(3),
        max_bytes: Some(1000),
        requests_per_sec: None,
    };
    let acme = tenant(&relay, "acme", quota).await;
    let other = tenant(&relay, "other", quota).await;
    let (first, first_path) = relay.create_as(&acme).await;
    let (_, second_path) = relay.create_as(&acme).await;
    let (status, body) = answer(
        relay
            .api(Method::POST, "/api/inboxes", &acme)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::INSUFFICIENT_STORAGE, Some("quota_inboxes"))
    );
    relay.create_as(&other).await; // another tenant's quota is its own

    for path in [&first_path, &second_path, &first_path] {
        assert_eq!(relay.callback(path).await, StatusCode::OK);
    }
    let refused = relay
        .client
        .get(format!("{}{second_path}?id=over", relay.base))
        .send()
        .await
        .unwrap();
    let (status, body) = answer(refused).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::INSUFFICIENT_STORAGE, Some("quota_events"))
    );

    let acked = relay
        .api(Method::POST, &format!("/api/inboxes/{first}/ack"), &acme)
        .json(&json!({ "up_to": i64::MAX }))
        .send()
        .await
        .unwrap();
    assert_eq!(acked.json::<Value>().await.unwrap()["removed"], 2);
    assert_eq!(
        relay.callback(&second_path).await,
        StatusCode::OK,
        "room again after the ack"
    );

    let long = format!("{}{first_path}?id={}", relay.base, "x".repeat(990));
    let (status, body) = answer(relay.client.get(long).send().await.unwrap()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::INSUFFICIENT_STORAGE, Some("quota_bytes"))
    );

    let metrics = relay.relay.metrics().render();
    for quota in ["inboxes", "events", "bytes"] {
        assert!(
            metrics.contains(&format!(
                "kluis_relay_quota_refusals_total{{tenant=\"acme\",quota=\"{quota}\"}} 1"
            )),
            "{quota} refusal counted:\n{metrics}"
        );
    }
}

/// A tenant's requests a second are bounded (429 with Retry-After and its code) without
/// touching another tenant's budget: at 1 a second (a burst of 2, by a clock that stands
/// still) exactly the third request is refused.
#[tokio::test]
async fn the_request_rate_is_bounded_per_tenant() {
    let still = |c: &mut RelayConfig| c.clock = kluis_https::Clock::manual();
    let relay = start_with(SqliteStore::in_memory().unwrap(), still, Default::default()).await;
    let slow = Quota {
        requests_per_sec: Some(1.0),
        ..Quota::UNLIMITED
    };
    let acme = tenant(&relay, "acme", slow).await;
    let other = tenant(&relay, "other", slow).await;
    let mut statuses = Vec::new();
    let mut refused = None;
    for _ in 0..3 {
        let r = relay
            .api(Method::GET, "/api/stats", &acme)
            .send()
            .await
            .unwrap();
        statuses.push(r.status());
        if r.status() == StatusCode::TOO_MANY_REQUESTS {
            let retry = r.headers().get("retry-after").cloned();
            refused = Some((retry, r.json::<Value>().await.unwrap()["code"].clone()));
        }
    }
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
    let (retry, code) = refused.unwrap();
    assert!(retry.is_some(), "says when to retry");
    assert_eq!(code, "quota_requests");
    let r = relay
        .api(Method::GET, "/api/stats", &other)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "another tenant still gets in");
}

/// Nobody without a key, and no tenant past its own quota, spends the relay-wide budget the
/// others need: with that budget at 5 a second and the one for unknown keys at 5 (bursts of
/// 10, by a clock that stands still), 100 requests with no working key and 30 from a tenant
/// over its 1-a-second quota are all refused, and another office still makes its inbox (it
/// was answered 429: every request spent the shared budget before its key was checked).
///
/// And junk keeps no office out (issue 43): the tenants' keys were made before the relay
/// started — as after a restart, when the relay has read none of them — and the junk came
/// first and spent the whole budget for unknown keys; each office's first request still gets
/// in (it was answered 429 `rate_limited` until that budget refilled: on a fast machine
/// always, on a slow one not, which is why this test failed only on fast ones).
#[tokio::test]
async fn no_key_and_one_tenant_cannot_spend_the_others_budget() {
    let store = SqliteStore::in_memory().unwrap();
    let slow = Quota {
        requests_per_sec: Some(1.0),
        ..Quota::UNLIMITED
    };
    let mut offices = Vec::new();
    for name in ["greedy", "bakker", "visser"] {
        let key = kluis_relay::tenants::new_key();
        assert!(store
            .add_tenant(name, slow, &key.id, key.hash)
            .await
            .unwrap());
        offices.push(key.text);
    }
    let relay = start_with(
        store,
        |c| {
            c.clock = kluis_https::Clock::manual();
            c.api_per_sec = 5.0;
            c.unauthenticated_per_sec = 5.0;
        },
        Default::default(),
    )
    .await;
    let mut junk = (0, 0);
    for n in 0..100 {
        let guess = match n % 2 {
            0 => "a guess".to_string(),
            _ => format!("klr_{n:016x}_notthesecret"),
        };
        let r = relay
            .api(Method::GET, "/api/stats", &guess)
            .send()
            .await
            .unwrap();
        match r.status() {
            StatusCode::UNAUTHORIZED => junk.0 += 1,
            StatusCode::TOO_MANY_REQUESTS => junk.1 += 1,
            other => panic!("junk answered {other}"),
        }
    }
    assert_eq!(junk, (10, 90), "the junk spent its whole budget");
    let mut statuses = Vec::new();
    for _ in 0..30 {
        let r = relay
            .api(Method::GET, "/api/stats", &offices[0])
            .send()
            .await
            .unwrap();
        let (status, body) = answer(r).await;
        statuses.push((status.as_u16(), body["code"].as_str().map(str::to_string)));
    }
    let quota = (429, Some("quota_requests".to_string()));
    assert_eq!(
        (
            statuses[..2].to_vec(),
            statuses[2..].iter().all(|s| *s == quota)
        ),
        (vec![(200, None), (200, None)], true),
        "the greedy office's own key gets in, then its own quota refuses it: {statuses:?}"
    );
    // The other offices, and the shared secret's.
    for office in offices[1..].iter().map(String::as_str).chain([SECRET]) {
        let r = relay
            .api(Method::POST, "/api/inboxes", office)
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            StatusCode::CREATED,
            "another office gets its inbox"
        );
    }
}

/// A revoked tenant's key is refused and its inboxes are gone (their callbacks 404); a
/// rotation with no overlap ends the old key at once while the new one works.
#[tokio::test]
async fn revoked_and_rotated_out_keys_stop_working() {
    // Keys read at every request (the default trusts a read key for 5 s).
    let relay = start_with(
        SqliteStore::in_memory().unwrap(),
        |c| c.key_ttl = std::time::Duration::ZERO,
        Default::default(),
    )
    .await;
    let acme = tenant(&relay, "acme", Quota::UNLIMITED).await;
    let (_, path) = relay.create_as(&acme).await;
    let store = relay.relay.store();

    let new = kluis_relay::tenants::new_key();
    assert!(store
        .rotate_key("acme", &new.id, new.hash, now_ms())
        .await
        .unwrap());
    let old = relay
        .api(Method::POST, "/api/inboxes", &acme)
        .send()
        .await
        .unwrap();
    assert_eq!(
        old.status(),
        StatusCode::UNAUTHORIZED,
        "the rotated-out key"
    );
    relay.create_as(&new.text).await;

    assert!(store.revoke_tenant("acme").await.unwrap());
    let revoked = relay
        .api(Method::POST, "/api/inboxes", &new.text)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        relay.callback(&path).await,
        StatusCode::NOT_FOUND,
        "its inboxes are gone"
    );
}

/// The SQLite engine keeps the storage contract (tenants, ownership, order, quotas, totals).
#[tokio::test]
async fn sqlite_keeps_the_storage_contract() {
    common::contract::storage_contract(&SqliteStore::in_memory().unwrap()).await;
}

/// The SQLite engine keeps the office hub's contract (PCs, turns, reports, invitations).
#[tokio::test]
async fn sqlite_keeps_the_office_contract() {
    common::office_contract::office_contract(&SqliteStore::in_memory().unwrap()).await;
    common::office_contract::reports_contract(&SqliteStore::in_memory().unwrap()).await;
    common::office_contract::invites_contract(&SqliteStore::in_memory().unwrap()).await;
}

/// Without a shared secret configured, an empty bearer is no key.
#[tokio::test]
async fn tenant_keys_only_when_no_shared_secret() {
    let relay = start_with(
        SqliteStore::in_memory().unwrap(),
        |c| c.secret.clear(),
        Default::default(),
    )
    .await;
    let acme = tenant(&relay, "acme", Quota::UNLIMITED).await;
    relay.create_as(&acme).await;
    for key in ["", SECRET] {
        let r = relay
            .api(Method::POST, "/api/inboxes", key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{key:?}");
    }
}
