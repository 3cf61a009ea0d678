//! The hidden part file an earlier run left: continued when the journal names one of ours
//! beside the destination, removed when it cannot be, refused when it was being encrypted and
//! this run would finish it in plain.

use super::{PartialDownload, Transfer, Writer};

/// Whether `part` names one of our hidden part files in `folder` (a journal cannot point the
/// writer, or a removal, at any other file).
pub(super) fn is_our_part(part: &std::path::Path, folder: &std::path::Path) -> bool {
    let Some(name) = part.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name.starts_with(".kluis-") && name.ends_with(".part") && part.parent() == Some(folder)
}

/// Why a job whose part file is encrypted is not continued without encryption.
pub(crate) const ENCRYPTED_PART: &str = "This backup was being encrypted; finishing it without encryption would save it in plain. Resume it with its encryption (the same recipient or passphrase), or run the backup again.";

/// Removes the part file an earlier process left, when it is one of ours.
pub(super) fn remove_part(resume: &PartialDownload, folder: &std::path::Path) {
    if is_our_part(&resume.part, folder) {
        let _ = std::fs::remove_file(&resume.part);
    }
}

/// Reopens a journalled part file, if it is still there and is one of ours in `folder`.
pub(super) fn continue_part(
    resume: PartialDownload,
    folder: &std::path::Path,
) -> Option<(Writer, Transfer)> {
    if !is_our_part(&resume.part, folder) {
        return None;
    }
    let (writer, written) = Writer::reopen(&resume.part).ok()?;
    tracing::info!(
        bytes = written,
        "continuing the download left by an earlier run"
    );
    let expected_sha256 = resume
        .sha256
        .and_then(|hex| <[u8; 32]>::try_from(hex::decode(hex).ok()?).ok());
    let transfer = Transfer {
        written,
        total: resume.total,
        validator: Some(resume.validator),
        disposition: resume.disposition,
        expected_sha256,
        ..Transfer::default()
    };
    Some((writer, transfer))
}
