//! `kluis profiles import FILE [--dry-run] [--map FIELD=COLUMN]… [--jobs N] [--json]`: an
//! office's klanten from a CSV file (kluis-import reads and previews it), each signed in
//! against its service — a few at a time — and saved only when it signs in: its secrets to the
//! keyring (or `KLUIS_SECRETS_DIR`), the profile to the profiles file. A row of a saved klant
//! updates it; importing a file again adds no duplicates. Nothing of the file is kept.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use kluis_core::plan::Plan;
use kluis_core::{Code, Error, Result, Secret, ServiceClient, Session};
use kluis_import::{Action, Field, Known, Mapping, Planned, Table};
use kluis_profiles::{Profile, ProfileError, ProfileStore, SecretKind, SecretStore};
use serde::Serialize;

use crate::args::Cli;
use crate::profiles::{on_store, secret, secret_store};

/// How the import runs (the command's flags).
pub struct How<'a> {
    pub dry_run: bool,
    pub map: &'a [String],
    /// A password manager's export, for rows without a password.
    pub secrets: Option<&'a Path>,
    pub jobs: usize,
    pub json: bool,
}

/// How a row ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    /// `--dry-run`: would be added / updated.
    WouldAdd,
    WouldUpdate,
    Added,
    Updated,
    /// The service refused the username, password or api key: nothing saved.
    WrongPassword,
    /// The service could not be reached: nothing saved; import again later.
    Unreachable,
    /// Another failure (see its message): nothing saved.
    Failed,
    /// Not imported: the row's problems.
    Skipped,
    /// Not tried: the import was stopped (Ctrl-C) before its turn.
    Cancelled,
}

/// A row's line of the result.
#[derive(Serialize)]
struct Said<'a> {
    line: u64,
    name: &'a str,
    outcome: Outcome,
    /// Why, for a row not imported.
    why: Option<String>,
}

pub async fn run(cli: &Cli, profiles: &ProfileStore, file: &Path, how: How<'_>) -> Result<()> {
    // Ctrl-C (or SIGTERM), caught from the start: no further klant is tried; those signing
    // in at that moment finish (each is saved whole or not at all).
    let stopping = Arc::new(AtomicBool::new(false));
    let signal = crate::stop::caught();
    let bytes =
        std::fs::read(file).map_err(|e| Error::io(format!("read {}", file.display()), e))?;
    let table = kluis_import::read_file(&bytes)?;
    let mut mapping = Mapping::guess(&table.header);
    for change in how.map {
        remap(&mut mapping, &table, change)?;
    }
    say_mapping(&mapping, &table);
    let office_key = office_api_key(cli)?;
    let names: Vec<String> = profiles.list().into_iter().map(|p| p.name).collect();
    let vault = match how.secrets {
        Some(path) => {
            let bytes = std::fs::read(path)
                .map_err(|e| Error::io(format!("read {}", path.display()), e))?;
            let logins = kluis_import::vault::read(&bytes)?;
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
        names: &names,
        base_url: cli.connection.base_url.as_deref(),
        has_api_key: office_key.is_some(),
        vault: &vault,
    };
    let rows = kluis_import::preview(&table, &mapping, &known);
    let outcomes: Vec<(Outcome, Option<String>)> = match how.dry_run {
        true => rows.iter().map(would).collect(),
        false => {
            let ca_pem = cli.connection.ca_pem()?;
            let store = secret_store();
            let stopper = tokio::spawn({
                let stopping = stopping.clone();
                async move {
                    signal.await;
                    stopping.store(true, Ordering::SeqCst);
                }
            });
            let work = Work {
                profiles,
                store: &store,
                office_key: office_key.as_ref(),
                ca_pem: ca_pem.as_deref(),
                stopping: &stopping,
            };
            // Rows in their order; `buffered` signs in `jobs` at a time.
            let outcomes = stream::iter(rows.iter().map(|row| work.import(row)))
                .buffered(how.jobs)
                .collect()
                .await;
            stopper.abort();
            outcomes
        }
    };
    let cancelled = outcomes.iter().any(|(o, _)| *o == Outcome::Cancelled);
    let mut left = 0;
    for (row, (outcome, why)) in rows.iter().zip(&outcomes) {
        let done = matches!(
            outcome,
            Outcome::Added | Outcome::Updated | Outcome::WouldAdd | Outcome::WouldUpdate
        );
        left += usize::from(!done);
        let said = Said {
            line: row.line,
            name: &row.name,
            outcome: *outcome,
            why: why.clone(),
        };
        match how.json {
            true => println!("{}", serde_json::to_string(&said).expect("plain values")),
            false => println!(
                "line {:>4}  {:<14} {}{}",
                said.line,
                serde_json::to_value(said.outcome)
                    .expect("plain")
                    .as_str()
                    .unwrap_or_default(),
                said.name,
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

/// `kluis profiles export [--out FILE]`: the saved klanten as CSV (no secret; see
/// `kluis_import::export`), on standard output or into a new owner-only file.
pub fn export(profiles: &ProfileStore, out: Option<&Path>) -> Result<()> {
    let saved = profiles.list();
    let klanten: Vec<kluis_import::export::Klant> = (saved.iter())
        .map(|p| kluis_import::export::Klant {
            name: &p.name,
            username: &p.username,
            base_url: &p.base_url,
            schedule: p.plan.as_ref().map(|plan| &plan.schedule),
            retention: p.retention.as_ref(),
            tags: &p.tags,
        })
        .collect();
    let text = kluis_import::export::csv(&klanten);
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

/// What `--dry-run` says of `row`.
fn would(row: &Planned) -> (Outcome, Option<String>) {
    match row.action {
        Action::Add => (Outcome::WouldAdd, None),
        Action::Update => (Outcome::WouldUpdate, None),
        Action::Skip => (Outcome::Skipped, Some(row.problems.join("; "))),
    }
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

/// What importing a row needs.
struct Work<'a> {
    profiles: &'a ProfileStore,
    store: &'a Arc<dyn SecretStore>,
    office_key: Option<&'a Secret>,
    ca_pem: Option<&'a str>,
    /// Set by Ctrl-C: rows not begun are not tried.
    stopping: &'a AtomicBool,
}

impl Work<'_> {
    /// `row` imported: signed in and saved, or why not.
    async fn import(&self, row: &Planned) -> (Outcome, Option<String>) {
        if row.action != Action::Skip && self.stopping.load(Ordering::SeqCst) {
            return (
                Outcome::Cancelled,
                Some("not tried: the import was stopped".into()),
            );
        }
        let done = match row.action {
            Action::Skip => return (Outcome::Skipped, Some(row.problems.join("; "))),
            Action::Add => self.add(row).await.map(|()| Outcome::Added),
            Action::Update => self.update(row).await.map(|()| Outcome::Updated),
        };
        match done {
            Ok(outcome) => (outcome, None),
            Err(e) => {
                let outcome = match e.code() {
                    Code::AuthFailed => Outcome::WrongPassword,
                    Code::Network | Code::Certificate | Code::ServiceError => Outcome::Unreachable,
                    _ => Outcome::Failed,
                };
                (outcome, Some(e.to_string()))
            }
        }
    }

    /// The settings `row` sets, on `profile`.
    fn set(&self, profile: &mut Profile, row: &Planned) -> Result<()> {
        profile.username = row.username.clone();
        if let Some(base_url) = &row.base_url {
            profile.base_url = base_url.clone();
        }
        if let Some(schedule) = &row.schedule {
            profile.plan = Some(Plan::new(schedule.clone(), jiff::Timestamp::now())?);
        }
        if let Some(retention) = &row.retention {
            profile.retention = retention.clone();
        }
        if !row.tags.is_empty() {
            profile.tags = row.tags.clone();
        }
        Ok(())
    }

    /// Signs `profile` in with `api_key` and `password` (only a klant that signs in is
    /// saved), then stores them as its secrets.
    async fn sign_in_and_store(
        &self,
        profile: &Profile,
        api_key: Secret,
        password: Secret,
    ) -> Result<()> {
        let config = profile.service_config(api_key.clone(), password.clone(), self.ca_pem)?;
        Session::new(ServiceClient::new(config)?).sign_in().await?;
        let id = profile.id.clone();
        on_store(self.store, move |store| {
            store.set(&id, SecretKind::ApiKey, &api_key)?;
            store.set(&id, SecretKind::Password, &password)
        })
        .await
    }

    /// A new klant: signed in, its secrets stored, then the profile saved (its secrets
    /// removed again when it cannot be: nothing half-stored).
    async fn add(&self, row: &Planned) -> Result<()> {
        let mut profile = Profile::new(
            &row.name,
            row.base_url.as_deref().unwrap_or_default(),
            &row.username,
        );
        profile.extra_ca_pem = self.ca_pem.map(str::to_string);
        self.set(&mut profile, row)?;
        let api_key = row
            .api_key
            .as_ref()
            .or(self.office_key)
            .cloned()
            .ok_or_else(|| Error::Config("no api key".into()))?;
        let password = row
            .password
            .clone()
            .ok_or_else(|| Error::Config("no password".into()))?;
        self.sign_in_and_store(&profile, api_key, password).await?;
        if let Err(e) = self.profiles.put(profile.clone()) {
            let id = profile.id.clone();
            let _ = on_store(self.store, move |store| {
                store.delete(&id, SecretKind::ApiKey)?;
                store.delete(&id, SecretKind::Password)
            })
            .await;
            return Err(e.into_core());
        }
        Ok(())
    }

    /// A saved klant: its settings set; with a password in the row, signed in with the new
    /// secrets first and those stored (a username changes only with its password).
    async fn update(&self, row: &Planned) -> Result<()> {
        let mut profile = self
            .profiles
            .find(&row.name)
            .map_err(ProfileError::into_core)?;
        let new_login =
            profile.username != row.username || row.password.is_some() || row.api_key.is_some();
        self.set(&mut profile, row)?;
        if new_login {
            let password = row.password.clone().ok_or_else(|| {
                Error::Config(format!(
                    "a new username ({}) needs its password in the file",
                    row.username
                ))
            })?;
            let saved_key = secret(self.store, &profile.id, SecretKind::ApiKey).await?;
            let api_key = (row
                .api_key
                .clone()
                .or(saved_key)
                .or(self.office_key.cloned()))
            .ok_or_else(|| Error::Config("no api key".into()))?;
            self.sign_in_and_store(&profile, api_key, password).await?;
        }
        self.profiles.put(profile).map_err(ProfileError::into_core)
    }
}
