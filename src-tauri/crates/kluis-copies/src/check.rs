//! Verifying the copies: each made copy of a kept backup looked at on its target — cheaply
//! (there, and of its length) or, with `read_back`, read in full and its SHA-256 compared —
//! and what was found recorded in the history, so that a copy found missing or changed is
//! pending again (the klant's next backup copies the backup anew) and the klant's standing
//! no longer counts it.

use std::collections::HashMap;

use kluis_core::copies::CopyRecord;
use kluis_core::history::Check;
use kluis_core::verify::Finding;
use kluis_core::{History, HistoryEntry, KlantKey, Result};

use crate::checked::found;
use crate::opened::Opened;
use crate::CopyTarget;

/// One copy looked at: of which backup, on which target, and what was found.
#[derive(Debug, Clone)]
pub struct CopyChecked {
    pub entry: HistoryEntry,
    pub target: CopyTarget,
    pub record: CopyRecord,
    pub check: Check,
}

/// Looks at every made copy of the kept backups (only `klant`'s when given) on `targets`
/// (copies on a target no longer set are left alone), oldest backup first, and records each
/// finding. Blocking.
pub fn check_copies(
    history: &History,
    targets: &[CopyTarget],
    klant: Option<&KlantKey>,
    read_back: bool,
) -> Result<Vec<CopyChecked>> {
    let mut checked = Vec::new();
    // Each target opened once, when it holds a copy to look at.
    let mut opened: HashMap<String, Result<Opened>> = HashMap::new();
    for (entry, record) in history.made_copies(klant)? {
        let Some(target) = targets.iter().find(|t| t.id == record.target) else {
            continue;
        };
        let check =
            match (opened.entry(target.id.clone())).or_insert_with(|| Opened::open(target, None)) {
                Ok(opened) => opened.check(&record, read_back),
                Err(e) => found(Finding::Unreadable, Some(e.to_string())),
            };
        history.copy_checked(&entry.id, &target.id, &check)?;
        checked.push(CopyChecked {
            entry,
            target: target.clone(),
            record,
            check,
        });
    }
    Ok(checked)
}
