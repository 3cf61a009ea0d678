//! A restore test round of a klant's newest kept backup: the file saved on this computer, then
//! each copy of it that the klant's copy targets hold, fetched back as it would be after a lost
//! disk (kluis-copies' `Opened::fetch`) and tested the same way (kluis-restore). Every test of
//! a round is recorded with one time, so that one failure stands for the round (kluis-core's
//! `last_restore_test`). Blocking: whole files are read; call it from a blocking thread of the
//! runtime (a bucket's and a server's requests run on it).

use kluis_copies::{CopyTarget, Opened};
use kluis_core::copies::CopyRecord;
use kluis_core::encryption::DecryptKey;
use kluis_core::restore_tests::RestoreTestRecord;
use kluis_core::{History, HistoryEntry, KlantKey, Result};
use kluis_restore::restore_test::{test_copy, test_saved, CopyOn};

/// One test of a round.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RoundTest {
    pub record: RestoreTestRecord,
    /// The copy target's name, for the test of a copy on it.
    pub copy_on: Option<String>,
}

/// The round of klant `klant`'s newest kept backup (see the module's text), its copies on
/// `targets`; `None` when it keeps none.
pub fn restore_test_newest(
    history: &History,
    klant: &KlantKey,
    targets: &[CopyTarget],
    key: Option<&DecryptKey>,
) -> Result<Option<Vec<RoundTest>>> {
    let Some(newest) = history.kept(Some(klant))?.pop() else {
        return Ok(None);
    };
    restore_test_round(history, &newest, targets, key).map(Some)
}

/// The round of backup `entry`: its saved file, then its copies that `targets` hold.
pub fn restore_test_round(
    history: &History,
    entry: &HistoryEntry,
    targets: &[CopyTarget],
    key: Option<&DecryptKey>,
) -> Result<Vec<RoundTest>> {
    let at_ms = kluis_core::clock::now_ms();
    let mut tests = vec![RoundTest {
        record: test_saved(history, entry, key, at_ms)?,
        copy_on: None,
    }];
    let copies = history
        .copies_of(&entry.id)?
        .into_iter()
        .filter(CopyRecord::holds);
    for copy in copies {
        // A target the office removed, or this klant no longer copies to, is not asked.
        let Some(target) = targets.iter().find(|t| t.id == copy.target) else {
            continue;
        };
        let fetch = Box::new(move |file: &mut std::fs::File| {
            Opened::open(target, None)?.fetch(&copy, file)
        });
        let on = CopyOn {
            target_id: &target.id,
            target_name: &target.name,
            fetch,
        };
        tests.push(RoundTest {
            record: test_copy(history, entry, key, at_ms, on)?,
            copy_on: Some(target.name.clone()),
        });
    }
    Ok(tests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Arc;

    use kluis_copies::Place;
    use sha2::{Digest, Sha256};

    /// A zip archive of two files, saved as klant "bakker"'s backup under `local` and recorded.
    fn saved(history: &History, local: &std::path::Path) -> String {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, text) in [
            ("2025/grootboek.csv", "a;b\n".repeat(500)),
            ("readme.txt", "x".into()),
        ] {
            zip.start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(text.as_bytes()).unwrap();
        }
        let bytes = zip.finish().unwrap().into_inner();
        let folder = local.join("Bakker");
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("bakker.zip");
        std::fs::write(&path, &bytes).unwrap();
        let id = uuid::Uuid::new_v4();
        history
            .start(id, &KlantKey::profile("bakker"), "relay")
            .unwrap();
        let saved = kluis_core::download::Saved {
            path,
            bytes: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(&bytes)),
            encrypted: None,
        };
        history.saved(id, &saved).unwrap();
        id.to_string()
    }

    /// A round tests the saved file and then its copy on a folder target (fetched back), both
    /// recorded at one time. A copy changed on the target since fails its test, naming the
    /// target, while the saved file passes — and that failure is the klant's last restore test.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_round_tests_the_saved_file_and_its_copies() {
        let dir = tempfile::tempdir().unwrap();
        let history = Arc::new(History::open(&dir.path().join("history.sqlite3")).unwrap());
        let job = saved(&history, &dir.path().join("local"));
        let nas = dir.path().join("nas");
        std::fs::create_dir(&nas).unwrap();
        kluis_copies::folder::test("NAS", &nas).unwrap();
        let path = nas.to_string_lossy().into_owned();
        let target = CopyTarget::new("NAS", Place::Folder { path }).unwrap();
        let targets = vec![target.clone()];
        let copied =
            kluis_copies::copy_missing_in_background(history.clone(), None, targets.clone(), None);
        assert!(copied.await.unwrap()[0].outcome.is_ok());
        let klant = KlantKey::profile("bakker");
        let round = || {
            let (history, klant, targets) = (history.clone(), klant.clone(), targets.clone());
            tokio::task::spawn_blocking(move || {
                restore_test_newest(&history, &klant, &targets, None)
                    .unwrap()
                    .expect("a kept backup")
            })
        };

        let tests = round().await.unwrap();
        assert_eq!(tests.len(), 2, "{tests:?}");
        let (saved_test, copy_test) = (&tests[0], &tests[1]);
        assert!(
            saved_test.record.passed && saved_test.record.entries >= 2,
            "{saved_test:?}"
        );
        assert!(copy_test.record.passed, "{copy_test:?}");
        assert_eq!(copy_test.copy_on.as_deref(), Some("NAS"));
        assert_eq!(copy_test.record.target.as_deref(), Some(target.id.as_str()));
        assert_eq!(
            saved_test.record.at_ms, copy_test.record.at_ms,
            "one round, one time"
        );
        assert_eq!(saved_test.record.job, job);

        // The copy on the share changed in place (same length): bit rot, or tampering.
        let location = history.copies_of(&job).unwrap()[0]
            .location
            .clone()
            .unwrap();
        let mut bytes = std::fs::read(&location).unwrap();
        bytes[40] ^= 0xFF;
        std::fs::write(&location, &bytes).unwrap();
        let tests = round().await.unwrap();
        assert!(tests[0].record.passed, "the saved file still restores");
        let failed = &tests[1].record;
        let detail = failed.detail.as_deref().unwrap_or_default();
        assert!(
            !failed.passed
                && detail.starts_with("Copy on \"NAS\": ")
                && detail.contains("not the backup as it was copied"),
            "{failed:?}"
        );
        assert_eq!(
            history.last_restore_test(&klant).unwrap().as_ref(),
            Some(failed),
            "the round's failure stands for it"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path().join("local/Bakker"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            ["bakker.zip"],
            "no fetched copy or test folder stays behind"
        );
    }
}
