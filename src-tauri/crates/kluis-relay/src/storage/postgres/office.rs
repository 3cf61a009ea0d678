//! The office hub on PostgreSQL (see `storage::office`): PC keys in `tenant_keys`, turns in
//! `office_turns`. Every time a turn is measured by is the database's own clock
//! (`clock_timestamp()`), so relay instances whose clocks disagree still agree on who holds a
//! turn; a turn's row is locked while it is decided, so two PCs asking at once (at one
//! instance or two) get one answer each, never the turn both.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;

use super::{PgStore, KEYS_CHANGED};
use crate::storage::office::{
    InviteMade, KeyCheck, OfficeStore, PcSummary, StoredReport, Turn, TurnRow,
    MAX_KLANTEN_PER_OFFICE, MAX_OPEN_INVITES,
};
use crate::storage::{now_ms, StoreError};

/// The database's clock in Unix milliseconds.
const DB_NOW: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT";

/// `klant`'s turn row of `tenant`, locked for this transaction and made (empty) when there is
/// none and the office has room, with the database's time; `None` when it has none. A row
/// that is there (every turn after a klant's first) is one statement: the office's klanten are
/// counted only to make one.
async fn turn_row(
    tx: &impl GenericClient,
    tenant: &str,
    klant: &str,
) -> Result<Option<(TurnRow, i64)>, StoreError> {
    let locked = format!(
        "SELECT holder, held_until_ms, done_by, done_ms, {DB_NOW} FROM office_turns
         WHERE tenant = $1 AND klant = $2 FOR UPDATE"
    );
    let read = |r: tokio_postgres::Row| {
        let row = TurnRow {
            holder: r.get(0),
            held_until_ms: r.get(1),
            done_by: r.get(2),
            done_ms: r.get(3),
        };
        (row, r.get(4))
    };
    if let Some(row) = tx.query_opt(&locked, &[&tenant, &klant]).await? {
        return Ok(Some(read(row)));
    }
    // Made by whichever asker comes first (another's insert is waited for, then kept).
    let most = MAX_KLANTEN_PER_OFFICE as i64;
    tx.execute(
        "INSERT INTO office_turns (tenant, klant) SELECT $1, $2
         WHERE (SELECT COUNT(*) FROM office_turns WHERE tenant = $1) < $3
         ON CONFLICT DO NOTHING",
        &[&tenant, &klant, &most],
    )
    .await?;
    Ok(tx.query_opt(&locked, &[&tenant, &klant]).await?.map(read))
}

/// Adds PC `name` to the live tenant `tenant` with a key (the tenant's row locked: two PCs of
/// one name added at once are one PC); `false` when there is no such tenant or a PC of that
/// name has a working key.
async fn insert_pc(
    tx: &impl GenericClient,
    tenant: &str,
    name: &str,
    key_id: &str,
    key_hash: [u8; 32],
) -> Result<bool, StoreError> {
    let now = now_ms();
    let live_tenant = tx
        .query_opt(
            "SELECT 1 FROM tenants WHERE name = $1 AND revoked_ms IS NULL AND name != '*'
             FOR UPDATE",
            &[&tenant],
        )
        .await?
        .is_some();
    if !live_tenant || pc_taken(tx, tenant, name).await? {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO tenant_keys (id, tenant, hash, created_ms, pc) VALUES ($1, $2, $3, $4, $5)",
        &[&key_id, &tenant, &&key_hash[..], &now, &name],
    )
    .await?;
    Ok(true)
}

/// Whether PC `name` of `tenant` has a key that works now, that key's row held (`FOR SHARE`)
/// until the transaction ends: it cannot be revoked meanwhile.
async fn pc_live_held(
    tx: &impl GenericClient,
    tenant: &str,
    name: &str,
) -> Result<bool, StoreError> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM tenant_keys WHERE tenant = $1 AND pc = $2
             AND (expires_ms IS NULL OR expires_ms > $3) FOR SHARE",
            &[&tenant, &name, &now_ms()],
        )
        .await?
        .is_some())
}

/// Whether `tenant` has a PC named `name` with a key that works now (keys' times are the
/// relay's clock, as `revoke_pc` sets them).
async fn pc_taken(tx: &impl GenericClient, tenant: &str, name: &str) -> Result<bool, StoreError> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM tenant_keys WHERE tenant = $1 AND pc = $2
             AND (expires_ms IS NULL OR expires_ms > $3)",
            &[&tenant, &name, &now_ms()],
        )
        .await?
        .is_some())
}

#[async_trait]
impl OfficeStore for PgStore {
    async fn add_pc(
        &self,
        tenant: &str,
        name: &str,
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        if !insert_pc(&tx, tenant, name, key_id, key_hash).await? {
            return Ok(false);
        }
        tx.execute(KEYS_CHANGED, &[]).await?;
        tx.commit().await?;
        self.keys_changed();
        Ok(true)
    }

    async fn revoke_pc(&self, tenant: &str, name: &str) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let ended = tx
            .execute(
                "UPDATE tenant_keys SET expires_ms = $3 WHERE tenant = $1 AND pc = $2
                 AND (expires_ms IS NULL OR expires_ms > $3)",
                &[&tenant, &name, &now_ms()],
            )
            .await?;
        if ended > 0 {
            // What it said stops counting (see the SQLite store's `forget_pc`).
            tx.execute(
                "DELETE FROM office_invites WHERE tenant = $1 AND made_by = $2",
                &[&tenant, &name],
            )
            .await?;
            tx.execute(
                "UPDATE office_turns SET holder = NULL, held_until_ms = NULL
                 WHERE tenant = $1 AND holder = $2",
                &[&tenant, &name],
            )
            .await?;
            tx.execute(
                "UPDATE office_turns SET done_by = NULL, done_ms = NULL
                 WHERE tenant = $1 AND done_by = $2",
                &[&tenant, &name],
            )
            .await?;
            tx.execute(
                "DELETE FROM office_key_checkers WHERE tenant = $1 AND pc = $2",
                &[&tenant, &name],
            )
            .await?;
        }
        tx.execute(KEYS_CHANGED, &[]).await?;
        tx.commit().await?;
        self.keys_changed();
        Ok(ended > 0)
    }

    async fn pcs(&self, tenant: &str) -> Result<Vec<PcSummary>, StoreError> {
        let rows = (self.client().await?)
            .query(
                "SELECT pc, MAX(created_ms),
                    CASE WHEN bool_or(expires_ms IS NULL OR expires_ms > $2) THEN NULL
                        ELSE MAX(expires_ms) END
                 FROM tenant_keys WHERE tenant = $1 AND pc IS NOT NULL GROUP BY pc ORDER BY pc",
                &[&tenant, &now_ms()],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| PcSummary {
                name: r.get(0),
                created_ms: r.get(1),
                revoked_ms: r.get(2),
            })
            .collect())
    }

    async fn take_turn(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        hold_ms: i64,
        slot_age_ms: i64,
    ) -> Result<Turn, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let Some((row, now)) = turn_row(&tx, tenant, klant).await? else {
            return Ok(Turn::Full);
        };
        if let Some(other) = row.answer(pc, now, slot_age_ms) {
            return Ok(other);
        }
        tx.execute(
            "UPDATE office_turns SET holder = $3, held_until_ms = $4 WHERE tenant = $1 AND klant = $2",
            &[&tenant, &klant, &pc, &now.saturating_add(hold_ms)],
        )
        .await?;
        tx.commit().await?;
        Ok(Turn::Yours { hold_ms })
    }

    async fn add_invite(
        &self,
        tenant: &str,
        pc: &str,
        by: &str,
        token_hash: [u8; 32],
        ttl_ms: i64,
    ) -> Result<InviteMade, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The tenant's row lock: its invitations are counted and made one asker at a time.
        tx.query_opt(
            "SELECT 1 FROM tenants WHERE name = $1 FOR UPDATE",
            &[&tenant],
        )
        .await?;
        if pc_taken(&tx, tenant, pc).await? {
            return Ok(InviteMade::Taken);
        }
        tx.execute(
            &format!("DELETE FROM office_invites WHERE expires_ms <= {DB_NOW}"),
            &[],
        )
        .await?;
        tx.execute(
            "DELETE FROM office_invites WHERE tenant = $1 AND pc = $2",
            &[&tenant, &pc],
        )
        .await?;
        let open: i64 = tx
            .query_one(
                "SELECT COUNT(*) FROM office_invites WHERE tenant = $1",
                &[&tenant],
            )
            .await?
            .get(0);
        if open as u64 >= MAX_OPEN_INVITES {
            return Ok(InviteMade::Full);
        }
        let made = format!(
            "INSERT INTO office_invites (token_hash, tenant, pc, made_by, expires_ms)
             VALUES ($1, $2, $3, $4, {DB_NOW} + $5) RETURNING expires_ms"
        );
        let expires_ms: i64 = tx
            .query_one(&made, &[&&token_hash[..], &tenant, &pc, &by, &ttl_ms])
            .await?
            .get(0);
        tx.commit().await?;
        Ok(InviteMade::Made { expires_ms })
    }

    async fn redeem_invite(
        &self,
        token_hash: [u8; 32],
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<Option<(String, String)>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The tenant's row first, as `add_invite` and `insert_pc` take it: one order of locks.
        let tenant: Option<String> = tx
            .query_opt(
                "SELECT tenant FROM office_invites WHERE token_hash = $1",
                &[&&token_hash[..]],
            )
            .await?
            .map(|r| r.get(0));
        let Some(tenant) = tenant else {
            return Ok(None);
        };
        tx.query_opt(
            "SELECT 1 FROM tenants WHERE name = $1 FOR UPDATE",
            &[&tenant],
        )
        .await?;
        let taken = format!(
            "DELETE FROM office_invites WHERE token_hash = $1 AND expires_ms > {DB_NOW}
             RETURNING tenant, pc, made_by"
        );
        let Some(row) = tx.query_opt(&taken, &[&&token_hash[..]]).await? else {
            return Ok(None);
        };
        let (tenant, pc, by): (String, String, String) = (row.get(0), row.get(1), row.get(2));
        // Used up either way: a name taken meanwhile, or an inviting PC revoked since, asks for
        // a new invitation.
        let added = pc_taken(&tx, &tenant, &by).await?
            && insert_pc(&tx, &tenant, &pc, key_id, key_hash).await?;
        if added {
            tx.execute(KEYS_CHANGED, &[]).await?;
        }
        tx.commit().await?;
        if !added {
            return Ok(None);
        }
        self.keys_changed();
        Ok(Some((tenant, pc)))
    }

    async fn put_report(&self, tenant: &str, pc: &str, sealed: &[u8]) -> Result<(), StoreError> {
        let put = format!(
            "INSERT INTO office_reports (tenant, pc, at_ms, sealed) VALUES ($1, $2, {DB_NOW}, $3)
             ON CONFLICT (tenant, pc) DO UPDATE SET at_ms = excluded.at_ms, sealed = excluded.sealed"
        );
        let client = self.client().await?;
        client.execute(&put, &[&tenant, &pc, &sealed]).await?;
        Ok(())
    }

    async fn record_done(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        ago_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // Its key was checked before this transaction: a revocation since is honoured. The
        // key's row is held (shared) first, in the order revoking takes (its keys, then the
        // turns): a revocation under way is waited for and seen, one after waits for this.
        if !pc_live_held(&tx, tenant, pc).await? {
            return Ok(false);
        }
        let Some((_, now)) = turn_row(&tx, tenant, klant).await? else {
            return Ok(false);
        };
        let at = now - ago_ms;
        let recorded = tx
            .execute(
                "UPDATE office_turns SET done_by = $3, done_ms = $4
                 WHERE tenant = $1 AND klant = $2 AND (done_ms IS NULL OR done_ms < $4)",
                &[&tenant, &klant, &pc, &at],
            )
            .await?
            > 0;
        tx.commit().await?;
        Ok(recorded)
    }

    async fn check_office_key(
        &self,
        tenant: &str,
        pc: &str,
        check: [u8; 32],
    ) -> Result<KeyCheck, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The tenant's row locked first (as adding a PC and redeeming an invitation do): two
        // first PCs at once are one after the other.
        tx.execute(
            "SELECT 1 FROM tenants WHERE name = $1 FOR UPDATE",
            &[&tenant],
        )
        .await?;
        let kept: Option<Vec<u8>> = tx
            .query_opt(
                "SELECT check_value FROM office_key_checks WHERE tenant = $1",
                &[&tenant],
            )
            .await?
            .map(|r| r.get(0));
        let others: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM office_key_checkers WHERE tenant = $1 AND pc != $2)",
                &[&tenant, &pc],
            )
            .await?
            .get(0);
        let answer = match kept {
            Some(value) if value == check => KeyCheck::Same,
            Some(_) if others => KeyCheck::Other,
            _ => {
                tx.execute(
                    "INSERT INTO office_key_checks (tenant, check_value, set_ms) VALUES ($1, $2, $3)
                     ON CONFLICT (tenant) DO UPDATE SET
                     check_value = excluded.check_value, set_ms = excluded.set_ms",
                    &[&tenant, &&check[..], &now_ms()],
                )
                .await?;
                tx.execute(
                    "DELETE FROM office_key_checkers WHERE tenant = $1",
                    &[&tenant],
                )
                .await?;
                KeyCheck::Set
            }
        };
        if answer != KeyCheck::Other {
            tx.execute(
                "INSERT INTO office_key_checkers (tenant, pc) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&tenant, &pc],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(answer)
    }

    async fn reports(&self, tenant: &str) -> Result<Vec<StoredReport>, StoreError> {
        let read = format!(
            "SELECT r.pc, {DB_NOW} - r.at_ms, r.sealed, NOT EXISTS (SELECT 1 FROM tenant_keys k
                WHERE k.tenant = r.tenant AND k.pc = r.pc
                AND (k.expires_ms IS NULL OR k.expires_ms > $2))
             FROM office_reports r WHERE r.tenant = $1 ORDER BY r.pc"
        );
        let client = self.client().await?;
        let rows = client.query(&read, &[&tenant, &now_ms()]).await?;
        Ok(rows
            .into_iter()
            .map(|r| StoredReport {
                pc: r.get(0),
                age_ms: r.get::<_, i64>(1).max(0),
                sealed: r.get(2),
                revoked: r.get(3),
            })
            .collect())
    }

    async fn end_turn(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        backed_up: bool,
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // A backup said by a PC revoked since its key was checked counts no more (its key's
        // row held first, as in `record_done`).
        let row = match backed_up && pc_live_held(&tx, tenant, pc).await? {
            true => turn_row(&tx, tenant, klant).await?,
            false => None,
        };
        let had = tx
            .execute(
                "UPDATE office_turns SET holder = NULL, held_until_ms = NULL
                 WHERE tenant = $1 AND klant = $2 AND holder = $3",
                &[&tenant, &klant, &pc],
            )
            .await?
            > 0;
        if let Some((_, now)) = row {
            tx.execute(
                "UPDATE office_turns SET done_by = $3, done_ms = $4 WHERE tenant = $1 AND klant = $2",
                &[&tenant, &klant, &pc, &now],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(had)
    }
}
