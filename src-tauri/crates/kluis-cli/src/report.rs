//! `kluis report`: a period's backups for auditors (kluis-profiles' report), as CSV or a
//! printable HTML page, to a file (owner-only, written whole or not at all) or stdout.

use std::io::Write;
use std::path::Path;

use jiff::tz::TimeZone;
use kluis_core::{Error, Result};

use crate::args::Cli;
use crate::from_args::{open_history, open_profiles};

/// How many days a report covers when --from is not given.
const DEFAULT_DAYS: i64 = 30;

pub fn run(
    cli: &Cli,
    (from, to): (Option<&str>, Option<&str>),
    profile: Option<&str>,
    html: bool,
    out: Option<&Path>,
) -> Result<()> {
    let zone = TimeZone::system();
    let to = match to {
        Some(text) => kluis_reporting::parse_day(text)?,
        None => jiff::Zoned::now().with_time_zone(zone.clone()).date(),
    };
    let from = match from {
        Some(text) => kluis_reporting::parse_day(text)?,
        None => to
            .checked_sub(jiff::Span::new().days(DEFAULT_DAYS - 1))
            .map_err(|e| Error::Config(format!("The period cannot be used ({e}).")))?,
    };
    let profiles = open_profiles(cli.profiles_file.as_ref())?;
    let history = open_history(cli.history_db.as_ref())?;
    let saved = profiles.list();
    let klant =
        (profile.map(|name| kluis_profiles::find_klant(&saved, &history, name))).transpose()?;
    let key = klant.map(|klant| klant.key());
    let report = kluis_reporting::report(&profiles, &history, from, to, key.as_ref(), zone)?;
    let bytes = match html {
        true => report.html().into_bytes(),
        false => report.csv(),
    };
    match out {
        Some(path) => {
            kluis_private::files::write_atomic(path, &bytes)
                .map_err(|e| Error::io(format!("write {}", path.display()), e))?;
            eprintln!(
                "kluis: {} backups from {from} to {to} written to {}.",
                report.rows.len(),
                path.display()
            );
        }
        None => std::io::stdout()
            .write_all(&bytes)
            .map_err(|e| Error::io("write the report", e))?,
    }
    Ok(())
}
