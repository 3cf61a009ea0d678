//! `kluis recovery-kit`: the office's recovery kit — a recovery key whose private half is
//! printed (and, with `--key-file`, written to a new owner-only file) but never kept on this
//! computer, its public half kept in the settings and its vouch key in the keyring — and what writes the recovery catalogs to
//! the copy targets after each run of copies ([`catalogs_after`], kluis-profiles' `catalogs`).

use std::path::Path;

use kluis_core::{Error, Result};
use kluis_profiles::store::RecoverySetting;
use kluis_profiles::unattended::CatalogsAfter;
use kluis_profiles::{ProfileStore, SecretKind, APP};
use kluis_recovery::RecoveryKey;

use crate::args::Cli;
use crate::from_args::{history_path, open_profiles};
use crate::profiles::{on_store, secret_store};

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

/// Where what was last written to each target is noted: beside the history.
fn state_beside(history: &Path) -> std::path::PathBuf {
    history.with_file_name("recovery-written.json")
}

/// `kluis recovery-kit [--key-file FILE] [--pc-name NAME]` (see the module's text).
pub async fn kit(cli: &Cli, key_file: Option<&Path>, pc_name: Option<String>) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let key = RecoveryKey::generate();
    let office = key.office_key();
    if let Some(file) = key_file {
        write_key_file(file, &key)?;
    }
    // This computer vouches for what it writes with the kit's vouch key, kept in its keyring.
    let vouch = key.vouch_key().to_text();
    on_store(&secret_store(), move |store| {
        store.set(APP, SecretKind::RecoveryVouch, &vouch)
    })
    .await?;
    let before = profiles.settings().recovery;
    let setting = RecoverySetting {
        office_key: office.to_text(),
        fingerprint: office.fingerprint(),
        made_ms: kluis_core::clock::now_ms(),
        pc_id: (before.as_ref().map(|r| r.pc_id.clone()))
            .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string()),
        pc_name: pc_name
            .or_else(|| before.as_ref().map(|r| r.pc_name.clone()))
            .unwrap_or_else(host_name),
    };
    let targets = profiles.settings().copy_targets;
    profiles
        .update_settings(|settings| {
            settings.recovery = Some(setting.clone());
            Ok(())
        })
        .map_err(kluis_profiles::ProfileError::into_core)?;
    print!("{}", kit_page(&key, &setting, &targets, before.is_some()));
    eprintln!(
        "kluis: the recovery kit is made ({}). Keep the page above where a fire or a thief does not reach it; this computer keeps only the public half.",
        setting.fingerprint
    );
    Ok(())
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

/// This computer's name, as the catalogs name it unless told.
fn host_name() -> String {
    std::env::var("COMPUTERNAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "this computer".into())
}

/// The kit's page: the key (age's text and 24 words), where the copies are and where each
/// target's own secret is kept, the date, and the steps of a recovery.
fn kit_page(
    key: &RecoveryKey,
    setting: &RecoverySetting,
    targets: &[kluis_copies::CopyTarget],
    renewed: bool,
) -> String {
    let made = jiff::Timestamp::from_millisecond(setting.made_ms)
        .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default();
    let numbered: String = (key.to_words().expose().split(' ').enumerate())
        .map(|(i, w)| {
            format!(
                "{:>2}. {w:<10}{}",
                i + 1,
                if (i + 1) % 4 == 0 { "\n" } else { "  " }
            )
        })
        .collect();
    let mut page = format!(
        "KLUIS RECOVERY KIT — {made}\n\
         \n\
         Office key: {fingerprint} (made on {pc})\n\
         \n\
         The recovery key (keep it secret: it opens every catalog and encrypted backup):\n\
         \n  {text}\n\n\
         The same key as 24 words, to type from paper:\n\n{numbered}\n",
        fingerprint = setting.fingerprint,
        pc = setting.pc_name,
        text = key.to_text().expose(),
    );
    page.push_str("Where the copies are (each target's own secret is needed too):\n");
    if targets.is_empty() {
        page.push_str("  (no copy target yet: add one, or these copies do not exist)\n");
    }
    for target in targets {
        let secret = match target.place.keeps_secret() {
            true => "its secret is in this computer's keyring: put it in the office's password manager too",
            false => "no secret",
        };
        page.push_str(&format!(
            "  - {}: {} — {secret}\n",
            target.name,
            place_of(&target.place)
        ));
    }
    page.push_str(
        "\nOn a new computer, when this one is lost:\n\
         \x20 1. Install Kluis; add each copy target above (kluis copy-target add, or Settings), with its secret.\n\
         \x20 2. kluis recover list --target NAME --recovery-key KEYFILE.\n\
         \x20 3. kluis recover restore --target NAME --klant KLANT --to FOLDER, for each klant; then carry on.\n",
    );
    if renewed {
        page.push_str("\nThis kit replaces the one made before: keep this one. Copies written from now on open only with it.\n");
    }
    page
}

/// Where a target's copies are, in words for the kit.
fn place_of(place: &kluis_copies::Place) -> String {
    match place {
        kluis_copies::Place::Folder { path } => format!("the folder {path}"),
        kluis_copies::Place::S3(s3) => s3.describe(),
        kluis_copies::Place::Sftp(sftp) => sftp.describe(),
    }
}
