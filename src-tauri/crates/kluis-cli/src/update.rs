//! `kluis update check` and `kluis update download`: whether the publisher (or the office's
//! own update server) has a newer Kluis, said in one line, and the build for this computer
//! fetched and verified with the publisher's key (kluis-update's). IT's switch that turns
//! updates off on this computer is obeyed before any request; a Kluis built without an update
//! server (the .deb: apt updates it) says so.
//!
//! The check's one line goes to standard output; with `--json` only the JSON object does (a
//! script reads it), never a line of prose beside it.

use std::path::Path;

use kluis_core::{Error, Result};
use kluis_update::{policy, Found, Publisher, Release, UpdateError};
use serde_json::json;

use crate::args::{Cli, UpdateCommand};

pub async fn run(cli: &Cli, command: &UpdateCommand) -> Result<()> {
    let json = matches!(command, UpdateCommand::Check { json: true });
    let Some(publisher) = following(json)? else {
        return Ok(());
    };
    let ca = cli.connection.ca_pem()?;
    let history = crate::from_args::history_path(cli.history_db.as_ref())?;
    let found = kluis_update::look(&publisher, ca.as_deref(), &policy::stamp_beside(&history))
        .await
        .map_err(into_core)?;
    let current = kluis_update::current();
    match command {
        UpdateCommand::Check { json: true } => println!("{}", as_json(&current, &found)),
        UpdateCommand::Check { json: false } => println!("{}", said(&current, &found)),
        UpdateCommand::Download { to } => match found {
            Found::Newer(release) => download(&publisher, &release, to.as_deref(), ca).await?,
            Found::UpToDate { .. } => println!("{}", said(&current, &found)),
        },
    }
    Ok(())
}

/// The publisher this Kluis follows; none (said in a line, or as JSON) when IT turned updates
/// off here or the build has no update server.
fn following(json: bool) -> Result<Option<Publisher>> {
    let (code, line) = match policy::disabled() {
        Some(why) => (
            "disabled",
            format!("Updates are turned off on this computer (by {why}); your IT updates Kluis."),
        ),
        None => match Publisher::configured().map_err(into_core)? {
            Some(publisher) => return Ok(Some(publisher)),
            None => ("not_configured", UpdateError::NotConfigured.to_string()),
        },
    };
    match json {
        true => println!(
            "{}",
            json!({"current": kluis_update::current().to_string(), "install": install(), "update": code, "message": line})
        ),
        false => println!("{line}"),
    }
    Ok(None)
}

/// How this Kluis was installed (which build updates it): `setup`, `msi`, `machine_msi`,
/// `deb` — for IT's scripts.
fn install() -> &'static str {
    kluis_update::InstallKind::of_this_program().word()
}

fn said(current: &semver::Version, found: &Found) -> String {
    match found {
        Found::Newer(release) => format!(
            "Kluis {} is available (this is {current}): `kluis update download` fetches it.",
            release.version
        ),
        Found::UpToDate {
            offered_older: Some(older),
        } => format!(
            "Kluis {current} is up to date (the update server offers the older {older}: ignored)."
        ),
        Found::UpToDate {
            offered_older: None,
        } => format!("Kluis {current} is up to date."),
    }
}

fn as_json(current: &semver::Version, found: &Found) -> serde_json::Value {
    match found {
        Found::Newer(release) => json!({
            "current": current.to_string(),
            "install": install(),
            "update": "available",
            "version": release.version.to_string(),
            "notes": release.notes,
            "url": release.url.as_str(),
        }),
        Found::UpToDate { offered_older } => json!({
            "current": current.to_string(),
            "install": install(),
            "update": "up_to_date",
            "offered_older": offered_older.as_ref().map(ToString::to_string),
        }),
    }
}

/// The release's build saved, verified, in `to` (default: the user's Downloads folder).
async fn download(
    publisher: &Publisher,
    release: &Release,
    to: Option<&Path>,
    ca: Option<String>,
) -> Result<()> {
    let folder = match to {
        Some(to) => to.to_path_buf(),
        None => directories::UserDirs::new()
            .and_then(|dirs| dirs.download_dir().map(Path::to_path_buf))
            .ok_or_else(|| {
                Error::Config("This user has no Downloads folder: give one with --to.".into())
            })?,
    };
    let file = kluis_update::download(publisher, release, &folder, ca.as_deref())
        .await
        .map_err(into_core)?;
    println!(
        "Kluis {} was downloaded and its signature verified: {}",
        release.version,
        file.display()
    );
    Ok(())
}

/// An update's error as the CLI's (its exit code: a setting is 2, a refused or damaged
/// download 6, anything else 1), its words kept.
fn into_core(error: UpdateError) -> Error {
    let message = error.to_string();
    match error {
        UpdateError::Config(_) | UpdateError::NotConfigured => Error::Config(message),
        UpdateError::OtherKey { .. }
        | UpdateError::Tampered { .. }
        | UpdateError::WrongVersion { .. }
        | UpdateError::WrongBuild { .. }
        | UpdateError::TooLarge { .. } => Error::DownloadFailed(message),
        UpdateError::Unreachable(_) => Error::Network(message),
        UpdateError::NotAManifest(_) => Error::BadResponse(message),
        UpdateError::Io(_) => Error::Io(message),
    }
}
