//! The office hub's part of the store: the PCs of an office (a tenant) and each klant's
//! office-wide turn, so that two PCs of one office never back the same klant up at once, nor
//! twice in one slot.
//!
//! - A PC is a tenant key with a PC's name ([`StoredKey::pc`](super::StoredKey)): it is looked
//!   up, cached and refused exactly as a tenant key is (the key directory's budget holds for
//!   PC keys too). Revoking a PC ends its keys at once; the tenant's own keys are not PC keys,
//!   and rotating them leaves the PCs' keys alone.
//! - A klant is known to the hub only by the id the PCs make of its service host and username
//!   with the office key, which the hub never holds ([`check_klant`]: 64 hex digits): the hub
//!   learns no name, host or username.
//! - Each PC's last report ([`StoredReport`]: its klanten, plans and last backups) is sealed
//!   with the office key on the PC: the hub keeps bytes it cannot read, one per PC, and says
//!   how long ago (by its clock) each came.
//! - A turn ([`Turn`]) is a lease whose end is set by the hub's clock — PostgreSQL's
//!   `clock_timestamp()`, or the one SQLite relay's own — never by a PC's: a PC says how long
//!   it wants it and how long ago its own slot began, as durations, so PCs whose clocks
//!   disagree still agree on the order of things.

use async_trait::async_trait;
use serde::Serialize;

use super::StoreError;

/// Klanten one office may have turns for: a PC with a working key cannot fill the database.
pub const MAX_KLANTEN_PER_OFFICE: u64 = 20_000;

/// What the hub answers a PC asking for a klant's turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "turn", rename_all = "snake_case")]
pub enum Turn {
    /// This PC has it, for `hold_ms` from now (asking again while holding it renews it).
    Yours { hold_ms: i64 },
    /// PC `by` has it (a backup under way there), for `left_ms` more unless renewed.
    Held { by: String, left_ms: i64 },
    /// PC `by` backed the klant up `ago_ms` ago: since this PC's slot began.
    Done { by: String, ago_ms: i64 },
    /// The office has turns for as many klanten as it may ([`MAX_KLANTEN_PER_OFFICE`]).
    Full,
}

/// What the hub says of an office key's check value ([`OfficeStore::check_office_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCheck {
    /// The office had none (or one no other live PC stands behind): this is its office key
    /// from now on.
    Set,
    /// The office's office key.
    Same,
    /// Another office key than the office's.
    Other,
}

/// The longest sealed report a PC may keep at the hub: 200 klanten take some 100 KiB, 10,000
/// some 4 MiB.
pub const MAX_REPORT_BYTES: usize = 4 * 1024 * 1024;

/// A PC's last report as the hub keeps it: sealed with the office key, which the hub never
/// holds — to the hub it is bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReport {
    pub pc: String,
    /// How long ago the hub received it, by the hub's clock.
    pub age_ms: i64,
    pub sealed: Vec<u8>,
    /// The PC's key was revoked since (its report is kept: its klanten's last state).
    pub revoked: bool,
}

/// Invitations an office may have open at once: a PC with a working key cannot fill the
/// database with them.
pub const MAX_OPEN_INVITES: u64 = 100;

/// What asking for an invitation came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InviteMade {
    /// Made; it works once, until the hub's clock passes `expires_ms`.
    Made { expires_ms: i64 },
    /// The office has a PC of that name with a working key.
    Taken,
    /// The office has [`MAX_OPEN_INVITES`] open.
    Full,
}

/// A PC of an office, as the office's PCs and the operator list them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PcSummary {
    pub name: String,
    pub created_ms: i64,
    /// When its key was revoked (it works no more).
    pub revoked_ms: Option<i64>,
}

/// The office hub's storage, beside the inboxes' ([`super::Storage`]).
#[async_trait]
pub trait OfficeStore: Send + Sync {
    /// Adds PC `name` to the live tenant `tenant` with a key; `false` when there is no such
    /// tenant or a PC of that name has a working key.
    async fn add_pc(
        &self,
        tenant: &str,
        name: &str,
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError>;
    /// Ends PC `name`'s keys now, and what it said stops counting: its turns are free, the
    /// backups it said it made skip no other PC and its invitations work no more; `false` when
    /// it had no key that worked.
    async fn revoke_pc(&self, tenant: &str, name: &str) -> Result<bool, StoreError>;
    /// The tenant's PCs, by name (a revoked one until its name is used again).
    async fn pcs(&self, tenant: &str) -> Result<Vec<PcSummary>, StoreError>;
    /// PC `pc` of `tenant` asks for `klant`'s turn for `hold_ms`; its slot began `slot_age_ms`
    /// ago. Another PC's backup finished within the slot answers [`Turn::Done`]; another PC's
    /// live turn [`Turn::Held`]; otherwise the turn is this PC's (renewed when it had it).
    async fn take_turn(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        hold_ms: i64,
        slot_age_ms: i64,
    ) -> Result<Turn, StoreError>;
    /// PC `by` of `tenant` invites a new PC named `pc`: an enrolment token (kept as its
    /// SHA-256, `token_hash`) that works once within `ttl_ms`, replacing an earlier invitation
    /// of that name. Expired invitations are forgotten on the way.
    async fn add_invite(
        &self,
        tenant: &str,
        pc: &str,
        by: &str,
        token_hash: [u8; 32],
        ttl_ms: i64,
    ) -> Result<InviteMade, StoreError>;
    /// The invitation of `token_hash`, if it is open, its tenant live, the PC that made it not
    /// revoked since and no live PC took its name meanwhile, redeemed: a key for its PC (`key_id`, `key_hash`) added, and the
    /// invitation gone (it works once). Its tenant and PC name.
    async fn redeem_invite(
        &self,
        token_hash: [u8; 32],
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<Option<(String, String)>, StoreError>;
    /// PC `pc`'s report (sealed) replaces its last, received now.
    async fn put_report(&self, tenant: &str, pc: &str, sealed: &[u8]) -> Result<(), StoreError>;
    /// The office's PCs' last reports, by PC name.
    async fn reports(&self, tenant: &str) -> Result<Vec<StoredReport>, StoreError>;
    /// PC `pc` backed `klant` up `ago_ms` ago and could not say so then (the hub was away):
    /// recorded as the klant's last backup unless a later one is known; a turn held now is
    /// left alone. Whether it was recorded (`false` too when the office has turns for as many
    /// klanten as it may, or `pc`'s key was revoked meanwhile: what it says counts no more).
    async fn record_done(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        ago_ms: i64,
    ) -> Result<bool, StoreError>;
    /// The office key's check value (a keyed hash of it the PCs make; the key itself the hub
    /// never holds), as PC `pc` joining with that key asks: set when the office has none,
    /// else compared — so that a second PC that also thinks itself the office's first (joining
    /// at the same moment, before either reported) or joins with another office key is
    /// refused. The PCs told "set" or "same" stand behind the check (a revoked one no more):
    /// it is replaced (set anew) when no other PC stands behind it — the PC that set it tries
    /// again with a new key after its join failed, or it died before it reported and was
    /// revoked, or a leaked key set a wrong one and was revoked: an office is never locked out
    /// by a check no live PC of it stands behind.
    async fn check_office_key(
        &self,
        tenant: &str,
        pc: &str,
        check: [u8; 32],
    ) -> Result<KeyCheck, StoreError>;
    /// PC `pc` is done with `klant`: with `backed_up`, the klant's backup is recorded as made
    /// by it now (even when its turn ran out and another took it: the backup was made); its
    /// turn, when it still has it, is given up. Whether it had the turn.
    async fn end_turn(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        backed_up: bool,
    ) -> Result<bool, StoreError>;
}

/// A klant's turn as stored: who holds it until when, and who last backed the klant up when.
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnRow {
    pub holder: Option<String>,
    pub held_until_ms: Option<i64>,
    pub done_by: Option<String>,
    pub done_ms: Option<i64>,
}

impl TurnRow {
    /// What PC `pc` is answered at `now` (the store's clock) for a slot begun `slot_age_ms`
    /// ago: another PC's answer, or `None` when the turn is `pc`'s to take. Written once for
    /// every engine. A backup another PC finished counts before a turn another holds (it was
    /// made; the other may be backing it up again by hand).
    pub fn answer(&self, pc: &str, now: i64, slot_age_ms: i64) -> Option<Turn> {
        if let (Some(by), Some(done)) = (&self.done_by, self.done_ms) {
            if by != pc && done > now.saturating_sub(slot_age_ms) {
                return Some(Turn::Done {
                    by: by.clone(),
                    ago_ms: (now - done).max(0),
                });
            }
        }
        match (&self.holder, self.held_until_ms) {
            (Some(by), Some(until)) if by != pc && until > now => Some(Turn::Held {
                by: by.clone(),
                left_ms: until - now,
            }),
            _ => None,
        }
    }
}

/// Why a PC's name is refused: names show on every PC of the office and in the operator's
/// lists. Letters (any case), digits, spaces, `.`, `_` and `-`, 1 to 63 of them, starting with
/// a letter or digit — what office PCs are called (`RECEPTIE`, `desk-2`, `Laptop Jan`).
pub fn check_pc_name(name: &str) -> Result<(), String> {
    let ok = (1..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" ._-".contains(&b))
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && !name.ends_with(' ');
    match ok {
        true => Ok(()),
        false => Err(format!(
            "'{}' is not a PC name: use 1 to 63 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit",
            name.chars().take(80).collect::<String>()
        )),
    }
}

/// Whether `klant` is a klant's id as the PCs make it (64 lowercase hex digits).
pub fn check_klant(klant: &str) -> bool {
    klant.len() == 64
        && klant
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hub's one rule, on every engine: a backup another PC made in this slot is said; a
    /// live turn of another PC is said; a turn that ran out, this PC's own, or a backup before
    /// the slot began leaves the turn to this PC.
    #[test]
    fn who_has_the_turn() {
        let row = |holder: Option<(&str, i64)>, done: Option<(&str, i64)>| TurnRow {
            holder: holder.map(|(by, _)| by.to_string()),
            held_until_ms: holder.map(|(_, until)| until),
            done_by: done.map(|(by, _)| by.to_string()),
            done_ms: done.map(|(_, at)| at),
        };
        let now = 1_000_000;
        assert_eq!(row(None, None).answer("A", now, 0), None);
        assert_eq!(
            row(Some(("B", now + 500)), None).answer("A", now, 0),
            Some(Turn::Held {
                by: "B".into(),
                left_ms: 500
            })
        );
        assert_eq!(
            row(Some(("B", now)), None).answer("A", now, 0),
            None,
            "ran out"
        );
        assert_eq!(
            row(Some(("A", now + 500)), None).answer("A", now, 0),
            None,
            "renewed"
        );
        let done = row(None, Some(("B", now - 3_000)));
        assert_eq!(
            done.answer("A", now, 5_000),
            Some(Turn::Done {
                by: "B".into(),
                ago_ms: 3_000
            }),
            "within A's slot"
        );
        assert_eq!(done.answer("A", now, 2_000), None, "before A's slot began");
        assert_eq!(
            row(None, Some(("A", now - 3_000))).answer("A", now, 5_000),
            None,
            "A's own backup does not skip A (its plan decides)"
        );
    }

    /// PC names as offices write them pass; what would confuse a list or a log does not.
    #[test]
    fn pc_names_are_checked() {
        for good in ["RECEPTIE", "desk-2", "Laptop Jan", "pc.3_b"] {
            assert_eq!(check_pc_name(good), Ok(()), "{good}");
        }
        for bad in ["", " lead", "trail ", "a\nb", "a/b", "é", &"x".repeat(64)] {
            assert!(check_pc_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_klant(&"ab".repeat(32)));
        for bad in [
            "",
            "AB".repeat(32).as_str(),
            &"a".repeat(63),
            &"g".repeat(64),
        ] {
            assert!(!check_klant(bad), "{bad:?}");
        }
    }
}
