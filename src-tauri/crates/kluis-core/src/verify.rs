//! Verification: every saved backup's file read again and checked against what the history
//! recorded when it was saved — its length and SHA-256 — and, where the file is a zip
//! archive, every entry read back through its CRC-32 (streamed, nothing extracted to disk).
//!
//! [`check_entry`] checks one backup's file and says what it found ([`Finding`], read as
//! `examine` reads a file before a deletion, within its bounds for a zip archive);
//! [`verify_kept`] checks every file the history still keeps (two at a time: reading and hashing are each
//! about one core's work) and records each finding in the history, where the dashboard,
//! `kluis verify` and retention read it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::Result;
use crate::examine::Examined;
pub use crate::finding::Finding;
use crate::history::{Check, History, HistoryEntry};
use crate::klant_key::KlantKey;

/// One backup's verification: the history row it checked and what it found.
#[derive(Debug, Clone)]
pub struct Verified {
    pub entry: HistoryEntry,
    pub check: Check,
}

/// How many files are verified at once: one reads while another hashes.
const AT_ONCE: usize = 2;

/// Verifies every backup the history keeps (only `profile`'s when given), records each
/// finding, and returns them oldest first. Blocking: call it from a blocking thread.
pub fn verify_kept(history: &History, profile: Option<&KlantKey>) -> Result<Vec<Verified>> {
    let kept = history.kept(profile)?;
    let next = AtomicUsize::new(0);
    let found: Mutex<Vec<Option<Check>>> = Mutex::new(vec![None; kept.len()]);
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE.min(kept.len()) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(entry) = kept.get(index) else { break };
                let check = check_entry(entry);
                found.lock().unwrap()[index] = Some(check);
            });
        }
    });
    let found = found.into_inner().unwrap();
    let mut verified = Vec::with_capacity(kept.len());
    for (entry, check) in kept.into_iter().zip(found) {
        let check = check.expect("every index was taken by a worker");
        history.checked(&entry.id, &check)?;
        verified.push(Verified { entry, check });
    }
    Ok(verified)
}

/// "Verify monthly": how long a klant's backups go without being read again.
pub const MONTH_MS: i64 = 30 * 24 * 60 * 60 * 1000;

/// Whether `profile`'s kept backups are due for their monthly verification at `now_ms`: one
/// of them has not been read for 30 days — neither saved (a save reads what it writes) nor
/// verified since. Verifying them all then resets every one.
pub fn monthly_due(history: &History, profile: &KlantKey, now_ms: i64) -> Result<bool> {
    let kept = history.kept(Some(profile))?;
    let last_read = |e: &HistoryEntry| {
        let saved = e.finished_at_ms.unwrap_or(e.started_at_ms);
        e.last_check.as_ref().map_or(saved, |c| c.at_ms.max(saved))
    };
    Ok(kept.iter().any(|e| now_ms - last_read(e) >= MONTH_MS))
}

/// "Verify monthly" after a save: `profile`'s kept backups verified (and the findings
/// recorded) when [`monthly_due`] at `now_ms`, else `None`. Blocking, as [`verify_kept`].
pub fn verify_if_month_passed(
    history: &History,
    profile: &KlantKey,
    now_ms: i64,
) -> Result<Option<Vec<Verified>>> {
    match monthly_due(history, profile, now_ms)? {
        true => verify_kept(history, Some(profile)).map(Some),
        false => Ok(None),
    }
}

/// Verifies one history row's file (a row without its digest or size cannot be checked).
pub fn check_entry(entry: &HistoryEntry) -> Check {
    // An encrypted backup is checked as it is on disk: the encrypted file's length and digest
    // (no key is needed; `kluis decrypt` checks the plain stream against its own). The file
    // is read as retention reads it before a deletion: at the recorded place, never through a
    // link there (`examine`).
    Examined::of(entry).check
}

#[cfg(test)]
mod tests {
    use std::io::{self, Write};
    use std::path::Path;

    use super::*;
    use crate::clock::now_ms;

    /// Saves `content` at `dir/name` and records it as job of `profile`, as a backup would.
    fn saved(history: &History, dir: &Path, name: &str, content: &[u8]) -> uuid::Uuid {
        let entry = crate::history::saved_for_test(history, &dir.join(name), content);
        entry.id.parse().unwrap()
    }

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, content) in entries {
            zip.start_file(*name, options).unwrap();
            zip.write_all(content).unwrap();
        }
        zip.finish().unwrap();
        out.into_inner()
    }

    fn finding_of(verified: &[Verified], id: uuid::Uuid) -> &Check {
        let verified = verified.iter().find(|v| v.entry.id == id.to_string());
        &verified.expect("every kept backup is verified").check
    }

    /// A corrupted, a truncated and a missing backup are each found and named, intact ones
    /// pass, and every finding is recorded in the history for the dashboard.
    #[test]
    fn finds_corrupted_truncated_and_missing_backups() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let content: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let intact = saved(&history, dir.path(), "intact.bin", &content);
        let corrupted = saved(&history, dir.path(), "corrupted.bin", &content);
        let truncated = saved(&history, dir.path(), "truncated.bin", &content);
        let missing = saved(&history, dir.path(), "missing.bin", &content);
        let mut bytes = content.clone();
        bytes[123_456] ^= 1;
        std::fs::write(dir.path().join("corrupted.bin"), &bytes).unwrap();
        std::fs::write(dir.path().join("truncated.bin"), &content[..200_000]).unwrap();
        std::fs::remove_file(dir.path().join("missing.bin")).unwrap();

        let verified = verify_kept(&history, Some(&KlantKey::profile("klant"))).unwrap();
        assert_eq!(verified.len(), 4);
        assert_eq!(finding_of(&verified, intact).finding, Finding::Intact);
        assert_eq!(finding_of(&verified, corrupted).finding, Finding::Changed);
        let short = finding_of(&verified, truncated);
        assert_eq!(short.finding, Finding::Changed);
        assert!(
            short.detail.as_deref().unwrap().contains("200000 bytes"),
            "says how long the file is now: {short:?}"
        );
        assert_eq!(finding_of(&verified, missing).finding, Finding::Missing);

        let recorded = history.get(corrupted).unwrap().unwrap().last_check;
        assert_eq!(
            recorded.map(|c| c.finding),
            Some(Finding::Changed),
            "the history keeps the finding"
        );
        assert!(
            verify_kept(&history, Some(&KlantKey::profile("another klant")))
                .unwrap()
                .is_empty(),
            "only the profile asked for"
        );
    }

    /// A zip backup is read back entry by entry: an archive that was saved as received but
    /// whose entry no longer matches its CRC-32 is damaged; a sound archive is intact.
    #[test]
    fn reads_zip_archives_back() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let text: Vec<u8> = b"administratie ".repeat(50_000);
        let sound = zip_of(&[("a.txt", &text), ("map/b.xml", b"<b/>")]);
        let sound_id = saved(&history, dir.path(), "sound.zip", &sound);

        // A deflate stream that still inflates, to other bytes: flip a literal of a stored
        // entry instead, so the only thing that can notice is the CRC.
        let mut out = io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file("gegevens.csv", stored).unwrap();
        zip.write_all(&text).unwrap();
        zip.finish().unwrap();
        let mut damaged = out.into_inner();
        let at = damaged
            .windows(14)
            .position(|w| w == b"administratie ")
            .unwrap()
            + 5000;
        damaged[at] ^= 0x20;
        let damaged_id = saved(&history, dir.path(), "damaged.zip", &damaged);

        let verified = verify_kept(&history, None).unwrap();
        assert_eq!(finding_of(&verified, sound_id).finding, Finding::Intact);
        let check = finding_of(&verified, damaged_id);
        assert_eq!(check.finding, Finding::ArchiveDamaged, "{check:?}");
        assert!(check.detail.as_deref().unwrap().contains("gegevens.csv"));
    }

    /// The archive of one entry, `content` deflated, shallow-copied `copies` times more: every
    /// copy's entry points at the same compressed bytes, as a zip bomb's do.
    fn overlapping_zip(content: &[u8], copies: usize) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("0", options).unwrap();
        zip.write_all(content).unwrap();
        for copy in 1..=copies {
            zip.shallow_copy_file("0", &copy.to_string()).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    /// A zip bomb is reported, not inflated: 2,000 entries sharing one deflated stream of
    /// 4 MiB of zeros (8 GiB in all, from a file of about 200 KB) were inflated in full and
    /// called intact before (a real one of 10 MB inflates to hundreds of terabytes: hours);
    /// now it is found suspicious before anything is inflated. Two
    /// entries sharing bytes are refused as well, however small; entries that say they
    /// inflate to more than 1,100 times the archive are refused without reading them; and an
    /// honest archive of zeros near deflate's best ratio still verifies as intact.
    #[test]
    fn a_zip_bomb_is_reported_not_inflated() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let bomb = overlapping_zip(&vec![0; 4 << 20], 2_000);
        let bomb_id = saved(&history, dir.path(), "bomb.zip", &bomb);
        let small = overlapping_zip(b"administratie", 1);
        let small_id = saved(&history, dir.path(), "small.zip", &small);

        // One honest entry whose sizes are then made to say 4 GiB (local and central header).
        let mut lying = zip_of(&[("a.txt", b"administratie")]);
        for (signature, at) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
            let header = lying.windows(4).position(|w| w == signature).unwrap();
            lying[header + at..header + at + 4].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        }
        let lying_id = saved(&history, dir.path(), "lying.zip", &lying);

        let zeros = zip_of(&[("nullen.bin", &vec![0; 64 << 20])]);
        assert!(zeros.len() * 1_000 < 64 << 20, "near deflate's best ratio");
        let zeros_id = saved(&history, dir.path(), "zeros.zip", &zeros);

        let verified = verify_kept(&history, None).unwrap();
        for (id, says) in [
            (bomb_id, "share the same bytes"),
            (small_id, "share the same bytes"),
            (lying_id, "times its size"),
        ] {
            let check = finding_of(&verified, id);
            assert_eq!(check.finding, Finding::ArchiveDamaged, "{check:?}");
            let detail = check.detail.as_deref().unwrap();
            assert!(
                detail.contains("suspicious") && detail.contains(says),
                "{detail}"
            );
        }
        assert_eq!(finding_of(&verified, zeros_id).finding, Finding::Intact);
    }

    /// Monthly verification is due once a kept backup has gone 30 days unread (since it was
    /// saved, or last verified), and not again once they have all been verified.
    #[test]
    fn monthly_verification_is_due_once_a_month() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let now = now_ms();
        assert!(
            !monthly_due(&history, &KlantKey::profile("klant"), now).unwrap(),
            "nothing to verify"
        );
        let old = saved(&history, dir.path(), "a.zip", b"a");
        saved(&history, dir.path(), "b.zip", b"b");
        assert!(
            !monthly_due(&history, &KlantKey::profile("klant"), now).unwrap(),
            "read as they were saved"
        );
        // (From now, after the saves: `now` was read before them.)
        assert!(
            monthly_due(&history, &KlantKey::profile("klant"), now_ms() + MONTH_MS).unwrap(),
            "a month later"
        );
        history
            .conn
            .lock()
            .unwrap()
            .execute(
                "UPDATE jobs SET finished_at_ms = finished_at_ms - ?2 WHERE id = ?1",
                rusqlite::params![old.to_string(), MONTH_MS],
            )
            .unwrap();
        assert!(
            monthly_due(&history, &KlantKey::profile("klant"), now_ms()).unwrap(),
            "one saved a month ago"
        );
        verify_kept(&history, Some(&KlantKey::profile("klant"))).unwrap();
        assert!(
            !monthly_due(&history, &KlantKey::profile("klant"), now_ms()).unwrap(),
            "all read again now"
        );
    }

    /// Something other than a regular file at the recorded place is not read through (a link
    /// may point anywhere) and is reported, not taken for the backup.
    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_the_file_is_not_the_backup() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::in_memory().unwrap();
        let id = saved(&history, dir.path(), "klant.zip", b"backup");
        std::fs::rename(dir.path().join("klant.zip"), dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), dir.path().join("klant.zip"))
            .unwrap();
        let verified = verify_kept(&history, None).unwrap();
        assert_eq!(finding_of(&verified, id).finding, Finding::Unreadable);
    }
}
