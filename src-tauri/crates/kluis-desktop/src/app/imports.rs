//! [`Imports`]: *Import klanten…* — the office's list of klanten (a spreadsheet's CSV or
//! workbook, read by kluis-import) picked in the native dialog and previewed: each row added,
//! updated or skipped and why, which column holds what (changeable), the service address and
//! api key for rows without one, passwords from a password manager's export. Then imported:
//! each klant signed in, a few at a time, its outcome sent to the page as it ends, cancellable;
//! only the klanten that sign in are saved (kluis-import's `Importer`, the CLI's too).
//!
//! The open file's passwords stay here, in memory, until the import is closed: the page gets
//! the rows without them, and nothing of the file is written anywhere. *Export klanten…* writes
//! the list the other way (no secret) where the save dialog says.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use kluis_core::plan::Schedule;
use kluis_core::retention::Retention;
use kluis_core::{Error, Secret};
use kluis_import::vault::Login;
use kluis_import::{Action, Field, Front, Importer, Known, Mapping, Planned, RowOutcome, Table};
use serde::{Deserialize, Serialize};

use super::connections::Connections;
use super::shared::Shared;
use crate::dialogs::ImportFile;
use crate::error::{AppError, AppResult};

/// See the module's text.
pub struct Imports {
    pub(super) shared: Arc<Shared>,
    pub(super) connections: Arc<Connections>,
    open: Mutex<Option<OpenImport>>,
    /// The running import's stop, while one runs.
    running: Mutex<Option<Arc<AtomicBool>>>,
}

/// An import file being previewed: its table and what the page chose for it.
struct OpenImport {
    file: PathBuf,
    table: Table,
    mapping: Mapping,
    /// A password manager's export, and its logins (passwords for rows without one).
    vault: Option<(PathBuf, Vec<Login>)>,
    /// The service address and api key for rows without one.
    base_url: Option<String>,
    office_key: Option<Secret>,
}

/// One field and the column it is read from (none: not imported).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct FieldColumn {
    pub field: Field,
    pub column: Option<u32>,
}

/// A row as it would be imported (its secrets only as "has one").
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ImportRow {
    pub line: u32,
    pub action: Action,
    pub name: String,
    pub username: String,
    pub base_url: Option<String>,
    /// The saved klant's address, when the row moves it to `base_url` (only with the
    /// secrets the import gives: shown so that nobody moves a klant unseen).
    pub moves_from: Option<String>,
    /// The plan it sets (none: the row names none).
    pub schedule: Option<Schedule>,
    /// Whether it sets a retention rule, and which (none with `sets_retention`: keep all).
    pub sets_retention: bool,
    pub retention: Option<Retention>,
    pub tags: Vec<String>,
    pub has_password: bool,
    pub has_api_key: bool,
    pub problems: Vec<String>,
}

/// What the page shows of an open import file.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ImportPreview {
    /// The file, as the dialog chose it.
    pub file: String,
    pub header: Vec<String>,
    /// Every field, with its column or none.
    pub columns: Vec<FieldColumn>,
    pub rows: Vec<ImportRow>,
    /// The file holds passwords (a password column is read): say so, so it is deleted.
    pub holds_passwords: bool,
    /// The password manager's export chosen, and its logins with a password.
    pub vault: Option<String>,
    pub vault_logins: u32,
    /// The service address for rows without one.
    pub base_url: Option<String>,
    /// Whether an api key for rows without one was given (never which).
    pub office_key: bool,
}

/// What the page sends for rows without an address or api key: `base_url` empty for none;
/// `api_key` null keeps the one given, empty forgets it.
#[derive(Clone, Deserialize, ts_rs::TS)]
pub struct ImportDefaults {
    pub base_url: String,
    pub api_key: Option<String>,
}

/// Shows whether a key was given, never the key.
impl std::fmt::Debug for ImportDefaults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportDefaults")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "«hidden»"))
            .finish()
    }
}

/// A row that ended, as the import goes: its index in the preview's rows and its outcome.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ImportProgress {
    pub index: u32,
    pub outcome: RowOutcome,
}

/// Where an import's progress goes.
pub type ImportSink = Arc<dyn Fn(ImportProgress) + Send + Sync>;

/// The import's end: each row's outcome in the rows' order, and the files that still hold
/// passwords (to be deleted by hand: Kluis keeps nothing of them).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ImportResult {
    pub outcomes: Vec<RowOutcome>,
    pub holding_passwords: Vec<String>,
}

fn no_import() -> AppError {
    AppError::NotFound("No import file is open: choose one with Import klanten….".into())
}

impl Imports {
    pub(super) fn new(shared: Arc<Shared>, connections: Arc<Connections>) -> Imports {
        Imports {
            shared,
            connections,
            open: Mutex::new(None),
            running: Mutex::new(None),
        }
    }

    /// *Import klanten…*: the file picked in the native dialog, read and previewed (none when
    /// the dialog was cancelled: the import open before, if any, stays).
    pub async fn open_import(&self) -> AppResult<Option<ImportPreview>> {
        let Some(file) = self
            .shared
            .dialogs()
            .pick_import_file(ImportFile::Klanten)
            .await
        else {
            return Ok(None);
        };
        let read = file.clone();
        let table = blocking(move || kluis_import::read_path(&read)).await?;
        let mapping = Mapping::guess(&table.header);
        let open = OpenImport {
            file,
            table,
            mapping,
            vault: None,
            base_url: self.usual_base_url(),
            office_key: None,
        };
        let preview = self.preview(&open);
        *self.open.lock().unwrap() = Some(open);
        Ok(Some(preview))
    }

    /// Field `field` read from column `column` (none: not imported).
    pub fn import_column(&self, field: Field, column: Option<u32>) -> AppResult<ImportPreview> {
        self.change(|open| {
            let column = column.map(|c| c as usize);
            if column.is_some_and(|c| c >= open.table.header.len()) {
                return Err(Error::Config("The file has no such column.".into()).into());
            }
            open.mapping.set(field, column);
            Ok(())
        })
    }

    /// The service address and api key for rows without one.
    pub fn import_defaults(&self, defaults: ImportDefaults) -> AppResult<ImportPreview> {
        self.change(|open| {
            let base_url = defaults.base_url.trim();
            open.base_url = (!base_url.is_empty()).then(|| base_url.to_string());
            if let Some(key) = defaults.api_key {
                let key = key.trim();
                open.office_key = (!key.is_empty()).then(|| Secret::new(key.to_string()));
            }
            Ok(())
        })
    }

    /// *Passwords from a password manager…*: its export picked in the native dialog and read
    /// (unchanged when cancelled).
    pub async fn import_vault(&self) -> AppResult<ImportPreview> {
        if self.open.lock().unwrap().is_none() {
            return Err(no_import());
        }
        let dialogs = self.shared.dialogs();
        if let Some(file) = dialogs.pick_import_file(ImportFile::PasswordManager).await {
            let read = file.clone();
            let logins =
                blocking(move || kluis_import::vault::read(&kluis_import::bounded_read(&read)?))
                    .await?;
            self.change(|open| {
                open.vault = Some((file, logins));
                Ok(())
            })?;
        }
        self.change(|_| Ok(()))
    }

    /// The import of the open file's rows (see the module's text); `progress` hears each row
    /// as it ends. One at a time: a second is refused while one runs.
    pub async fn run_import(&self, progress: ImportSink) -> AppResult<ImportResult> {
        let (rows, office_key, holding) = {
            let open = self.open.lock().unwrap();
            let open = open.as_ref().ok_or_else(no_import)?;
            let rows = self.planned(open);
            let holding = (open.mapping.columns.contains_key(&Field::Password))
                .then(|| open.file.display().to_string())
                .into_iter()
                .chain(open.vault.as_ref().map(|(f, _)| f.display().to_string()))
                .collect::<Vec<_>>();
            (rows, open.office_key.clone(), holding)
        };
        let stopping = {
            let mut running = self.running.lock().unwrap();
            if running.is_some() {
                let said = "An import is running already: wait for it, or cancel it.";
                return Err(Error::Config(said.into()).into());
            }
            running.insert(Arc::new(AtomicBool::new(false))).clone()
        };
        let importer = Importer {
            profiles: &self.shared.profiles,
            secrets: self.shared.secrets_for(false),
            office_key,
            ca_pem: self.shared.env_ca_pem.clone(),
            keep_ca: false,
            known_cas: kluis_import::run::known_cas(&self.shared.profiles.list()),
            at_once: kluis_import::run::DEFAULT_AT_ONCE,
            stopping,
        };
        let outcomes = importer
            .run(&rows, |index, outcome| {
                progress(ImportProgress {
                    index: index as u32,
                    outcome: outcome.clone(),
                })
            })
            .await;
        *self.running.lock().unwrap() = None;
        // An updated klant signs in again with what the file gave it.
        for (row, outcome) in rows.iter().zip(&outcomes) {
            if outcome.outcome == kluis_import::Outcome::Updated {
                if let Ok(profile) = self.shared.profiles.find(&row.name) {
                    self.connections.forget(&profile.id);
                }
            }
        }
        Ok(ImportResult {
            outcomes,
            holding_passwords: holding,
        })
    }

    /// Cancel: the rows not begun are not tried; the klanten signing in finish whole.
    pub fn cancel_import(&self) {
        if let Some(stopping) = self.running.lock().unwrap().as_ref() {
            stopping.store(true, Ordering::SeqCst);
        }
    }

    /// Closes the import: the file's table and passwords are forgotten.
    pub fn close_import(&self) {
        *self.open.lock().unwrap() = None;
    }

    /// *Export klanten…*: the saved klanten as CSV (no secret) where the save dialog says;
    /// none when it was cancelled.
    pub async fn export_klanten(&self) -> AppResult<Option<String>> {
        let Some(path) = self
            .shared
            .dialogs()
            .save_file(
                "kluis-klanten.csv",
                crate::dialogs::default_folder().as_deref(),
            )
            .await
        else {
            return Ok(None);
        };
        let text = kluis_import::export::profiles_csv(&self.shared.profiles.list());
        let to = path.clone();
        blocking(move || {
            kluis_private::files::write_atomic(&to, text.as_bytes())
                .map_err(|e| Error::io(format!("write {}", to.display()), e))
        })
        .await?;
        Ok(Some(path.display().to_string()))
    }

    /// `change` applied to the open import, and its preview then.
    fn change(
        &self,
        change: impl FnOnce(&mut OpenImport) -> AppResult<()>,
    ) -> AppResult<ImportPreview> {
        let mut open = self.open.lock().unwrap();
        let open = open.as_mut().ok_or_else(no_import)?;
        change(open)?;
        Ok(self.preview(open))
    }

    /// The service address the saved klanten share, as the default for rows without one (an
    /// office's klanten are all at the one service); none when they differ or there are none.
    fn usual_base_url(&self) -> Option<String> {
        let saved = self.shared.profiles.list();
        let mut urls = saved.iter().filter(|p| !p.demo).map(|p| &p.base_url);
        let first = urls.next()?;
        urls.all(|u| u == first).then(|| first.clone())
    }

    /// Each row of `open` as it would be imported.
    fn planned(&self, open: &OpenImport) -> Vec<Planned> {
        let saved = kluis_import::SavedKlant::of(&self.shared.profiles.list());
        let known = Known {
            saved: &saved,
            base_url: open.base_url.as_deref(),
            has_api_key: open.office_key.is_some(),
            vault: open
                .vault
                .as_ref()
                .map(|(_, l)| l.as_slice())
                .unwrap_or(&[]),
            front: Front::App,
        };
        kluis_import::preview(&open.table, &open.mapping, &known)
    }

    fn preview(&self, open: &OpenImport) -> ImportPreview {
        let rows = self.planned(open);
        ImportPreview {
            file: open.file.display().to_string(),
            header: open.table.header.clone(),
            columns: (Field::ALL.iter())
                .map(|field| FieldColumn {
                    field: *field,
                    column: open.mapping.columns.get(field).map(|c| *c as u32),
                })
                .collect(),
            rows: rows.into_iter().map(row_view).collect(),
            holds_passwords: open.mapping.columns.contains_key(&Field::Password),
            vault: open.vault.as_ref().map(|(f, _)| f.display().to_string()),
            vault_logins: open.vault.as_ref().map_or(0, |(_, l)| l.len() as u32),
            base_url: open.base_url.clone(),
            office_key: open.office_key.is_some(),
        }
    }
}

fn row_view(row: Planned) -> ImportRow {
    ImportRow {
        line: row.line.min(u32::MAX as u64) as u32,
        action: row.action,
        name: row.name,
        username: row.username,
        base_url: row.base_url,
        moves_from: row.moves_from,
        schedule: row.schedule,
        sets_retention: row.retention.is_some(),
        retention: row.retention.flatten(),
        tags: row.tags,
        has_password: row.has_password,
        has_api_key: row.has_api_key,
        problems: row.problems,
    }
}

/// `work` (file reading) off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> kluis_core::Result<T> + Send + 'static,
) -> AppResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AppError::Core(Error::Config(format!("The file could not be read: {e}."))))?
        .map_err(AppError::from)
}
