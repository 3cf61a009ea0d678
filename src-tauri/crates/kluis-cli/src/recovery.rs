//! `kluis recovery-kit`: the office's recovery kit — a recovery key whose private half is
//! printed (and, with `--key-file`, written to a new owner-only file) but never kept on this
//! computer, its public half kept in the settings and its vouch key in the keyring — and what writes the recovery catalogs to
//! the copy targets after each run of copies ([`catalogs_after`], kluis-profiles' `catalogs`).

use std::path::Path;

use kluis_core::{Error, Result};
use kluis_profiles::recovery_kit;
use kluis_profiles::unattended::CatalogsAfter;
use kluis_profiles::ProfileStore;
use kluis_recovery::RecoveryKey;

use crate::args::Cli;
use crate::from_args::{history_path, open_profiles};
use crate::secrets::{on_store, secret_store};

/// What writes the catalogs after this run's copies: none until a kit is made.
pub fn catalogs_after(cli: &Cli, profiles: &ProfileStore) -> Result<Option<CatalogsAfter>> {
    let Some(recovery) = profiles.settings().recovery else {
        return Ok(None);
    };
    Ok(Some(CatalogsAfter {
        recovery,
        profiles: profiles.list(),
        secrets: secret_store(),
        state: state_beside(&history_path(cli.history_db.as_ref())?),
    }))
}

/// The catalogs of `targets` written after copies made outside a saved profile's run (a
/// backup with flags, `kluis copy --pending`), each failure said; nothing until a kit is made.
pub async fn write_after_copies(
    cli: &Cli,
    history: std::sync::Arc<kluis_core::History>,
    targets: Vec<kluis_copies::CopyTarget>,
) {
    let Ok(profiles) = open_profiles(cli.profiles_file.as_ref()) else {
        return;
    };
    let Ok(Some(catalogs)) = catalogs_after(cli, &profiles) else {
        return;
    };
    for step in kluis_profiles::unattended::write_catalogs(history, targets, catalogs).await {
        crate::prune::tell(&kluis_core::KlantKey::profile(""), "", step);
    }
}

/// Every copy target's catalog written now, with its secret (a kit made, joined or carried on
/// for: not only after the next backup); the targets written to.
pub async fn write_catalogs_now(
    cli: &Cli,
    targets: Vec<kluis_copies::CopyTarget>,
) -> Result<Vec<kluis_copies::CopyTarget>> {
    if targets.is_empty() {
        return Ok(targets);
    }
    let history = std::sync::Arc::new(crate::from_args::open_history(cli.history_db.as_ref())?);
    let targets = crate::targets::with_secrets(targets).await?;
    write_after_copies(cli, history, targets.clone()).await;
    Ok(targets)
}

/// Where what was last written to each target is noted: beside the history.
fn state_beside(history: &Path) -> std::path::PathBuf {
    history.with_file_name("recovery-written.json")
}

/// What `kluis recovery-kit` is told.
pub struct KitPage<'a> {
    pub key_file: Option<&'a Path>,
    pub pc_name: Option<String>,
    /// Each copy target's own secret printed on the page too.
    pub with_target_secrets: bool,
}

/// `kluis recovery-kit [--key-file FILE] [--pc-name NAME] [--with-target-secrets]` (see the
/// module's text).
pub async fn kit(cli: &Cli, asked: KitPage<'_>) -> Result<()> {
    let KitPage {
        key_file,
        pc_name,
        with_target_secrets,
    } = asked;
    let profiles = std::sync::Arc::new(open_profiles(cli.profiles_file.as_ref())?);
    let before = profiles.settings().recovery;
    let (key, setting) = recovery_kit::new_kit(before.as_ref(), pc_name);
    // The key file first (with the page, the only place the private half is kept); removed
    // again when the kit is not made, so that no file holds a key of no kit.
    let mut key_file = match key_file {
        Some(file) => Some(KeyFile::write(file, &key)?),
        None => None,
    };
    let targets = profiles.settings().copy_targets;
    let on_page = match with_target_secrets {
        true => crate::targets::with_secrets(targets.clone()).await?,
        false => targets.clone(),
    };
    if with_target_secrets {
        recovery_kit::with_every_secret(&on_page)?;
    }
    let page = recovery_kit::page(&key, &setting, &on_page, before.is_some());
    let fingerprint = setting.fingerprint.clone();
    // This computer vouches for what it writes with the kit's vouch key, kept in its keyring.
    let (store, key) = (profiles.clone(), key);
    on_store(&secret_store(), move |secrets| {
        recovery_kit::keep_kit(&store, secrets, &key, setting)
    })
    .await?;
    let kept_in = key_file.as_mut().map(KeyFile::keep);
    print!("{page}");
    if let Some(file) = kept_in {
        eprintln!("kluis: the recovery key is also in {} (owner-only): keep it off this computer (a USB stick in the safe), and remove it here.", file.display());
    }
    eprintln!(
        "kluis: the recovery kit is made ({fingerprint}). Keep the page above where a fire or a thief does not reach it; this computer keeps only the public half."
    );
    // The catalogs written now, for the kit to open them at once (and, for a new kit, every
    // record again under it) — not only after the next backup.
    let targets = write_catalogs_now(cli, targets).await?;
    if !targets.is_empty() {
        eprintln!(
            "kluis: the catalogs are written to {}. Check the kit now: kluis recover list --target \"{}\" --recovery-key FILE.",
            (targets.iter()).map(|t| format!("\"{}\"", t.name)).collect::<Vec<_>>().join(", "),
            targets[0].name
        );
    }
    Ok(())
}

/// `kluis recovery-kit --join [--recovery-key FILE] [--pc-name NAME]`: no new kit — this
/// computer writes its catalogs for the office's kit (made on another of its computers) from
/// now on: they are written at once, so the office's kit opens what it copied before too.
pub async fn join(cli: &Cli, key_file: Option<&Path>, pc_name: Option<String>) -> Result<()> {
    let key = crate::recover_from::key_from(key_file)?;
    let profiles = std::sync::Arc::new(open_profiles(cli.profiles_file.as_ref())?);
    let before = profiles.settings().recovery;
    let setting = recovery_kit::joined(&key, before.as_ref(), pc_name);
    let fingerprint = setting.fingerprint.clone();
    let instead = (before.map(|b| b.fingerprint))
        .filter(|was| *was != fingerprint)
        .map_or(String::new(), |was| format!(", instead of its own {was}"));
    let store = profiles.clone();
    on_store(&secret_store(), move |secrets| {
        recovery_kit::keep_kit(&store, secrets, &key, setting)
    })
    .await?;
    eprintln!("kluis: this computer now writes its catalogs for the office's kit ({fingerprint}){instead}.");
    write_catalogs_now(cli, profiles.settings().copy_targets).await?;
    Ok(())
}

/// The key file `--key-file` names, while the kit is being made: removed when dropped before
/// [`KeyFile::keep`].
struct KeyFile {
    path: std::path::PathBuf,
    kept: bool,
}

impl KeyFile {
    fn write(path: &Path, key: &RecoveryKey) -> Result<KeyFile> {
        write_key_file(path, key)?;
        Ok(KeyFile {
            path: path.to_path_buf(),
            kept: false,
        })
    }

    fn keep(&mut self) -> std::path::PathBuf {
        self.kept = true;
        self.path.clone()
    }
}

impl Drop for KeyFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The key written to `file`, new and owner-only (on Windows too: its access list set while it
/// is empty); removed again when it cannot be written whole.
fn write_key_file(file: &Path, key: &RecoveryKey) -> Result<()> {
    let text = format!("{}\n", key.to_text().expose());
    let mut written = (kluis_private::files::options().write(true).create_new(true))
        .open(file)
        .map_err(|e| {
            Error::io(
                format!(
                    "write the key file {} (it must not exist yet)",
                    file.display()
                ),
                e,
            )
        })?;
    let outcome = kluis_private::files::restrict(&written)
        .and_then(|()| std::io::Write::write_all(&mut written, text.as_bytes()))
        .and_then(|()| written.sync_all());
    if let Err(e) = outcome {
        drop(written);
        let _ = std::fs::remove_file(file);
        return Err(Error::io(format!("write {}", file.display()), e));
    }
    Ok(())
}
