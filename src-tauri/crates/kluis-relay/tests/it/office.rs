//! The office hub over HTTP (`/api/office/…`, a PC's key only) and its operator's commands
//! (`kluis-relay tenant pc-key …`).

use std::path::Path;

use kluis_relay::tenants::new_key;
use kluis_relay::SqliteStore;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::common::office_contract::klant;
use crate::common::{start, Running, SECRET};

/// Tenant `office` with PCs RECEPTIE and BALIE, tenant `other` with PC RECEPTIE, on `relay`:
/// the tenant key and the three PC keys.
async fn offices(relay: &Running) -> (String, String, String, String) {
    let store = relay.relay.store();
    let add = |tenant: &'static str| async move {
        let key = new_key();
        assert!(store
            .add_tenant(tenant, Default::default(), &key.id, key.hash)
            .await
            .unwrap());
        key.text
    };
    let pc = |tenant: &'static str, name: &'static str| async move {
        let key = new_key();
        assert!(store.add_pc(tenant, name, &key.id, key.hash).await.unwrap());
        key.text
    };
    let office = add("office").await;
    add("other").await;
    let (receptie, balie) = (pc("office", "RECEPTIE").await, pc("office", "BALIE").await);
    let elsewhere = pc("other", "RECEPTIE").await;
    (office, receptie, balie, elsewhere)
}

/// `POST /api/office/turns/<klant>` as `key`: the status and the answer.
async fn take(relay: &Running, key: &str, klant: &str, body: Value) -> (StatusCode, Value) {
    let path = format!("/api/office/turns/{klant}");
    let response = relay
        .api(Method::POST, &path, key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// One PC of an office at a time has a klant's turn, the others are told whose it is and,
/// once it backed the klant up, that it did and when; another office's PC knows none of it.
/// Only a PC's key may ask (the office's own key and the shared secret are refused), a klant
/// is only a hub id, and the bounds are said. A PC key acts for its office's inboxes too. A
/// PC revoked from the desk beside it is shut out at once.
#[tokio::test]
async fn a_klant_s_turn_goes_to_one_pc_of_the_office_at_a_time() {
    let relay = start(SqliteStore::in_memory().unwrap()).await;
    let (office, receptie, balie, elsewhere) = offices(&relay).await;
    let k = klant(9);
    let hour = json!({ "hold_ms": 3_600_000, "slot_age_ms": 0 });

    let (status, yours) = take(&relay, &receptie, &k, hour.clone()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(yours, json!({ "turn": "yours", "hold_ms": 3_600_000 }));
    let (_, held) = take(&relay, &balie, &k, hour.clone()).await;
    assert_eq!(
        (held["turn"].as_str(), held["by"].as_str()),
        (Some("held"), Some("RECEPTIE"))
    );
    let (_, apart) = take(&relay, &elsewhere, &k, hour.clone()).await;
    assert_eq!(apart["turn"], "yours", "another office's PC: {apart}");

    for not_a_pc in [office.as_str(), SECRET] {
        let (status, refused) = take(&relay, not_a_pc, &k, hour.clone()).await;
        assert_eq!(
            (status, refused["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("not_a_pc"))
        );
    }
    for (name, body) in [
        ("NOT-HEX", hour.clone()),
        (&k[..], json!({ "hold_ms": 0 })),
        (&k[..], json!({ "hold_ms": 3_600_001 })),
        (&k[..], json!({ "hold_ms": 1000, "slot_age_ms": -1 })),
    ] {
        let (status, refused) = take(&relay, &receptie, name, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name} {body}: {refused}");
        assert_eq!(refused["code"], "bad_request");
    }

    let path = format!("/api/office/turns/{k}?backed_up=true");
    let ended: Value = (relay
        .api(Method::DELETE, &path, &receptie)
        .send()
        .await
        .unwrap())
    .json()
    .await
    .unwrap();
    assert_eq!(ended, json!({ "had_turn": true }));
    let slot = json!({ "hold_ms": 60_000, "slot_age_ms": 3_600_000 });
    let (_, done) = take(&relay, &balie, &k, slot).await;
    assert_eq!(
        (done["turn"].as_str(), done["by"].as_str()),
        (Some("done"), Some("RECEPTIE"))
    );
    assert!(
        done["ago_ms"].as_i64().is_some_and(|ago| ago >= 0),
        "{done}"
    );

    let made = relay
        .api(Method::POST, "/api/inboxes", &balie)
        .send()
        .await
        .unwrap();
    assert_eq!(
        made.status(),
        StatusCode::CREATED,
        "a PC's key makes its office's inboxes"
    );

    let listed: Value = (relay
        .api(Method::GET, "/api/office/pcs", &balie)
        .send()
        .await
        .unwrap())
    .json()
    .await
    .unwrap();
    let names: Vec<&str> = (listed["pcs"].as_array().unwrap().iter())
        .map(|pc| pc["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["BALIE", "RECEPTIE"], "this office's PCs only");

    let revoke = |name: &str, key: &str| {
        relay
            .api(Method::DELETE, &format!("/api/office/pcs/{name}"), key)
            .send()
    };
    assert_eq!(
        revoke("RECEPTIE", &balie).await.unwrap().status(),
        StatusCode::NO_CONTENT
    );
    let (status, _) = take(&relay, &receptie, &k, hour.clone()).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "the revoked PC is shut out at once"
    );
    assert_eq!(
        revoke("RECEPTIE", &balie).await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        revoke("RECEPTIE", &elsewhere).await.unwrap().status(),
        StatusCode::NO_CONTENT,
        "the other office's RECEPTIE is its own"
    );
}

/// Runs `kluis-relay ARGS --data DIR`: exit code, stdout, stderr.
fn run(data: &Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kluis-relay"))
        .args(args)
        .arg("--data")
        .arg(data)
        .env_remove("KLUIS_RELAY_SECRET")
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The operator adds a PC to an office (its key printed once, on stdout alone), lists the
/// office's PCs and revokes one; a name is checked and live once, an office must be there.
#[test]
fn the_operator_adds_lists_and_revokes_an_office_s_pcs() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(run(dir.path(), &["tenant", "add", "office"]).0, 0);
    let (code, key, advice) = run(
        dir.path(),
        &["tenant", "pc-key", "add", "office", "RECEPTIE"],
    );
    assert_eq!(code, 0, "{advice}");
    assert!(
        key.trim().starts_with("klr_") && key.lines().count() == 1,
        "{key}"
    );
    assert!(advice.contains("shown only now"), "{advice}");
    let again = run(
        dir.path(),
        &["tenant", "pc-key", "add", "office", "RECEPTIE"],
    );
    assert_eq!(again.0, 1, "one live RECEPTIE: {}", again.2);
    assert_eq!(
        run(dir.path(), &["tenant", "pc-key", "add", "nobody", "X"]).0,
        1
    );
    assert_eq!(
        run(dir.path(), &["tenant", "pc-key", "add", "office", "a/b"]).0,
        2
    );

    let list = |data: &Path| {
        let (code, out, _) = run(data, &["tenant", "pc-key", "list", "office", "--json"]);
        assert_eq!(code, 0);
        serde_json::from_str::<Value>(&out).unwrap()
    };
    assert_eq!(list(dir.path())[0]["name"], "RECEPTIE");
    assert!(list(dir.path())[0]["revoked_ms"].is_null());
    assert_eq!(
        run(
            dir.path(),
            &["tenant", "pc-key", "revoke", "office", "RECEPTIE"]
        )
        .0,
        0
    );
    assert!(list(dir.path())[0]["revoked_ms"].is_i64(), "said revoked");
    assert_eq!(
        run(
            dir.path(),
            &["tenant", "pc-key", "revoke", "office", "RECEPTIE"]
        )
        .0,
        1
    );
    let listed = run(dir.path(), &["tenant", "list", "--json"]).1;
    let tenants: Value = serde_json::from_str(&listed).unwrap();
    let office = tenants
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "office")
        .unwrap();
    assert_eq!(office["live_keys"], 1, "the office's own key, not its PCs'");
}

/// A PC's sealed report is kept as bytes and read back by every PC of its office (base64, with
/// its age by the hub's clock), by no other office; the office's own key may not, and a report
/// too large or empty is refused.
#[tokio::test]
async fn a_pc_s_report_is_kept_for_its_office_only() {
    use base64::Engine as _;
    let relay = start(SqliteStore::in_memory().unwrap()).await;
    let (office, receptie, balie, elsewhere) = offices(&relay).await;
    let put = |key: &str, body: Vec<u8>| {
        let request = relay.api(Method::PUT, "/api/office/report", key).body(body);
        async move { request.send().await.unwrap().status() }
    };
    let sealed = vec![0u8, 1, 2, 255];
    assert_eq!(put(&receptie, sealed.clone()).await, StatusCode::NO_CONTENT);
    assert_eq!(
        put(&office, sealed.clone()).await,
        StatusCode::FORBIDDEN,
        "a PC's only"
    );
    assert_eq!(put(&balie, Vec::new()).await, StatusCode::PAYLOAD_TOO_LARGE);
    let too_large = vec![7u8; kluis_relay::storage::office::MAX_REPORT_BYTES + 1];
    assert_eq!(put(&balie, too_large).await, StatusCode::PAYLOAD_TOO_LARGE);
    let read = |key: String| {
        let request = relay.api(Method::GET, "/api/office/reports", &key);
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let seen = read(balie.clone()).await;
    let reports = seen["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "{seen}");
    assert_eq!(reports[0]["pc"], "RECEPTIE");
    assert_eq!(reports[0]["revoked"], false);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(reports[0]["sealed"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, sealed);
    assert!(reports[0]["age_ms"].as_i64().unwrap() >= 0);
    let apart = read(elsewhere).await;
    assert_eq!(
        apart["reports"],
        json!([]),
        "another office sees none of it"
    );
}

/// A PC of the office invites a new PC: the hub gives a one-time token; the new PC enrols
/// with it (no key yet) and gets a key of its own, which works at once; the token works once;
/// a name a live PC has, a key that is not a PC's and a malformed token are refused.
#[tokio::test]
async fn a_pc_invites_the_next_and_the_token_works_once() {
    let relay = start(SqliteStore::in_memory().unwrap()).await;
    let (office, receptie, _balie, _elsewhere) = offices(&relay).await;
    let invite = |key: String, pc: &'static str| {
        let request = relay
            .api(Method::POST, "/api/office/invites", &key)
            .json(&json!({ "pc": pc }));
        async move {
            let response = request.send().await.unwrap();
            (
                response.status(),
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let enrol = |token: Value| {
        let url = format!("{}/api/office/enrol", relay.base);
        let request = relay.client.post(url).json(&json!({ "token": token }));
        async move {
            let response = request.send().await.unwrap();
            (
                response.status(),
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let (status, invited) = invite(receptie.clone(), "LAPTOP JAN").await;
    assert_eq!(status, StatusCode::OK, "{invited}");
    assert_eq!(invited["ttl_ms"], 24 * 3_600_000);
    let token = invited["token"].clone();
    let (status, enrolled) = enrol(token.clone()).await;
    assert_eq!(
        (status, enrolled["pc"].as_str()),
        (StatusCode::OK, Some("LAPTOP JAN"))
    );
    let key = enrolled["key"].as_str().unwrap().to_string();
    let pcs: Value = relay
        .api(Method::GET, "/api/office/pcs", &key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        pcs["pcs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "LAPTOP JAN"),
        "{pcs}"
    );
    let (status, again) = enrol(token).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("no_invite"))
    );

    let (status, taken) = invite(receptie.clone(), "BALIE").await;
    assert_eq!(
        (status, taken["code"].as_str()),
        (StatusCode::CONFLICT, Some("pc_taken"))
    );
    let (status, _) = invite(office.clone(), "NIEUW").await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "the office's own key is not a PC's"
    );
    let (status, _) = invite(receptie.clone(), "../etc").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = enrol(json!("not-a-token")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
