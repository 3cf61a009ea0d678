//! `kluis contents`, `kluis restore` and `kluis restore-test` (kluis-restore does the reading
//! and the writing): what is in a backup file, its entries back in a folder, and the proof
//! that it restores. The work is blocking (whole files): off the async thread.

use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use kluis_core::encryption::DecryptKey;
use kluis_core::{Error, HistoryEntry, Result};
use kluis_restore::archive::EntryKind;
use kluis_restore::{Backup, RestoreOptions};

use crate::args::Cli;
use crate::from_args::{open_history, open_profiles};

/// What opens `file` when it is encrypted (see `encryption::key_for`); none when it is not.
/// Whether it is: as the history records its backup `entry` (its file may be lost, a copy
/// listed instead), else as the file begins.
async fn key(
    cli: &Cli,
    file: &Path,
    entry: Option<&HistoryEntry>,
    identity: Option<&Path>,
) -> Result<Option<DecryptKey>> {
    let encrypted = match entry {
        Some(entry) => entry.encrypted.is_some(),
        None => kluis_core::encryption::looks_encrypted(file),
    };
    match encrypted {
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

/// What `kluis contents` lists: which backup, its copy on which target, as JSON or not.
pub struct Listed<'a> {
    pub which: Which<'a>,
    pub copy: Option<&'a str>,
    pub json: bool,
}

/// `kluis contents FILE|--profile NAME --latest [--copy TARGET] [--json]`: a line per entry —
/// kind, size, date, path — and what is not restored, with why.
pub async fn contents(cli: &Cli, listed: Listed<'_>, identity: Option<&Path>) -> Result<()> {
    let history = open_history(cli.history_db.as_ref())?;
    let (path, entry) = backup_of(cli, &history, listed.which)?;
    let key = key(cli, &path, entry.as_ref(), identity).await?;
    let entries = match listed.copy {
        None => blocking(move || Ok(Backup::open(&path, key.as_ref())?.entries())).await?,
        Some(name) => {
            let entry = entry.ok_or_else(|| Error::Config(format!(
                "{} is not a backup the history knows, so Kluis does not know its copies. Name it by --profile NAME --latest, or by its path as saved.",
                path.display()
            )))?;
            let targets = open_profiles(cli.profiles_file.as_ref())?
                .settings()
                .copy_targets;
            let target = crate::targets::named_in(&targets, name)?;
            let target = crate::targets::with_secrets(vec![target]).await?.remove(0);
            let record = (history.copies_of(&entry.id)?.into_iter())
                .find(|c| c.target == target.id && c.holds())
                .ok_or_else(|| {
                    Error::Config(format!(
                        "Copy target \"{name}\" holds no copy of this backup (see `kluis verify`)."
                    ))
                })?;
            blocking(move || {
                let mut fetched = kluis_restore::restore_test::scratch_file(None)?;
                kluis_copies::Opened::open(&target, None)?.fetch(&record, fetched.as_file_mut())?;
                Ok(Backup::open(fetched.path(), key.as_ref())?.entries())
            })
            .await?
        }
    };
    let json = listed.json;
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
    let key = key(cli, file, None, identity).await?;
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
    said(&restored, &folder)
}

/// What a restore into `folder` came to, said; an error (exit 8) when an entry was left out.
pub fn said(restored: &kluis_restore::Restored, folder: &Path) -> Result<()> {
    for (name, why) in &restored.not_restored {
        eprintln!("kluis: not restored: {name}: {why}");
    }
    let (files, folders) = (restored.files, restored.folders);
    eprintln!(
        "kluis: restored {files} file{} ({} bytes) and {folders} folder{} into {}.",
        if files == 1 { "" } else { "s" },
        restored.bytes,
        if folders == 1 { "" } else { "s" },
        folder.display()
    );
    match restored.whole() {
        true => Ok(()),
        // A script (or a person glancing at $?) must not take this for a whole restore.
        false => Err(Error::PartlyRestored(format!(
            "Restored {} of {} entries: {} left out (named above).",
            restored.files + restored.folders,
            restored.entries,
            restored.not_restored.len()
        ))),
    }
}

/// Which backup a command reads.
pub enum Which<'a> {
    File(&'a Path),
    /// The newest kept backup of this klant.
    Newest(&'a str),
}

/// The file of backup `which` and, when the history knows it, its record.
fn backup_of(
    cli: &Cli,
    history: &kluis_core::History,
    which: Which<'_>,
) -> Result<(PathBuf, Option<HistoryEntry>)> {
    match which {
        Which::File(file) => {
            let absolute = std::path::absolute(file)
                .map_err(|e| Error::io(format!("find {}", file.display()), e))?;
            let entry = history.by_path(&absolute.to_string_lossy())?;
            Ok((file.to_path_buf(), entry))
        }
        Which::Newest(name) => {
            let saved = open_profiles(cli.profiles_file.as_ref())
                .map(|p| p.list())
                .unwrap_or_default();
            let klant = kluis_profiles::find_klant(&saved, history, name)?;
            let newest = history
                .kept(Some(&klant.key()))?
                .pop()
                .ok_or_else(|| Error::Config(format!("{name} has no kept backup.")))?;
            Ok((
                PathBuf::from(newest.path.clone().unwrap_or_default()),
                Some(newest),
            ))
        }
    }
}

/// `kluis restore-test FILE|--profile NAME [--json]`: a backup the history knows is tested
/// with its copies on the copy targets and each test recorded; exits with 7 (damaged) when an
/// entry fails.
pub async fn test(cli: &Cli, which: Which<'_>, identity: Option<&Path>, json: bool) -> Result<()> {
    let history = std::sync::Arc::new(open_history(cli.history_db.as_ref())?);
    let (path, entry) = backup_of(cli, &history, which)?;
    let key = key(cli, &path, entry.as_ref(), identity).await?;
    let tests: Vec<Said> = match entry {
        Some(entry) => {
            let targets = open_profiles(cli.profiles_file.as_ref())?
                .settings()
                .copy_targets;
            let targets = crate::targets::with_secrets(targets).await?;
            let round = blocking(move || {
                kluis_profiles::restore_round::restore_test_round(
                    &history,
                    &entry,
                    &targets,
                    key.as_ref(),
                )
            });
            (round.await?.into_iter()).map(Said::recorded).collect()
        }
        None => {
            let tested =
                blocking(move || kluis_restore::restore_test(&path, key.as_ref(), None)).await?;
            vec![Said::unrecorded(&tested)]
        }
    };
    for test in &tests {
        test.say(json);
    }
    match tests.iter().all(|t| t.passed) {
        true => Ok(()),
        false => Err(Error::BackupsDamaged(
            "The restore test failed: the backup does not restore whole (see above).".into(),
        )),
    }
}

/// One restore test, as `kluis restore-test` says it.
#[derive(serde::Serialize)]
struct Said {
    passed: bool,
    entries: u64,
    bytes: u64,
    took_ms: u64,
    failed: Vec<String>,
    /// Recorded in the history (a backup it knows).
    recorded: bool,
    /// The copy target whose copy was tested (none: the file on this computer).
    copy_on: Option<String>,
}

impl Said {
    fn recorded(test: kluis_profiles::restore_round::RoundTest) -> Said {
        let r = test.record;
        Said {
            passed: r.passed,
            entries: r.entries,
            bytes: r.bytes,
            took_ms: r.took_ms,
            failed: r.detail.into_iter().collect(),
            recorded: true,
            copy_on: test.copy_on,
        }
    }

    fn unrecorded(t: &kluis_restore::RestoreTested) -> Said {
        Said {
            passed: t.passed(),
            entries: t.entries,
            bytes: t.bytes,
            took_ms: t.took_ms,
            failed: (t.failed.iter())
                .map(|(name, why)| format!("{name}: {why}"))
                .collect(),
            recorded: false,
            copy_on: None,
        }
    }

    /// A JSON line on stdout (with `json`), and in words on stderr.
    fn say(&self, json: bool) {
        if json {
            println!(
                "{}",
                serde_json::to_string(self).expect("plain values serialise")
            );
        }
        let of =
            (self.copy_on.as_ref()).map_or(String::new(), |t| format!(" of the copy on \"{t}\""));
        for failure in &self.failed {
            eprintln!("kluis: does not restore{of}: {failure}");
        }
        let (entries, bytes, took_ms) = (self.entries, self.bytes, self.took_ms);
        match self.passed {
            true => eprintln!("kluis: the restore test{of} passed: {entries} entries, {bytes} bytes, in {took_ms} ms."),
            false => eprintln!("kluis: the restore test{of} FAILED."),
        }
    }
}
