//! One backup of a klant at a time, across every Kluis process that shares the history: the
//! app's plans, its Backup all, `kluis run-due` from a timer and `kluis backup --all`. Whoever
//! starts a klant's unattended backup first holds its turn (a claim — a file lock beside the
//! history, released by the OS however the process ends) until that backup has ended; the
//! others skip the klant. A plan is then looked at again under the turn, so a backup that
//! another process just finished is not run a second time.

use kluis_core::claims::Claim;
use kluis_core::History;
use uuid::Uuid;

/// Namespace of the claims' ids: one per klant, the same in every process.
const TURN_NAMESPACE: Uuid = Uuid::from_u128(0x6b6c_7569_735f_7475_726e_0000_0000_0001);

/// Klant `profile_id`'s turn, or `None` while another process (or task) holds it.
pub fn take_turn(history: &History, profile_id: &str) -> kluis_core::Result<Option<Claim>> {
    history.claim(Uuid::new_v5(&TURN_NAMESPACE, profile_id.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A klant's turn is held once at a time across two histories on one file (two
    /// processes), and free again once let go; another klant's turn is its own.
    #[test]
    fn one_turn_per_klant_across_processes() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.sqlite3");
        let (app, timer) = (History::open(&db).unwrap(), History::open(&db).unwrap());
        let held = take_turn(&app, "klant-a").unwrap().expect("free at first");
        assert!(
            take_turn(&timer, "klant-a").unwrap().is_none(),
            "held by the app"
        );
        assert!(
            take_turn(&timer, "klant-b").unwrap().is_some(),
            "another klant"
        );
        drop(held);
        assert!(
            take_turn(&timer, "klant-a").unwrap().is_some(),
            "free once let go"
        );
    }
}
