//! `kluis contents`, `kluis restore` and `kluis restore-test` (kluis-restore does the reading
//! and the writing): what is in a backup file, its entries back in a folder, and the proof
//! that it restores. The work is blocking (whole files): off the async thread.

use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use kluis_core::encryption::DecryptKey;
use kluis_core::{Error, Result};
use kluis_restore::archive::EntryKind;
use kluis_restore::{Backup, RestoreOptions};

use crate::args::Cli;
use crate::from_args::{open_history, open_profiles};

/// What opens `file` when it is encrypted (see `encryption::key_for`); none when it is not.
async fn key(cli: &Cli, file: &Path, identity: Option<&Path>) -> Result<Option<DecryptKey>> {
    match kluis_core::encryption::looks_encrypted(file) {
        true => Ok(Some(
            crate::encryption::key_for(cli, file, identity).await?.0,
        )),
        false => Ok(None),
    }
}

/// `work` on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::Io(format!("Reading the backup stopped unexpectedly ({e}).")))?
}

/// `kluis contents FILE [--json]`: a line per entry — kind, size, date, path — and what is not
/// restored, with why.
pub async fn contents(cli: &Cli, file: &Path, identity: Option<&Path>, json: bool) -> Result<()> {
    let key = key(cli, file, identity).await?;
    let file = file.to_path_buf();
    let entries = blocking(move || Ok(Backup::open(&file, key.as_ref())?.entries())).await?;
    let (mut files, mut bytes) = (0u64, 0u64);
    for entry in &entries {
        if json {
            println!(
                "{}",
                serde_json::to_string(entry).expect("plain values serialise")
            );
            continue;
        }
        let kind = match entry.kind {
            EntryKind::File => "file",
            EntryKind::Folder => "folder",
            EntryKind::Link => "link",
        };
        let shown = entry.path.as_deref().unwrap_or(&entry.name);
        let date = entry.modified.as_deref().unwrap_or("-");
        match &entry.refused {
            None => println!("{kind:<6} {:>14} {date:<19} {shown}", entry.size),
            Some(why) => println!(
                "{kind:<6} {:>14} {date:<19} {shown}  (not restored: {why})",
                entry.size
            ),
        }
        if entry.kind == EntryKind::File {
            files += 1;
            bytes += entry.size;
        }
    }
    if !json {
        eprintln!(
            "kluis: {} entries, {files} files, {bytes} bytes.",
            entries.len()
        );
    }
    Ok(())
}

/// `kluis restore FILE --to DIR [--only PATH…] [--overwrite]`, with a progress bar on a
/// terminal.
pub async fn restore(
    cli: &Cli,
    file: &Path,
    identity: Option<&Path>,
    to: &Path,
    options: RestoreOptions,
) -> Result<()> {
    let key = key(cli, file, identity).await?;
    let (file, to): (PathBuf, PathBuf) = (file.to_path_buf(), to.to_path_buf());
    let folder = to.clone();
    let restored = blocking(move || {
        let mut backup = Backup::open(&file, key.as_ref())?;
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {eta}")
                .expect("a valid template"),
        );
        let restored = kluis_restore::restore(&mut backup, &to, &options, &mut |done, total| {
            bar.set_length(total);
            bar.set_position(done);
        });
        bar.finish_and_clear();
        restored
    })
    .await?;
    for (name, why) in &restored.not_restored {
        eprintln!("kluis: not restored: {name}: {why}");
    }
    eprintln!(
        "kluis: restored {} files ({} bytes) and {} folders into {}.",
        restored.files,
        restored.bytes,
        restored.folders,
        folder.display()
    );
    Ok(())
}

/// Which backup `kluis restore-test` tests.
pub enum Tested<'a> {
    File(&'a Path),
    /// The newest kept backup of this klant.
    Newest(&'a str),
}

/// `kluis restore-test FILE|--profile NAME [--json]`: recorded when the history knows the
/// backup; exits with 7 (damaged) when an entry fails.
pub async fn test(cli: &Cli, which: Tested<'_>, identity: Option<&Path>, json: bool) -> Result<()> {
    let history = std::sync::Arc::new(open_history(cli.history_db.as_ref())?);
    let (path, entry) = match which {
        Tested::File(file) => {
            let absolute = std::path::absolute(file)
                .map_err(|e| Error::io(format!("find {}", file.display()), e))?;
            let entry = history.by_path(&absolute.to_string_lossy())?;
            (file.to_path_buf(), entry)
        }
        Tested::Newest(name) => {
            let saved = open_profiles(cli.profiles_file.as_ref())
                .map(|p| p.list())
                .unwrap_or_default();
            let klant = kluis_profiles::find_klant(&saved, &history, name)?;
            let newest = history
                .kept(Some(&klant.key()))?
                .pop()
                .ok_or_else(|| Error::Config(format!("{name} has no kept backup to test.")))?;
            let path = PathBuf::from(newest.path.clone().unwrap_or_default());
            (path, Some(newest))
        }
    };
    let key = key(cli, &path, identity).await?;
    let tested = match entry {
        Some(entry) => {
            blocking(move || {
                let record = kluis_restore::test_and_record(&history, &entry, key.as_ref())?;
                Ok(Outcome::Recorded(record))
            })
            .await?
        }
        None => {
            blocking(move || {
                let tested = kluis_restore::restore_test(&path, key.as_ref(), None)?;
                Ok(Outcome::Unrecorded(tested))
            })
            .await?
        }
    };
    let (passed, entries, bytes, took_ms, failed) = match &tested {
        Outcome::Recorded(r) => {
            let failed: Vec<String> = r.detail.iter().cloned().collect();
            (r.passed, r.entries, r.bytes, r.took_ms, failed)
        }
        Outcome::Unrecorded(t) => {
            let failed = (t.failed.iter())
                .map(|(name, why)| format!("{name}: {why}"))
                .collect();
            (t.passed(), t.entries, t.bytes, t.took_ms, failed)
        }
    };
    if json {
        let line = serde_json::json!({
            "passed": passed,
            "entries": entries,
            "bytes": bytes,
            "took_ms": took_ms,
            "failed": failed,
            "recorded": matches!(tested, Outcome::Recorded(_)),
        });
        println!("{line}");
    }
    for failure in &failed {
        eprintln!("kluis: does not restore: {failure}");
    }
    match passed {
        true => {
            eprintln!("kluis: the restore test passed: {entries} entries, {bytes} bytes, in {took_ms} ms.");
            Ok(())
        }
        false => Err(Error::BackupsDamaged(
            "The restore test failed: the backup does not restore whole (see above).".into(),
        )),
    }
}

/// A restore test's result: recorded in the history (a backup it knows), or only said.
enum Outcome {
    Recorded(kluis_core::restore_tests::RestoreTestRecord),
    Unrecorded(kluis_restore::RestoreTested),
}
