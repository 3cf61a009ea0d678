//! The simulator's own behaviour where the document is silent, over its real HTTPS.

use kluis_sim::config::{DEMO_API_KEY, DEMO_PASSWORD, RESTRICTED_API_KEY};
use kluis_sim::{Sim, SimConfig};
use reqwest::StatusCode;
use serde_json::Value;

async fn start() -> (Sim, reqwest::Client) {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(sim.ca_pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    (sim, client)
}

fn url(sim: &Sim, path: &str) -> String {
    format!("{}{path}", sim.base_url())
}

async fn authenticate(
    sim: &Sim,
    client: &reqwest::Client,
    query: &[(&str, &str)],
) -> reqwest::Response {
    client
        .get(url(sim, "/authenticate"))
        .query(query)
        .send()
        .await
        .unwrap()
}

/// organization_name must be present and empty; wrong credentials are 401.
#[tokio::test]
async fn authenticate_checks_every_field() {
    let (sim, client) = start().await;
    let key = DEMO_API_KEY.to_string();
    let ok = [
        ("api_key", key.as_str()),
        ("organization_name", ""),
        ("username", "demo"),
        ("password", DEMO_PASSWORD),
    ];
    let response = authenticate(&sim, &client, &ok).await;
    assert_eq!(response.status(), StatusCode::OK);
    let token: Value = response.json().await.unwrap();
    assert!(
        uuid::Uuid::parse_str(token["token"].as_str().unwrap()).is_ok(),
        "the token is a UUID"
    );

    let missing_org = [ok[0], ok[2], ok[3]];
    assert_eq!(
        authenticate(&sim, &client, &missing_org).await.status(),
        StatusCode::BAD_REQUEST
    );
    let filled_org = [ok[0], ("organization_name", "x"), ok[2], ok[3]];
    assert_eq!(
        authenticate(&sim, &client, &filled_org).await.status(),
        StatusCode::BAD_REQUEST
    );
    let wrong = [ok[0], ok[1], ok[2], ("password", "nope")];
    assert_eq!(
        authenticate(&sim, &client, &wrong).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let unknown_key = [
        ("api_key", "00000000-0000-4000-8000-000000000000"),
        ok[1],
        ok[2],
        ok[3],
    ];
    assert_eq!(
        authenticate(&sim, &client, &unknown_key).await.status(),
        StatusCode::UNAUTHORIZED
    );
}

/// Endpoints need a valid token; an unknown webhook id is 404.
#[tokio::test]
async fn token_and_webhook_ids_are_checked() {
    let (sim, client) = start().await;
    let no_token = client
        .get(url(&sim, "/util/environment"))
        .query(&[("username", "demo")])
        .send()
        .await
        .unwrap();
    assert_eq!(no_token.status(), StatusCode::UNAUTHORIZED);
    let key = DEMO_API_KEY.to_string();
    let token: Value = authenticate(
        &sim,
        &client,
        &[
            ("api_key", &key),
            ("organization_name", ""),
            ("username", "demo"),
            ("password", DEMO_PASSWORD),
        ],
    )
    .await
    .json()
    .await
    .unwrap();
    let token = token["token"].as_str().unwrap();
    let unknown = client
        .get(url(&sim, "/webhook"))
        .header("token", token)
        .query(&[("id", uuid::Uuid::new_v4().to_string())])
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

/// The published description lists only the endpoints the key may use.
#[tokio::test]
async fn openapi_is_filtered_by_api_key() {
    let (sim, client) = start().await;
    let doc = |key: String| {
        client
            .get(url(&sim, "/openapi.json"))
            .query(&[("api_key", key)])
            .send()
    };
    let full: Value = doc(DEMO_API_KEY.to_string())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let restricted: Value = doc(RESTRICTED_API_KEY.to_string())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(full["paths"].get("/backup/owner").is_some());
    assert!(restricted["paths"].get("/backup/owner").is_none());
    assert!(restricted["paths"].get("/util/environment").is_some());
    assert_eq!(
        doc("x".into()).await.unwrap().status(),
        StatusCode::UNAUTHORIZED
    );
    let page = client
        .get(url(&sim, "/swagger"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("openapi.json"),
        "the test page links to the description"
    );
}

/// Downloads honour Range and If-Range and refuse unsatisfiable ranges.
#[tokio::test]
async fn downloads_support_ranges() {
    let (sim, client) = start().await;
    let file = sim.file_url(1000);
    let full = client.get(file.clone()).send().await.unwrap();
    let etag = full.headers()["etag"].to_str().unwrap().to_string();
    let body = full.bytes().await.unwrap();
    assert_eq!(body.len(), 1000);
    let part = client
        .get(file.clone())
        .header("range", "bytes=900-")
        .header("if-range", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.headers()["content-range"], "bytes 900-999/1000");
    assert_eq!(part.bytes().await.unwrap(), body.slice(900..));
    let stale = client
        .get(file.clone())
        .header("range", "bytes=900-")
        .header("if-range", "\"other\"")
        .send()
        .await
        .unwrap();
    assert_eq!(
        stale.status(),
        StatusCode::OK,
        "a changed validator gets the whole file"
    );
    let beyond = client
        .get(file)
        .header("range", "bytes=1000-")
        .send()
        .await
        .unwrap();
    assert_eq!(beyond.status(), StatusCode::RANGE_NOT_SATISFIABLE);
}

/// One third party's api key serves many klanten: each signs in with its own username and
/// password under the same key, a klant's password does not open another klant's account,
/// and the token is that klant's (the environment names who is signed in).
#[tokio::test]
async fn one_api_key_serves_many_klanten() {
    let mut config = SimConfig::default();
    config.accounts.push(kluis_sim::config::Account {
        username: "bakker".into(),
        password: "bakker-pw".into(),
        ..kluis_sim::config::Account::demo()
    });
    let sim = Sim::start(config).await.unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(sim.ca_pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let key = DEMO_API_KEY.to_string();
    let sign_in = |username: &'static str, password: &'static str| {
        let (sim, client, key) = (&sim, &client, key.clone());
        async move {
            let query = [
                ("api_key", key.as_str()),
                ("organization_name", ""),
                ("username", username),
                ("password", password),
            ];
            authenticate(sim, client, &query).await
        }
    };
    assert_eq!(
        sign_in("bakker", DEMO_PASSWORD).await.status(),
        StatusCode::UNAUTHORIZED
    );
    for (username, password) in [("demo", DEMO_PASSWORD), ("bakker", "bakker-pw")] {
        let response = sign_in(username, password).await;
        assert_eq!(response.status(), StatusCode::OK, "{username}");
        let token: Value = response.json().await.unwrap();
        let environment: Value = client
            .get(url(&sim, "/util/environment"))
            .query(&[("username", username)])
            .header("token", token["token"].as_str().unwrap())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(environment["klant"]["signed_in_as"], username);
    }
}
