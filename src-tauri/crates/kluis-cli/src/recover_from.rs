//! What a recovery command is given: the recovery kit's key (a file, or
//! `KLUIS_RECOVERY_KEY`) and the copy target `--target` names, read with it (`--before` a
//! moment). Shared by `recover list|restore`, `recover adopt` and `recovery-kit --join`.

use std::path::Path;
use std::sync::Arc;

use kluis_core::{Error, Result, Secret};
use kluis_profiles::recover::{self, OnTarget};
use kluis_recovery::RecoveryKey;

use crate::args::{Cli, RecoverFrom};
use crate::from_args::open_profiles;

/// The recovery key: from the file given, else `KLUIS_RECOVERY_KEY` (its text or 24 words).
fn recovery_key(from: &RecoverFrom) -> Result<RecoveryKey> {
    key_from(from.recovery_key.as_deref())
}

/// The recovery key: from `file`, else `KLUIS_RECOVERY_KEY` (its text or 24 words).
pub(crate) fn key_from(file: Option<&Path>) -> Result<RecoveryKey> {
    let text = match file {
        Some(file) => return recover::key_in_file(file),
        None => std::env::var("KLUIS_RECOVERY_KEY").map_err(|_| {
            Error::Config(
                "Give the recovery kit's key: --recovery-key FILE, or KLUIS_RECOVERY_KEY (its AGE-SECRET-KEY-1… line or its 24 words).".into(),
            )
        })?,
    };
    let text = Secret::new(text);
    RecoveryKey::parse(text.expose())
}

/// Everything on the target `from` names, read with the kit's key (read once); the target and the key.
pub(crate) async fn load(
    cli: &Cli,
    from: &RecoverFrom,
) -> Result<(OnTarget, kluis_copies::CopyTarget, Arc<RecoveryKey>)> {
    let key = Arc::new(recovery_key(from)?);
    let targets = open_profiles(cli.profiles_file.as_ref())?
        .settings()
        .copy_targets;
    let target = crate::targets::named_in(&targets, &from.target)?;
    let target = crate::targets::with_secrets(vec![target]).await?.remove(0);
    let before = from.before.as_deref().map(moment_ms).transpose()?;
    let on_target = recover::read_target_before(&target, &key, before).await?;
    Ok((on_target, target, key))
}

/// `--before`'s day (its start, UTC) or moment, in Unix milliseconds.
pub(crate) fn moment_ms(text: &str) -> Result<i64> {
    let text = text.trim();
    // A moment first (its offset kept); a day only when that is all there is (jiff reads a
    // day out of a longer text, and the time would be lost).
    let moment = match text.parse::<jiff::Timestamp>() {
        Ok(moment) => Ok(moment),
        Err(e) if text.len() != 10 => Err(e),
        Err(_) => (text.parse::<jiff::civil::Date>())
            .and_then(|day| day.to_zoned(jiff::tz::TimeZone::UTC).map(|z| z.timestamp())),
    };
    moment.map(|t| t.as_millisecond()).map_err(|_| {
        Error::Config(format!(
            "--before {text:?} is not a day (2026-11-20) or a moment (2026-11-20T08:00:00Z)."
        ))
    })
}
