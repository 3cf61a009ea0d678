//! One backup of a klant at a time, across every Kluis process that shares the history: the
//! app's plans, its Backup all, `kluis run-due` from a timer and `kluis backup --all`. Whoever
//! starts a klant's unattended backup first holds its turn (a claim — a file lock beside the
//! history, released by the OS however the process ends) until that backup has ended; the
//! others skip the klant. A plan is then looked at again under the turn, so a backup that
//! another process just finished is not run a second time.

use kluis_core::claims::Claim;
use kluis_core::{History, KlantKey};
use uuid::Uuid;

/// Namespace of the claims' ids: one per klant, the same in every process.
const TURN_NAMESPACE: Uuid = Uuid::from_u128(0x6b6c_7569_735f_7475_726e_0000_0000_0001);

/// `klant`'s turn, or `None` while another process (or task) holds it.
pub fn take_turn(history: &History, klant: &KlantKey) -> kluis_core::Result<Option<Claim>> {
    history.claim(Uuid::new_v5(&TURN_NAMESPACE, klant.as_str().as_bytes()))
}

/// The daily report's turn (one process sends it): an id outside every klant's, whatever its
/// key (a label an older Kluis recorded may be any text).
const REPORT_TURN: Uuid = Uuid::from_u128(0x6b6c_7569_735f_7475_726e_0000_0000_0002);

/// The daily report's turn, or `None` while another process holds it.
pub fn take_report_turn(history: &History) -> kluis_core::Result<Option<Claim>> {
    history.claim(REPORT_TURN)
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
        let (a, b) = (KlantKey::profile("klant-a"), KlantKey::profile("klant-b"));
        let held = take_turn(&app, &a).unwrap().expect("free at first");
        assert!(take_turn(&timer, &a).unwrap().is_none(), "held by the app");
        assert!(take_turn(&timer, &b).unwrap().is_some(), "another klant");
        drop(held);
        assert!(take_turn(&timer, &a).unwrap().is_some(), "free once let go");
    }

    /// The daily report's turn is not any klant's, not even one an older Kluis labelled
    /// "daily-report" (what the report's turn was once named).
    #[test]
    fn the_reports_turn_is_no_klants() {
        let history = History::in_memory().unwrap();
        let _report = take_report_turn(&history).unwrap().expect("free at first");
        let label = KlantKey::older_label("daily-report");
        assert!(
            take_turn(&history, &label).unwrap().is_some(),
            "its own turn"
        );
        assert!(take_report_turn(&history).unwrap().is_none(), "held once");
    }
}
