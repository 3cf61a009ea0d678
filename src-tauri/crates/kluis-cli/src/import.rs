//! `kluis profiles import FILE [--dry-run] [--map FIELD=COLUMN]… [--jobs N] [--json]`: an
//! office's klanten from a CSV file (kluis-import reads and previews it), each signed in
//! against its service — a few at a time — and saved only when it signs in: its secrets to the
//! keyring (or `KLUIS_SECRETS_DIR`), the profile to the profiles file. A row of a saved klant
//! updates it; importing a file again adds no duplicates. Nothing of the file is kept.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kluis_core::{Error, Result, Secret};
use kluis_import::{Field, Front, Importer, Known, Mapping, Outcome, Table};
use kluis_profiles::ProfileStore;

use crate::args::Cli;
use crate::secrets::secret_store;

/// How the import runs (the command's flags).
pub struct How<'a> {
    pub dry_run: bool,
    pub map: &'a [String],
    /// A password manager's export, for rows without a password.
    pub secrets: Option<&'a Path>,
    pub jobs: usize,
    pub json: bool,
}

pub async fn run(cli: &Cli, profiles: &ProfileStore, file: &Path, how: How<'_>) -> Result<()> {
    // Ctrl-C (or SIGTERM), caught from the start: no further klant is tried; those signing
    // in at that moment finish (each is saved whole or not at all).
    let stopping = Arc::new(AtomicBool::new(false));
    let signal = crate::stop::caught();
    let table = kluis_import::read_path(file)?;
    let mut mapping = Mapping::guess(&table.header);
    for change in how.map {
        remap(&mut mapping, &table, change)?;
    }
    say_mapping(&mapping, &table);
    let office_key = office_api_key(cli)?;
    let saved = kluis_import::SavedKlant::of(&profiles.list());
    let vault = match how.secrets {
        Some(path) => {
            let logins = kluis_import::vault::read(&kluis_import::bounded_read(path)?)?;
            eprintln!(
                "kluis: {} logins with a password in {}.",
                logins.len(),
                path.display()
            );
            logins
        }
        None => Vec::new(),
    };
    let known = Known {
        saved: &saved,
        base_url: cli.connection.base_url.as_deref(),
        has_api_key: office_key.is_some(),
        vault: &vault,
        front: Front::Cli,
    };
    let rows = kluis_import::preview(&table, &mapping, &known);
    let outcomes = match how.dry_run {
        true => kluis_import::run::dry_run(&rows),
        false => {
            let stopper = tokio::spawn({
                let stopping = stopping.clone();
                async move {
                    signal.await;
                    stopping.store(true, Ordering::SeqCst);
                }
            });
            let importer = Importer {
                profiles,
                secrets: secret_store(),
                office_key,
                ca_pem: cli.connection.ca_pem()?,
                keep_ca: true,
                known_cas: kluis_import::run::known_cas(&profiles.list()),
                at_once: how.jobs,
                stopping: stopping.clone(),
            };
            let outcomes = importer.run(&rows, |_, _| {}).await;
            stopper.abort();
            outcomes
        }
    };
    let cancelled = outcomes.iter().any(|o| o.outcome == Outcome::Cancelled);
    let left = outcomes.iter().filter(|o| !o.outcome.imported()).count();
    for said in &outcomes {
        match how.json {
            true => println!("{}", serde_json::to_string(said).expect("plain values")),
            false => println!(
                "line {:>4}  {:<14} {}{}{}",
                said.line,
                said.outcome.word(),
                said.name,
                (said.moved_from.as_deref())
                    .map(|from| format!(" — moved from {from} to {}", address_of(&rows, said.line)))
                    .unwrap_or_default(),
                said.why
                    .as_deref()
                    .map(|w| format!(" — {w}"))
                    .unwrap_or_default()
            ),
        }
    }
    let holding = (mapping
        .columns
        .contains_key(&Field::Password)
        .then_some(file))
    .into_iter()
    .chain(how.secrets);
    for holds in holding {
        eprintln!(
            "kluis: {} still holds passwords. Kluis keeps nothing of it: delete it when you no longer need it.",
            holds.display()
        );
    }
    if cancelled {
        return Err(Error::Cancelled);
    }
    match (left, how.dry_run) {
        (0, true) => {
            eprintln!("kluis: {} rows would be imported; nothing was stored (--dry-run).", rows.len());
            Ok(())
        }
        (0, false) => {
            eprintln!("kluis: {} klanten imported.", rows.len());
            Ok(())
        }
        (left, _) => Err(Error::Config(format!(
            "{left} of {} rows are not imported (see above); correct them and import the file again (the others are updated, never doubled).",
            rows.len()
        ))),
    }
}

/// The service address the row at `line` gives.
fn address_of(rows: &[kluis_import::Planned], line: u64) -> &str {
    (rows.iter().find(|r| r.line == line))
        .and_then(|r| r.base_url.as_deref())
        .unwrap_or("?")
}

/// `kluis profiles export [--out FILE]`: the saved klanten as CSV (no secret; see
/// `kluis_import::export`), on standard output or into a new owner-only file.
pub fn export(profiles: &ProfileStore, out: Option<&Path>) -> Result<()> {
    let saved = profiles.list();
    let text = kluis_import::export::profiles_csv(&saved);
    match out {
        None => print!("{text}"),
        Some(path) => {
            if path.exists() {
                return Err(Error::Config(format!(
                    "{} exists already; choose a new file (nothing is written over).",
                    path.display()
                )));
            }
            kluis_private::files::write_atomic(path, text.as_bytes())
                .map_err(|e| Error::io(format!("write {}", path.display()), e))?;
            eprintln!(
                "kluis: {} klanten written to {}.",
                saved.len(),
                path.display()
            );
        }
    }
    Ok(())
}

/// `--map FIELD=COLUMN` applied to `mapping`: the column by its header name or its number
/// from 1; empty, the field not read.
fn remap(mapping: &mut Mapping, table: &Table, change: &str) -> Result<()> {
    let fields = Field::ALL.map(|f| {
        serde_json::to_value(f)
            .expect("plain")
            .as_str()
            .unwrap_or_default()
            .to_string()
    });
    let (field, column) = change.split_once('=').ok_or_else(|| {
        Error::Config(format!(
            "Write --map as FIELD=COLUMN, e.g. --map name=Relatie (fields: {}).",
            fields.join(", ")
        ))
    })?;
    let field = (Field::ALL.iter().zip(&fields))
        .find(|(_, name)| name.as_str() == field.trim().to_lowercase())
        .map(|(f, _)| *f)
        .ok_or_else(|| {
            Error::Config(format!(
                "\"{}\" is not a field; the fields are {}.",
                field.trim(),
                fields.join(", ")
            ))
        })?;
    let column = column.trim();
    let index = match column {
        "" => None,
        _ => Some(
            (table.header.iter())
                .position(|h| h.eq_ignore_ascii_case(column))
                .or_else(|| {
                    column
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=table.header.len()).contains(n))
                        .map(|n| n - 1)
                })
                .ok_or_else(|| {
                    Error::Config(format!(
                        "The file has no column \"{column}\"; its columns are {}.",
                        table.header.join(", ")
                    ))
                })?,
        ),
    };
    mapping.set(field, index);
    Ok(())
}

/// Which column each field is read from, and which columns are left, on stderr.
fn say_mapping(mapping: &Mapping, table: &Table) {
    let read: Vec<String> = (mapping.columns.iter())
        .map(|(field, column)| {
            let field = serde_json::to_value(field).expect("plain");
            format!(
                "{} ← \"{}\"",
                field.as_str().unwrap_or_default(),
                table.header[*column]
            )
        })
        .collect();
    let unused: Vec<String> = (table.header.iter().enumerate())
        .filter(|(i, _)| !mapping.columns.values().any(|c| c == i))
        .map(|(_, h)| format!("\"{h}\""))
        .collect();
    eprintln!("kluis: reading {}", read.join(", "));
    if !unused.is_empty() {
        eprintln!(
            "kluis: not read: {} (change with --map FIELD=COLUMN)",
            unused.join(", ")
        );
    }
}

/// The office's api key for rows without one: `KLUIS_API_KEY` only (an argument is readable
/// by other users in the process list).
fn office_api_key(cli: &Cli) -> Result<Option<Secret>> {
    let given = cli.connection.api_key.as_ref();
    if given.is_some() && std::env::var("KLUIS_API_KEY").ok().as_ref() != given {
        return Err(Error::Config(
            "A saved secret is never taken from an argument (--api-key): other users of this computer can read those. Set KLUIS_API_KEY.".into(),
        ));
    }
    Ok(given.map(|k| Secret::new(k.clone())))
}
