//! A throw-away database on the test cluster that tests/postgres/run.sh starts (named in
//! `KLUIS_TEST_DATABASE_URL`): each PostgreSQL test makes its own. Shared with kluis-cli's
//! tests (its hub on PostgreSQL).

/// A new, empty database on the test cluster; its URL.
pub async fn fresh_database() -> String {
    let server = std::env::var("KLUIS_TEST_DATABASE_URL")
        .expect("KLUIS_TEST_DATABASE_URL names the test cluster (tests/postgres/run.sh)");
    let (client, connection) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
        .await
        .expect("the test cluster answers");
    tokio::spawn(connection);
    let name = format!("kluis_{}", uuid::Uuid::new_v4().simple());
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let (base, _) = server.rsplit_once('/').unwrap();
    format!("{base}/{name}")
}
