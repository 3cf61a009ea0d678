//! What every target's code says of a copy it looked at — a check made now ([`found`]) and
//! where the history says a copy is ([`recorded`]) — shared by `check`, `opened`, `holder` and
//! each target's own code (`folder`, `s3`, `sftp`). A leaf: it imports nothing of this crate,
//! so none of them imports another for it.

use kluis_core::copies::CopyRecord;
use kluis_core::history::Check;
use kluis_core::verify::Finding;

/// Where a copy is and its recorded length and SHA-256 — or, when the history lacks any of
/// them, the check that says so.
pub(crate) fn recorded(record: &CopyRecord) -> std::result::Result<(&str, u64, &str), Check> {
    match (&record.location, record.bytes, &record.sha256) {
        (Some(location), Some(bytes), Some(sha256)) => Ok((location, bytes, sha256)),
        _ => Err(found(
            Finding::Unreadable,
            Some("The history does not say where the copy is.".into()),
        )),
    }
}

/// What `finding` a check made now says, with `detail`.
pub(crate) fn found(finding: Finding, detail: Option<String>) -> Check {
    Check {
        at_ms: kluis_core::clock::now_ms(),
        finding,
        detail,
    }
}
