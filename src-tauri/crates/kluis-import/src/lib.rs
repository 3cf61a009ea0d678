//! kluis-import: an office's klanten brought into Kluis from the spreadsheet (or password
//! manager export) they are kept in today, instead of one form per klant.
//!
//! Parts and data flow: the file's bytes → [`text::decode`] (UTF-8, UTF-16 or Windows-1252) →
//! [`table::read`] (the header and each row's cells, the delimiter found, bounded) — or, for
//! an Excel workbook, [`xlsx::read`] (its first sheet, bounded likewise) →
//! [`Mapping::guess`] (which column holds which [`Field`], changeable) → [`preview`] (each row
//! as it would be imported: added, updated or skipped with its problems), which the front ends
//! show (the CLI's `kluis profiles import`, the app's *Import klanten…*) → [`run::Importer`]
//! (each klant signed in, a few at a time, and saved only when it signs in: its secrets to
//! the keyring, the profile to the profiles file). The other way, [`export::csv`] writes the
//! klant list (no secret) in the columns and words the import reads.

pub mod export;
#[cfg(test)]
mod fuzz;
pub mod mapping;
pub mod preview;
pub mod run;
pub mod table;
pub mod text;
pub mod vault;
pub mod words;
pub mod xlsx;

pub use mapping::{Field, Mapping};
pub use preview::{preview, Action, Front, Known, Planned, SavedKlant};
pub use run::{Importer, Outcome, RowOutcome};
pub use table::{Row, Table};

/// The import file `bytes` (a CSV file's) read as a table: decoded and split into rows.
pub fn read_csv(bytes: &[u8]) -> kluis_core::Result<Table> {
    table::read(&text::decode(bytes))
}

/// The import file `bytes` read as a table: an Excel workbook (.xlsx) when it is one, else CSV.
pub fn read_file(bytes: &[u8]) -> kluis_core::Result<Table> {
    match xlsx::is_workbook(bytes) {
        true => xlsx::read(bytes),
        false => read_csv(bytes),
    }
}

/// Largest import or password manager file read: far more than 5,000 klanten take in any of
/// the formats, far less than could tire the computer.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// The bytes of the file at `path`, refused with a clear error past [`MAX_FILE_BYTES`] (read
/// no further than that).
pub fn bounded_read(path: &std::path::Path) -> kluis_core::Result<Vec<u8>> {
    use std::io::Read;
    let read = |e| kluis_core::Error::io(format!("read {}", path.display()), e);
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(read)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(kluis_core::Error::Config(format!(
            "{} is larger than {} MiB: that is no list of klanten. Choose the file exported from the spreadsheet or password manager.",
            path.display(),
            MAX_FILE_BYTES / 1024 / 1024
        )));
    }
    Ok(bytes)
}

/// The import file at `path` read as a table (see [`read_file`], [`bounded_read`]).
pub fn read_path(path: &std::path::Path) -> kluis_core::Result<Table> {
    read_file(&bounded_read(path)?)
}
