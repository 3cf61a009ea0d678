//! How `backup --all` and `run-due` say each klant's outcome: a line on stdout per backup
//! saved (its path, or with `--json` one JSON object), a failure on stderr (or as JSON), and a
//! klant left to another PC of the office on stderr (and as JSON).

use kluis_core::{Error, Saved};
use kluis_profiles::{Profile, Skipped};
use uuid::Uuid;

pub fn report_saved(profile: &Profile, id: Uuid, saved: &Saved, json: bool) {
    if json {
        let line = serde_json::json!({
            "profile": profile.id, "name": profile.name, "job": id,
            "path": saved.path, "bytes": saved.bytes, "sha256": saved.sha256,
        });
        println!("{line}");
    } else {
        println!("{}", saved.path.display());
    }
}

/// A klant left to another PC of the office: said on stderr, and in `--json` as a line of its
/// own (`skipped`: `done` or `held`, `by`, and for `done` when).
pub fn report_skipped(profile: &Profile, skipped: &Skipped, json: bool) {
    if json {
        let (kind, by, at_ms) = match skipped {
            Skipped::Done(b) => ("done", &b.by, Some(b.at_ms)),
            Skipped::Held { by } => ("held", by, None),
        };
        let line = serde_json::json!({
            "profile": profile.id, "name": profile.name, "skipped": kind, "by": by, "at_ms": at_ms,
        });
        println!("{line}");
    }
    eprintln!("kluis: {}: {skipped}; skipped.", profile.name);
}

pub fn report_failed(profile: &Profile, error: &Error, json: bool) {
    if json {
        let line =
            serde_json::json!({ "profile": profile.id, "name": profile.name, "error": error });
        println!("{line}");
    } else {
        eprintln!("kluis: {}: {error}", profile.name);
    }
}
