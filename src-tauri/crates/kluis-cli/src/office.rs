//! `kluis office join|status|revoke|leave`: this PC in an office of several PCs around the
//! office hub (kluis-office), and [`joined`], the office a run's unattended backups ask (see
//! kluis-profiles' `office`). The keys are read from the environment or standard input, never
//! from arguments, and go to the keyring (or `KLUIS_SECRETS_DIR`).

use std::io::BufRead;
use std::sync::Arc;

use kluis_core::{Error, History, Result, Secret};
use kluis_office::{Hub, OfficeError};
use kluis_profiles::office::{JoinRequest, Joined};
use kluis_profiles::{Office, ProfileError, ProfileStore, SecretKind, Settings, APP};

use crate::args::{Cli, OfficeCommand};
use crate::from_args::open_profiles;
use crate::secrets::{on_store, secret_line, secret_store};

/// The office this PC joined, ready for a run's backups; none when it joined none. One whose
/// keys cannot be read is said, and the run goes on alone (the hub is never a reason to miss
/// a backup).
pub async fn joined(settings: &Settings) -> Option<Office> {
    settings.office.as_ref()?;
    let tell: kluis_profiles::office::TellHub = Arc::new(|e: &OfficeError| eprintln!("kluis: {e}"));
    let settings = settings.clone();
    match on_store(&secret_store(), move |store| {
        Office::of(&settings, store, tell)
    })
    .await
    {
        Ok(office) => office,
        Err(e) => {
            eprintln!("kluis: {e} Backups go on without the office hub.");
            None
        }
    }
}

/// This PC's report of its klanten sent to `office` (if it joined one): after a batch, and
/// from `run-due` every time the timer runs it (every 15 minutes), so the office hears at least
/// hourly. What cannot be sent is said once; it changes nothing else.
pub async fn send_report(office: Option<&Office>, profiles: &ProfileStore, history: &History) {
    let Some(office) = office else {
        return;
    };
    if let Err(e) = office.send_report(profiles, history).await {
        eprintln!("kluis: the office report could not be made: {e}");
    }
}

pub async fn run(cli: &Cli, command: &OfficeCommand) -> Result<()> {
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    match command {
        OfficeCommand::Join {
            url,
            name,
            code,
            hub_ca,
            stdin,
        } => {
            let hub_ca_pem = match hub_ca {
                Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
                    Error::Config(format!(
                        "Could not read the hub's CA certificate {}: {e}.",
                        path.display()
                    ))
                })?),
                None => None,
            };
            let done = match (code, url) {
                (true, _) => {
                    let code = join_code(*stdin)?;
                    let joining =
                        kluis_profiles::office::join_with_code(&profiles, secret_store(), &code);
                    joining.await.map_err(ProfileError::into_core)?
                }
                (false, Some(url)) => {
                    let name = name.clone().unwrap_or_default();
                    join(&profiles, url, &name, hub_ca_pem, *stdin).await?
                }
                (false, None) => {
                    return Err(Error::Config("Give the hub's URL, or --code.".into()))
                }
            };
            said_joined(&done);
            // At once, not at the next run: the office view shows this PC, and the next PC's
            // join checks its office key against this one's report.
            let history = crate::from_args::open_history(cli.history_db.as_ref())?;
            let office = joined(&profiles.settings()).await;
            send_report(office.as_ref(), &profiles, &history).await;
            Ok(())
        }
        OfficeCommand::Status { json } => status(&profiles, *json).await,
        OfficeCommand::Invite { name } => {
            let code = kluis_profiles::office::invite(&profiles, secret_store(), name).await;
            let code = code.map_err(ProfileError::into_core)?;
            eprintln!("kluis: the join code for {name} (shown once; it works once, for a day — paste it on {name}: kluis office join --code, or Settings → Office):");
            println!("{}", code.text().expose());
            Ok(())
        }
        OfficeCommand::Revoke { name } => {
            let hub = hub(&profiles.settings()).await?;
            match hub.revoke(name).await.map_err(core)? {
                true => eprintln!("kluis: {name}'s key works no more at the office hub."),
                false => {
                    return Err(Error::Config(format!(
                        "The office has no PC named \"{name}\" with a working key."
                    )))
                }
            }
            Ok(())
        }
        OfficeCommand::Leave => {
            let left = kluis_profiles::office::leave(&profiles, secret_store()).await;
            let (revoked, was_in) = left.map_err(ProfileError::into_core)?;
            if !was_in {
                return Err(not_joined());
            }
            match revoked {
                Ok(()) => eprintln!("kluis: this PC left the office (its key revoked at the hub); its plans run alone."),
                Err(why) => eprintln!("kluis: this PC left the office; its plans run alone. Its key could not be revoked at the hub ({why}): revoke it from another PC (kluis office revoke NAME)."),
            }
            Ok(())
        }
    }
}

/// `kluis office join URL` (see kluis-profiles' `office::join`).
async fn join(
    profiles: &ProfileStore,
    url: &str,
    name: &str,
    hub_ca_pem: Option<String>,
    stdin: bool,
) -> Result<Joined> {
    let (pc_key, office_key) = keys(stdin)?;
    let request = JoinRequest {
        hub: url.to_string(),
        pc: name.to_string(),
        pc_key,
        office_key,
        hub_ca_pem,
    };
    kluis_profiles::office::join(profiles, secret_store(), request)
        .await
        .map_err(ProfileError::into_core)
}

/// A join said on stderr; the office key, when this PC made it, printed once on stdout.
fn said_joined(joined: &Joined) {
    eprintln!(
        "kluis: this PC ({}) joined the office at {}; its PCs: {}.",
        joined.membership.pc,
        joined.membership.hub,
        joined.pcs.join(", ")
    );
    if let Some(key) = &joined.made_key {
        eprintln!("kluis: this PC made the office key. The office's next PCs join with a join code (kluis office invite NAME), which carries it; keep it also where the office keeps its passwords — the hub never has it:");
        println!("{}", key.text().expose());
    }
}

/// The join code: standard input's first line with `stdin`, else `KLUIS_OFFICE_JOIN_CODE`.
fn join_code(stdin: bool) -> Result<Secret> {
    const MISSING: &str =
        "Give the join code in KLUIS_OFFICE_JOIN_CODE, or on standard input with --stdin.";
    if stdin {
        return secret_line(&mut std::io::stdin().lock().lines(), MISSING);
    }
    let code = std::env::var("KLUIS_OFFICE_JOIN_CODE")
        .ok()
        .filter(|v| !v.trim().is_empty());
    code.map(Secret::new)
        .ok_or_else(|| Error::Config(MISSING.into()))
}

/// The PC key and the office key (if given): with `stdin`, its first two lines; else
/// `KLUIS_OFFICE_PC_KEY` and `KLUIS_OFFICE_KEY`.
fn keys(stdin: bool) -> Result<(Secret, Option<Secret>)> {
    const MISSING: &str = "Give this PC's key (kluis-relay tenant pc-key add makes it) in KLUIS_OFFICE_PC_KEY, or on standard input with --stdin.";
    if stdin {
        let mut lines = std::io::stdin().lock().lines();
        let pc_key = secret_line(&mut lines, MISSING)?;
        let office_key = secret_line(&mut lines, "").ok();
        return Ok((pc_key, office_key));
    }
    let variable = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let pc_key = variable("KLUIS_OFFICE_PC_KEY").ok_or_else(|| Error::Config(MISSING.into()))?;
    Ok((
        Secret::new(pc_key.trim()),
        variable("KLUIS_OFFICE_KEY").map(Secret::new),
    ))
}

/// `kluis office status`: the office view — the office's PCs (when each was last heard of),
/// then every klant of every PC, those needing attention first with why; `--json` one object
/// (`all_safe`, `pcs`, `klanten` with their `flags`).
async fn status(profiles: &ProfileStore, json: bool) -> Result<()> {
    let settings = profiles.settings();
    let Some(membership) = settings.office.clone() else {
        return Err(not_joined());
    };
    let office = joined(&settings).await.ok_or_else(|| {
        Error::Config(
            "This PC's office keys cannot be read: join again (kluis office join).".into(),
        )
    })?;
    let view = office.view().await.map_err(core)?;
    if json {
        let line = serde_json::json!({
            "hub": membership.hub, "pc": membership.pc, "all_safe": view.all_safe(),
            "pcs": view.pcs, "klanten": view.klanten,
        });
        println!("{line}");
        return Ok(());
    }
    crate::display::office_view(&membership, &view);
    Ok(())
}

/// The hub of the office this PC joined, with its key from the keyring.
async fn hub(settings: &Settings) -> Result<Hub> {
    let Some(membership) = settings.office.clone() else {
        return Err(not_joined());
    };
    let key = on_store(&secret_store(), |store| {
        store.get(APP, SecretKind::OfficePcKey)
    })
    .await?;
    let key = key.ok_or_else(|| {
        Error::Config(
            "This PC's office key is not in the keyring: join again (kluis office join).".into(),
        )
    })?;
    Hub::new(&membership, key).map_err(core)
}

fn not_joined() -> Error {
    Error::Config(
        "This PC is in no office: join one with `kluis office join URL --name PC-NAME`.".into(),
    )
}

/// The CLI's error for an office hub's: out of reach is the network's (worth trying again),
/// the rest a setting to change.
fn core(e: OfficeError) -> Error {
    match e {
        OfficeError::Unreachable { .. } => Error::Network(e.to_string()),
        other => Error::Config(other.to_string()),
    }
}
