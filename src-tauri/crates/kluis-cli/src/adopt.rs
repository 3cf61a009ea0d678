//! `kluis recover adopt`: this computer carries on for a lost one (kluis-profiles'
//! `recover::adopt`), said on the command line, with what is left to do; then its catalogs
//! are written under the kit.

use kluis_core::Result;
use kluis_profiles::recover::adopt::{adopt, AdoptAsked};
use kluis_profiles::recover::shown;

use crate::args::{Cli, RecoverFrom};
use crate::from_args::{open_history, open_profiles};
use crate::secrets::secret_store;

/// `kluis recover adopt --target NAME [--computer NAME] [--pc-name NAME] [--replace-kit]`.
pub async fn run(cli: &Cli, from: &RecoverFrom, asked: AdoptAsked) -> Result<()> {
    let (on_target, target, key) = crate::recover_from::load(cli, from).await?;
    let profiles = std::sync::Arc::new(open_profiles(cli.profiles_file.as_ref())?);
    let history = open_history(cli.history_db.as_ref())?;
    let adopted = adopt(
        on_target,
        &target,
        key,
        &profiles,
        &history,
        secret_store(),
        asked,
    )
    .await?;
    eprintln!(
        "kluis: carrying on for {} (its klanten and their copies on \"{}\").",
        shown(&adopted.lost.name),
        target.name
    );
    for note in &adopted.notes {
        eprintln!("kluis: {note}");
    }
    for (profile, copies) in &adopted.taken {
        eprintln!(
            "kluis: \"{}\" — service {}, username {}: {copies} {} with their copy on \"{}\".",
            shown(&profile.name),
            shown(&profile.base_url),
            shown(&profile.username),
            if *copies == 1 { "backup" } else { "backups" },
            target.name
        );
    }
    eprintln!(
        "kluis: {} klanten of {} taken over, {} copies added to this computer's history; this computer now writes the catalogs for the kit ({}).",
        adopted.taken.len(),
        shown(&adopted.lost.name),
        adopted.added,
        adopted.fingerprint,
    );
    if !adopted.taken.is_empty() {
        eprintln!(
            "kluis: what is left to do here, before their next backup:\n\
             \x20 1. Check each service address above: one that is not the klant's gets no password\n\
             \x20    (`kluis profiles remove NAME`).\n\
             \x20 2. Give each klant its password and api key: `kluis profiles export --out klanten.csv`,\n\
             \x20    add a password column (the api key too, or set KLUIS_API_KEY), then\n\
             \x20    `kluis profiles import klanten.csv` (or with `--secrets EXPORT`, the password manager's).\n\
             \x20 3. Start the nightly runs: `kluis schedule install --out FOLDER` (or choose where backups\n\
             \x20    are saved in the app, and keep it running).\n\
             \x20 4. Outside monitors and e-mail are not carried over: `kluis plan NAME --ping URL`,\n\
             \x20    `kluis mail set …`.\n\
             \x20 5. Delete the key file, and put the kit back in the safe."
        );
    }
    crate::recovery::write_catalogs_now(cli, profiles.settings().copy_targets).await?;
    Ok(())
}
