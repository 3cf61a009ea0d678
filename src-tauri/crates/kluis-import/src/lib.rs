//! kluis-import: an office's klanten brought into Kluis from the spreadsheet (or password
//! manager export) they are kept in today, instead of one form per klant.
//!
//! Parts and data flow: the file's bytes → [`text::decode`] (UTF-8, UTF-16 or Windows-1252) →
//! [`table::read`] (the header and each row's cells, the delimiter found, bounded) — or, for
//! an Excel workbook, [`xlsx::read`] (its first sheet, bounded likewise) →
//! [`Mapping::guess`] (which column holds which [`Field`], changeable) → [`preview`] (each row
//! as it would be imported: added, updated or skipped with its problems). Nothing is stored
//! here: the front ends show the preview, then sign each klant in and save the ones that
//! sign in (the CLI's `kluis profiles import`). The other way, [`export::csv`] writes the
//! klant list (no secret) in the columns and words the import reads.

pub mod export;
#[cfg(test)]
mod fuzz;
pub mod mapping;
pub mod preview;
pub mod table;
pub mod text;
pub mod vault;
pub mod words;
pub mod xlsx;

pub use mapping::{Field, Mapping};
pub use preview::{preview, Action, Known, Planned};
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
