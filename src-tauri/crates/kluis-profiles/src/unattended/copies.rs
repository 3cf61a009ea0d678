//! After a klant's save, its backups off this computer (see the parent's steps): the copies each
//! copy target lacks ([`copy_missing`], [`copy_pending`] for every klant at once), each
//! target's own retention rule and locks ([`prune_targets`]), and then the recovery catalogs
//! that name them ([`write_catalogs`]).

use std::sync::Arc;

use kluis_copies::CopyTarget;
use kluis_core::download::bandwidth::Bandwidth;
use kluis_core::{Error, History, KlantKey, Result};

use super::AfterSave;
use crate::{take_turn, Profile, SecretStore};

/// The target named when a step failed for every copy target at once (an alert says it in
/// the window's language).
pub const EVERY_COPY_TARGET: &str = "every copy target";

/// What the recovery catalogs are written with (see [`crate::catalogs`]).
#[derive(Clone)]
pub struct CatalogsAfter {
    pub recovery: crate::settings::RecoverySetting,
    pub profiles: Vec<Profile>,
    /// Where the klanten's passphrases are (sealed into the catalogs for the kit to open).
    pub secrets: Arc<dyn SecretStore>,
    /// What was last written to each target (beside the history).
    pub state: std::path::PathBuf,
}

/// Each of `targets`' recovery catalog written (see [`crate::catalogs`]), on a blocking
/// thread: one step per target, for the host to tell.
pub async fn write_catalogs(
    history: Arc<History>,
    targets: Vec<CopyTarget>,
    catalogs: CatalogsAfter,
) -> Vec<AfterSave> {
    if targets.is_empty() {
        return Vec::new();
    }
    let written = tokio::task::spawn_blocking(move || {
        let secrets = catalogs.secrets.clone();
        let passphrase = move |p: &Profile| {
            secrets
                .get(&p.id, crate::SecretKind::EncryptionPassphrase)
                .ok()
                .flatten()
        };
        let vouch = match catalogs
            .secrets
            .get(crate::APP, crate::SecretKind::RecoveryVouch)
        {
            Ok(text) => text.and_then(|t| kluis_recovery::VouchKey::parse(t.expose()).ok()),
            Err(e) => {
                let said = e.into_core().to_string();
                return (targets.iter())
                    .map(|t| (t.name.clone(), Err(Error::Config(said.clone()))))
                    .collect();
            }
        };
        let of = crate::catalogs::CatalogsOf {
            history: &history,
            profiles: &catalogs.profiles,
            recovery: &catalogs.recovery,
            vouch: vouch.as_ref(),
            passphrase: &passphrase,
            state: &catalogs.state,
        };
        crate::catalogs::write_catalogs(&of, &targets)
    })
    .await;
    match written {
        Ok(written) => (written.into_iter())
            .map(|(target, outcome)| match outcome {
                Ok(w) => AfterSave::CatalogWritten {
                    target,
                    number: w.number,
                    records: w.records,
                    other_kit: w.other_kit,
                },
                Err(error) => AfterSave::CatalogFailed { target, error },
            })
            .collect(),
        Err(e) => vec![AfterSave::CatalogFailed {
            target: EVERY_COPY_TARGET.into(),
            error: Error::Io(format!("Writing the recovery catalogs stopped ({e}).")),
        }],
    }
}

/// The copies klant `key`'s kept backups lack on `targets`, made (its caller holds the klant's
/// turn): one step per copy tried, for the host to tell.
pub async fn copy_missing(
    history: Arc<History>,
    key: &KlantKey,
    targets: Vec<CopyTarget>,
    pace: Option<Arc<Bandwidth>>,
) -> Vec<AfterSave> {
    if targets.is_empty() {
        return Vec::new();
    }
    let tried = kluis_copies::copy_missing_in_background(history, Some(key.clone()), targets, pace);
    match tried.await {
        Ok(copied) => (copied.into_iter())
            .map(|copied| match copied.outcome {
                Ok(location) => AfterSave::Copied {
                    target: copied.target.name,
                    location,
                },
                Err(error) => AfterSave::CopyFailed {
                    target: copied.target.name,
                    error,
                },
            })
            .collect(),
        Err(error) => vec![AfterSave::CopyFailed {
            target: EVERY_COPY_TARGET.into(),
            error,
        }],
    }
}

/// One klant's pending copies (see [`copy_pending`]): those made and those that failed, or
/// `None` while a backup of it runs elsewhere (its end makes them).
pub struct PendingCopies {
    pub klant: KlantKey,
    pub copied: Option<Vec<kluis_copies::Copied>>,
}

/// Which of the office's copy targets `all` each klant's backups go to: a saved profile's
/// choice (of `saved`), every one for a klant backed up with flags.
pub fn targets_by_klant(
    saved: Vec<Profile>,
    all: Vec<CopyTarget>,
) -> impl Fn(&KlantKey) -> Vec<CopyTarget> {
    move |klant| match saved.iter().find(|p| &p.key() == klant) {
        Some(profile) => profile.copy_targets(&all),
        None => all.clone(),
    }
}

/// The copies kept backups lack (only `klant`'s when given), made klant by klant under each
/// klant's turn, as after a backup — each klant's to the targets `targets_for` gives it (a
/// saved profile's choice, or every one): `kluis copy --pending`, and the app at start.
pub async fn copy_pending(
    history: Arc<History>,
    klant: Option<KlantKey>,
    targets_for: impl Fn(&KlantKey) -> Vec<CopyTarget>,
    pace: Option<Arc<Bandwidth>>,
) -> Result<Vec<PendingCopies>> {
    let klanten: Vec<KlantKey> = match klant {
        Some(klant) => vec![klant],
        None => (history.kept(None)?.into_iter())
            .map(|entry| entry.profile)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    let mut pending = Vec::new();
    for klant in klanten {
        let Some(_turn) = take_turn(&history, &klant)? else {
            pending.push(PendingCopies {
                klant,
                copied: None,
            });
            continue;
        };
        let targets = targets_for(&klant);
        let copied = kluis_copies::copy_missing_in_background(
            history.clone(),
            Some(klant.clone()),
            targets,
            pace.clone(),
        );
        let copied = Some(copied.await?);
        pending.push(PendingCopies { klant, copied });
    }
    Ok(pending)
}

/// Each of `targets`' own rules, where it has one, applied to klant `key`'s copies on it (its
/// caller holds the klant's turn): one step per target, for the host to tell.
pub async fn prune_targets(
    history: Arc<History>,
    key: &KlantKey,
    targets: &[CopyTarget],
) -> Vec<AfterSave> {
    let mut steps = Vec::new();
    for target in targets {
        let Some(pruned) = kluis_copies::prune_target(history.clone(), target, key).await else {
            continue;
        };
        let name = target.name.clone();
        steps.push(match pruned {
            Ok(pruned) => AfterSave::TargetPruned {
                target: name,
                rule: target.keep.clone().unwrap_or_default(),
                pruned,
            },
            Err(error) => AfterSave::TargetPruneFailed {
                target: name,
                error,
            },
        });
    }
    steps
}
