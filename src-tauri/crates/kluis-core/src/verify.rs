//! Verification: every saved backup's file read again and checked against what the history
//! recorded when it was saved — its length and SHA-256 — and, where the file is a zip
//! archive, every entry read back through its CRC-32 (streamed, nothing extracted to disk).
//!
//! [`verify_file`] checks one file and says what it found ([`Finding`]); [`verify_kept`]
//! checks every file the history still keeps (two at a time: reading and hashing are each
//! about one core's work) and records each finding in the history, where the dashboard,
//! `kluis verify` and retention read it.

use std::fs::File;
use std::io::{self, Read, Seek};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::examine::Examined;
use crate::history::{Check, History, HistoryEntry};

/// What reading a saved backup again found.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// Length and SHA-256 as recorded (and, for a zip archive, every entry reads back).
    Intact,
    /// No file at the recorded place.
    Missing,
    /// The file is there but its length or SHA-256 is not what was saved.
    Changed,
    /// The file could not be read (permissions, a disk error, not a file).
    Unreadable,
    /// The file is as it was saved, but the zip archive in it is damaged: the service sent a
    /// broken backup.
    ArchiveDamaged,
}

impl Finding {
    pub const ALL: [Finding; 5] = [
        Finding::Intact,
        Finding::Missing,
        Finding::Changed,
        Finding::Unreadable,
        Finding::ArchiveDamaged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Finding::Intact => "intact",
            Finding::Missing => "missing",
            Finding::Changed => "changed",
            Finding::Unreadable => "unreadable",
            Finding::ArchiveDamaged => "archive_damaged",
        }
    }

    pub fn parse(text: &str) -> Option<Finding> {
        Finding::ALL.into_iter().find(|f| f.as_str() == text)
    }

    /// Anything but intact: a backup that cannot be relied on.
    pub fn is_problem(self) -> bool {
        self != Finding::Intact
    }
}

crate::stable_names!(Finding);

/// One backup's verification: the history row it checked and what it found.
#[derive(Debug, Clone)]
pub struct Verified {
    pub entry: HistoryEntry,
    pub check: Check,
}

/// Reads are this large: big enough that the system call per read costs nothing next to
/// hashing it, small enough to stay in the CPU's cache.
const READ_SIZE: usize = 256 * 1024;

pub(crate) type Problem = (Finding, String);

/// Whether the opened `file` (`length` bytes long) is the backup saved: `bytes` long with
/// SHA-256 `sha256`, and a zip archive in it reading back.
pub(crate) fn check_opened(
    mut file: File,
    length: u64,
    bytes: u64,
    sha256: &str,
) -> std::result::Result<(), Problem> {
    let unreadable = |e: io::Error| (Finding::Unreadable, format!("It could not be read: {e}."));
    if length != bytes {
        return Err((
            Finding::Changed,
            format!("It is {length} bytes; the backup saved was {bytes} bytes."),
        ));
    }
    let (digest, zip) = digest_of(&mut file).map_err(unreadable)?;
    if !digest.eq_ignore_ascii_case(sha256) {
        return Err((
            Finding::Changed,
            "Its content differs from the backup saved (another SHA-256).".into(),
        ));
    }
    if zip {
        file.rewind().map_err(unreadable)?;
        read_back_archive(&file)?;
    }
    Ok(())
}

/// The SHA-256 (hex) of the whole file, and whether it begins as a zip archive does.
fn digest_of(file: &mut File) -> io::Result<(String, bool)> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; READ_SIZE];
    let mut head = Vec::with_capacity(4);
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if head.len() < 4 {
            let take = (4 - head.len()).min(n);
            head.extend_from_slice(&buffer[..take]);
        }
        hasher.update(&buffer[..n]);
    }
    Ok((hex::encode(hasher.finalize()), head == b"PK\x03\x04"))
}

/// How many times its own size an archive may inflate to. Deflate cannot do better than
/// about 1,032 to 1, so no archive whose entries each have bytes of their own comes near
/// this; a zip bomb does, by letting many entries share one compressed stream.
const MOST_INFLATION: u64 = 1_100;

/// Reads every entry of the zip archive in `file` to its end, which checks its CRC-32. An
/// entry compressed in a way this build cannot read (anything but stored and deflate) is
/// skipped, not counted as damage: it may well be fine.
///
/// The work is bounded before it starts: an archive whose entries share bytes, or whose
/// entries say they inflate to more than [`MOST_INFLATION`] times its size, is reported as
/// suspicious and not read on (a 10 MB bomb would otherwise inflate for hours); and no entry
/// is inflated past the size it declares.
fn read_back_archive(file: &File) -> std::result::Result<(), Problem> {
    let damaged = |what: String| (Finding::ArchiveDamaged, what);
    let suspicious = |why: &str| {
        (Finding::ArchiveDamaged, format!("It is saved as received, but the zip archive in it is suspicious: {why}. It was not read on (a zip bomb looks like this); ask the service for a new backup and keep this file for inspection."))
    };
    let archive_bytes = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut archive = zip::ZipArchive::new(io::BufReader::with_capacity(READ_SIZE, file))
        .map_err(|e| damaged(format!("It is saved as received, but the zip archive in it cannot be opened ({e}); the service sent a damaged backup.")))?;
    match archive.has_overlapping_entries() {
        Ok(false) => {}
        Ok(true) => return Err(suspicious("entries share the same bytes")),
        Err(e) => return Err(damaged(format!("It is saved as received, but the zip archive's entries cannot be located ({e}); the service sent a damaged backup."))),
    }
    let mut declared: u128 = 0;
    for index in 0..archive.len() {
        declared += archive.by_index_raw(index).map(|e| e.size()).unwrap_or(0) as u128;
    }
    if declared > archive_bytes as u128 * MOST_INFLATION as u128 {
        return Err(suspicious(&format!(
            "its entries would inflate to {declared} bytes, more than {MOST_INFLATION} times its size"
        )));
    }
    let mut buffer = vec![0; READ_SIZE];
    for index in 0..archive.len() {
        let mut entry = match archive.by_index(index) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::UnsupportedArchive(_)) => continue,
            Err(e) => return Err(damaged(format!("It is saved as received, but entry {} of its zip archive cannot be read ({e}); the service sent a damaged backup.", index + 1))),
        };
        let (declared, mut inflated) = (entry.size(), 0u64);
        loop {
            match entry.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) if inflated + n as u64 > declared => {
                    return Err(suspicious(&format!(
                        "entry {} inflates past the {declared} bytes it declares",
                        index + 1
                    )))
                }
                Ok(n) => inflated += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(damaged(format!(
                        "It is saved as received, but entry {} of its zip archive ({}) does not read back ({e}); the service sent a damaged backup.",
                        index + 1,
                        shown_name(&entry.name().unwrap_or_default()),
                    )))
                }
            }
        }
    }
    Ok(())
}

/// An entry's name as it may be shown: the archive came from the network, so control
/// characters are dropped and the length is bounded.
fn shown_name(name: &str) -> String {
    let name: String = name.chars().filter(|c| !c.is_control()).take(120).collect();
    format!("\u{201c}{name}\u{201d}")
}

/// How many files are verified at once: one reads while another hashes.
const AT_ONCE: usize = 2;

/// Verifies every backup the history keeps (only `profile`'s when given), records each
/// finding, and returns them oldest first. Blocking: call it from a blocking thread.
pub fn verify_kept(history: &History, profile: Option<&str>) -> Result<Vec<Verified>> {
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
pub fn monthly_due(history: &History, profile: &str, now_ms: i64) -> Result<bool> {
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
    profile: &str,
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
    use std::io::Write;
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

        let verified = verify_kept(&history, Some("klant")).unwrap();
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
            verify_kept(&history, Some("another klant"))
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
            !monthly_due(&history, "klant", now).unwrap(),
            "nothing to verify"
        );
        let old = saved(&history, dir.path(), "a.zip", b"a");
        saved(&history, dir.path(), "b.zip", b"b");
        assert!(
            !monthly_due(&history, "klant", now).unwrap(),
            "read as they were saved"
        );
        // (From now, after the saves: `now` was read before them.)
        assert!(
            monthly_due(&history, "klant", now_ms() + MONTH_MS).unwrap(),
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
            monthly_due(&history, "klant", now_ms()).unwrap(),
            "one saved a month ago"
        );
        verify_kept(&history, Some("klant")).unwrap();
        assert!(
            !monthly_due(&history, "klant", now_ms()).unwrap(),
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
