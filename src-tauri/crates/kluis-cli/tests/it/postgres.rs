//! The office of two PCs (see `office`) around a hub on a real PostgreSQL, whose clock sets
//! the turns: run by `tests/postgres/run.sh`, which starts a throw-away cluster and names it in
//! `KLUIS_TEST_DATABASE_URL`.

use crate::fresh_database::fresh_database;
use crate::office::{hub_on, one_backup_per_slot};
use crate::profiles::office;

/// Two `kluis` PCs with the same klant planned run `run-due` at once against a hub on
/// PostgreSQL: one backup between them, the other skipping it and saying by whom.
#[tokio::test]
#[ignore = "needs PostgreSQL: tests/postgres/run.sh"]
async fn two_pcs_back_a_klant_up_once_through_a_hub_on_postgresql() {
    let env = office().await;
    let url = fresh_database().await;
    let store = kluis_relay::PgStore::connect(&url, 4).await.unwrap();
    one_backup_per_slot(&env, &hub_on(&env, store).await).await;
}
