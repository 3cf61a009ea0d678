//! The office hub on SQLite (see `storage::office`): PC keys in `tenant_keys`, turns in
//! `office_turns`. The clock is this relay's own: one relay process owns the file.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};

use super::SqliteStore;
use crate::storage::office::{
    InviteMade, KeyCheck, OfficeStore, PcSummary, StoredReport, Turn, TurnRow,
    MAX_KLANTEN_PER_OFFICE, MAX_OPEN_INVITES,
};
use crate::storage::{now_ms, StoreError};

/// `klant`'s turn row of `tenant`, made (empty) when there is none and the office has room;
/// `None` when it has none.
fn turn_row(tx: &Transaction, tenant: &str, klant: &str) -> rusqlite::Result<Option<TurnRow>> {
    let read = |tx: &Transaction| {
        tx.query_row(
            "SELECT holder, held_until_ms, done_by, done_ms FROM office_turns
             WHERE tenant = ?1 AND klant = ?2",
            params![tenant, klant],
            |r| {
                Ok(TurnRow {
                    holder: r.get(0)?,
                    held_until_ms: r.get(1)?,
                    done_by: r.get(2)?,
                    done_ms: r.get(3)?,
                })
            },
        )
        .optional()
    };
    if let Some(row) = read(tx)? {
        return Ok(Some(row));
    }
    let count: i64 = tx.query_row(
        "SELECT COUNT(*) FROM office_turns WHERE tenant = ?1",
        params![tenant],
        |r| r.get(0),
    )?;
    if count as u64 >= MAX_KLANTEN_PER_OFFICE {
        return Ok(None);
    }
    tx.execute(
        "INSERT INTO office_turns (tenant, klant) VALUES (?1, ?2)",
        params![tenant, klant],
    )?;
    Ok(Some(TurnRow::default()))
}

/// What a revoked PC said stops counting: its turns are free, the backups it said it made
/// skip no other PC (a stolen laptop cannot keep the office's klanten from being backed up),
/// the invitations it made work no more (a thief cannot come back through them), and it no
/// longer stands behind the office key's check.
fn forget_pc(tx: &Transaction, tenant: &str, name: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM office_invites WHERE tenant = ?1 AND made_by = ?2",
        params![tenant, name],
    )?;
    tx.execute(
        "UPDATE office_turns SET holder = NULL, held_until_ms = NULL WHERE tenant = ?1 AND holder = ?2",
        params![tenant, name],
    )?;
    tx.execute(
        "UPDATE office_turns SET done_by = NULL, done_ms = NULL WHERE tenant = ?1 AND done_by = ?2",
        params![tenant, name],
    )?;
    tx.execute(
        "DELETE FROM office_key_checkers WHERE tenant = ?1 AND pc = ?2",
        params![tenant, name],
    )?;
    Ok(())
}

/// Adds PC `name` to the live tenant `tenant` with a key; `false` when there is no such tenant
/// or a PC of that name has a working key.
fn insert_pc(
    tx: &Transaction,
    tenant: &str,
    name: &str,
    key_id: &str,
    key_hash: [u8; 32],
) -> rusqlite::Result<bool> {
    let now = now_ms();
    let live_tenant = (tx.query_row(
        "SELECT 1 FROM tenants WHERE name = ?1 AND revoked_ms IS NULL AND name != '*'",
        params![tenant],
        |_| Ok(()),
    ))
    .optional()?
    .is_some();
    if !live_tenant || pc_taken(tx, tenant, name, now)? {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO tenant_keys (id, tenant, hash, created_ms, pc) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![key_id, tenant, &key_hash[..], now, name],
    )?;
    Ok(true)
}

/// Whether `tenant` has a PC named `name` with a key that works at `now`.
fn pc_taken(tx: &Transaction, tenant: &str, name: &str, now: i64) -> rusqlite::Result<bool> {
    Ok((tx.query_row(
        "SELECT 1 FROM tenant_keys WHERE tenant = ?1 AND pc = ?2
         AND (expires_ms IS NULL OR expires_ms > ?3)",
        params![tenant, name, now],
        |_| Ok(()),
    ))
    .optional()?
    .is_some())
}

#[async_trait]
impl OfficeStore for SqliteStore {
    async fn add_pc(
        &self,
        tenant: &str,
        name: &str,
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if !insert_pc(&tx, tenant, name, key_id, key_hash)? {
            return Ok(false);
        }
        tx.commit()?;
        self.keys_changed();
        Ok(true)
    }

    async fn revoke_pc(&self, tenant: &str, name: &str) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let ended = tx.execute(
            "UPDATE tenant_keys SET expires_ms = ?3 WHERE tenant = ?1 AND pc = ?2
             AND (expires_ms IS NULL OR expires_ms > ?3)",
            params![tenant, name, now],
        )?;
        if ended > 0 {
            forget_pc(&tx, tenant, name)?;
        }
        tx.commit()?;
        self.keys_changed();
        Ok(ended > 0)
    }

    async fn pcs(&self, tenant: &str) -> Result<Vec<PcSummary>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare(
            "SELECT pc, MAX(created_ms),
                CASE WHEN SUM(expires_ms IS NULL OR expires_ms > ?2) > 0 THEN NULL
                    ELSE MAX(expires_ms) END
             FROM tenant_keys WHERE tenant = ?1 AND pc IS NOT NULL GROUP BY pc ORDER BY pc",
        )?;
        let rows = statement.query_map(params![tenant, now_ms()], |r| {
            Ok(PcSummary {
                name: r.get(0)?,
                created_ms: r.get(1)?,
                revoked_ms: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    async fn take_turn(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        hold_ms: i64,
        slot_age_ms: i64,
    ) -> Result<Turn, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = now_ms();
        let Some(row) = turn_row(&tx, tenant, klant)? else {
            return Ok(Turn::Full);
        };
        if let Some(other) = row.answer(pc, now, slot_age_ms) {
            return Ok(other);
        }
        tx.execute(
            "UPDATE office_turns SET holder = ?3, held_until_ms = ?4 WHERE tenant = ?1 AND klant = ?2",
            params![tenant, klant, pc, now.saturating_add(hold_ms)],
        )?;
        tx.commit()?;
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
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = now_ms();
        if pc_taken(&tx, tenant, pc, now)? {
            return Ok(InviteMade::Taken);
        }
        tx.execute(
            "DELETE FROM office_invites WHERE expires_ms <= ?1",
            params![now],
        )?;
        tx.execute(
            "DELETE FROM office_invites WHERE tenant = ?1 AND pc = ?2",
            params![tenant, pc],
        )?;
        let open: i64 = tx.query_row(
            "SELECT COUNT(*) FROM office_invites WHERE tenant = ?1",
            params![tenant],
            |r| r.get(0),
        )?;
        if open as u64 >= MAX_OPEN_INVITES {
            return Ok(InviteMade::Full);
        }
        let expires_ms = now.saturating_add(ttl_ms);
        tx.execute(
            "INSERT INTO office_invites (token_hash, tenant, pc, made_by, expires_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![&token_hash[..], tenant, pc, by, expires_ms],
        )?;
        tx.commit()?;
        Ok(InviteMade::Made { expires_ms })
    }

    async fn redeem_invite(
        &self,
        token_hash: [u8; 32],
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<Option<(String, String)>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = now_ms();
        let invite: Option<(String, String, String)> = tx
            .query_row(
                "DELETE FROM office_invites WHERE token_hash = ?1 AND expires_ms > ?2
                 RETURNING tenant, pc, made_by",
                params![&token_hash[..], now],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((tenant, pc, by)) = invite else {
            return Ok(None);
        };
        // Used up either way: a name taken meanwhile, or an inviting PC revoked since, asks for
        // a new invitation.
        let added =
            pc_taken(&tx, &tenant, &by, now)? && insert_pc(&tx, &tenant, &pc, key_id, key_hash)?;
        tx.commit()?;
        if !added {
            return Ok(None);
        }
        self.keys_changed();
        Ok(Some((tenant, pc)))
    }

    async fn put_report(&self, tenant: &str, pc: &str, sealed: &[u8]) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO office_reports (tenant, pc, at_ms, sealed) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (tenant, pc) DO UPDATE SET at_ms = excluded.at_ms, sealed = excluded.sealed",
            params![tenant, pc, now_ms(), sealed],
        )?;
        Ok(())
    }

    async fn record_done(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        ago_ms: i64,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // (Its key was checked before this transaction: a revocation since is honoured.)
        if !pc_taken(&tx, tenant, pc, now)? || turn_row(&tx, tenant, klant)?.is_none() {
            return Ok(false);
        }
        let at = now - ago_ms;
        let recorded = tx.execute(
            "UPDATE office_turns SET done_by = ?3, done_ms = ?4
             WHERE tenant = ?1 AND klant = ?2 AND (done_ms IS NULL OR done_ms < ?4)",
            params![tenant, klant, pc, at],
        )? > 0;
        tx.commit()?;
        Ok(recorded)
    }

    async fn check_office_key(
        &self,
        tenant: &str,
        pc: &str,
        check: [u8; 32],
    ) -> Result<KeyCheck, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let kept: Option<Vec<u8>> = tx
            .query_row(
                "SELECT check_value FROM office_key_checks WHERE tenant = ?1",
                params![tenant],
                |r| r.get(0),
            )
            .optional()?;
        let others: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM office_key_checkers WHERE tenant = ?1 AND pc != ?2)",
            params![tenant, pc],
            |r| r.get(0),
        )?;
        let answer = match kept {
            Some(value) if value == check => KeyCheck::Same,
            Some(_) if others => KeyCheck::Other,
            _ => {
                tx.execute(
                    "INSERT INTO office_key_checks (tenant, check_value, set_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (tenant) DO UPDATE SET
                     check_value = excluded.check_value, set_ms = excluded.set_ms",
                    params![tenant, &check[..], now_ms()],
                )?;
                tx.execute(
                    "DELETE FROM office_key_checkers WHERE tenant = ?1",
                    params![tenant],
                )?;
                KeyCheck::Set
            }
        };
        if answer != KeyCheck::Other {
            tx.execute(
                "INSERT INTO office_key_checkers (tenant, pc) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                params![tenant, pc],
            )?;
        }
        tx.commit()?;
        Ok(answer)
    }

    async fn reports(&self, tenant: &str) -> Result<Vec<StoredReport>, StoreError> {
        let conn = self.conn();
        let mut statement = conn.prepare(
            "SELECT r.pc, ?2 - r.at_ms, r.sealed, NOT EXISTS (SELECT 1 FROM tenant_keys k
                WHERE k.tenant = r.tenant AND k.pc = r.pc
                AND (k.expires_ms IS NULL OR k.expires_ms > ?2))
             FROM office_reports r WHERE r.tenant = ?1 ORDER BY r.pc",
        )?;
        let rows = statement.query_map(params![tenant, now_ms()], |r| {
            Ok(StoredReport {
                pc: r.get(0)?,
                age_ms: r.get::<_, i64>(1)?.max(0),
                sealed: r.get(2)?,
                revoked: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    async fn end_turn(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        backed_up: bool,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // A backup said by a PC revoked since its key was checked counts no more.
        let row = match backed_up && pc_taken(&tx, tenant, pc, now_ms())? {
            true => turn_row(&tx, tenant, klant)?,
            false => None,
        };
        let had = tx.execute(
            "UPDATE office_turns SET holder = NULL, held_until_ms = NULL
             WHERE tenant = ?1 AND klant = ?2 AND holder = ?3",
            params![tenant, klant, pc],
        )? > 0;
        if row.is_some() {
            tx.execute(
                "UPDATE office_turns SET done_by = ?3, done_ms = ?4 WHERE tenant = ?1 AND klant = ?2",
                params![tenant, klant, pc, now_ms()],
            )?;
        }
        tx.commit()?;
        Ok(had)
    }
}
