//! An Excel workbook (.xlsx) read as a [`Table`]: its first worksheet, the first row the
//! header, through `calamine`. Numbers are written as a person reads them (`14`, not
//! `14.0`), a time of day as `HH:MM` (Excel keeps "02:00" typed in a cell as a fraction of a
//! day). Bounded as the CSV reader is, and before anything is allocated for it:
//! - a workbook larger than a klant list can be, or one whose parts would inflate past
//!   [`MAX_INFLATED`], is refused before anything is inflated;
//! - its shared strings (every text a workbook holds) are refused past [`MAX_SHARED_BYTES`]
//!   or a declared count past [`MAX_SHARED_STRINGS`], read from the part's first tag before
//!   the reader is opened (the reader reserves room for the count it declares: a workbook of
//!   a few hundred bytes could ask for terabytes);
//! - the sheet is read cell by cell (calamine's cell reader), never as the rectangle its
//!   cells span — a workbook of a few hundred bytes with cells at `A1` and `XFD1048576` made
//!   the reader allocate 10^10 cells and abort — and a value past column [`MAX_COLUMNS`] or
//!   past [`MAX_ROWS`] rows is refused as it is met.

use std::collections::BTreeMap;
use std::io::Cursor;

use calamine::{Data, Reader, Xlsx};
use kluis_core::{Error, Result};

use crate::table::{Row, Table, MAX_CELL, MAX_COLUMNS, MAX_ROWS};

/// Largest workbook file read.
pub const MAX_FILE: usize = 20 * 1024 * 1024;
/// Most bytes its parts may declare inflated, together.
pub const MAX_INFLATED: u64 = 200 * 1024 * 1024;
/// Largest shared-strings part (inflated): 5,000 klanten's texts take well under 1 MiB.
pub const MAX_SHARED_BYTES: u64 = 16 * 1024 * 1024;
/// Most shared strings a workbook may declare.
pub const MAX_SHARED_STRINGS: u64 = (MAX_ROWS * MAX_COLUMNS) as u64;

/// Whether `bytes` look like a workbook (a zip archive) rather than text.
pub fn is_workbook(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

fn unreadable(why: impl std::fmt::Display) -> Error {
    Error::Config(format!(
        "The workbook cannot be read ({why}). Save it from the spreadsheet again as .xlsx, or as CSV."
    ))
}

fn too_large(what: &str) -> Error {
    Error::Config(format!(
        "The workbook is too large for a list of klanten ({what}). Save only the klanten's sheet, as .xlsx or CSV."
    ))
}

/// `bytes` (an .xlsx file) as a table (see the module's text).
pub fn read(bytes: &[u8]) -> Result<Table> {
    if bytes.len() > MAX_FILE {
        return Err(Error::Config(format!(
            "The workbook is larger than {} MB: a klant list is far smaller. Import its klanten sheet as CSV.",
            MAX_FILE / (1024 * 1024)
        )));
    }
    // The sizes its central directory declares (the zip reader, 9.x, stops an entry one byte
    // past its declared size).
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(unreadable)?;
    let mut inflated = 0u64;
    for i in 0..archive.len() {
        inflated = inflated.saturating_add(archive.by_index_raw(i).map_err(unreadable)?.size());
    }
    if inflated > MAX_INFLATED {
        return Err(unreadable(
            "it would inflate to more than a klant list can hold",
        ));
    }
    check_shared_strings(&mut archive)?;
    // A part calamine's checks miss may make it panic (a `<dimension ref="B2:A1">` did: a
    // subtraction that overflows, in a test build): a file is said unreadable, never a crash.
    std::panic::catch_unwind(|| sheet_of(bytes))
        .unwrap_or_else(|_| Err(unreadable("its parts are not what a spreadsheet writes")))
}

/// The first worksheet of the workbook `bytes` as a table, read cell by cell.
fn sheet_of(bytes: &[u8]) -> Result<Table> {
    let mut workbook: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(unreadable)?;
    let first = (workbook.sheet_names().into_iter().next())
        .ok_or_else(|| unreadable("it has no worksheet"))?;
    let mut cells = workbook
        .worksheet_cells_reader(&first)
        .map_err(unreadable)?;
    // Each row's values by column, rows by their number: only cells that hold something, each
    // kept to one character past the longest read (a 16 MiB text that a thousand cells share
    // is copied a thousand times a thousand characters, not 16 GB).
    let mut sheet: BTreeMap<u32, BTreeMap<u32, String>> = BTreeMap::new();
    let mut kept = 0usize;
    while let Some(cell) = cells.next_cell().map_err(unreadable)? {
        let (row, col) = cell.get_position();
        let value = cell_text(cell.get_value());
        if value.is_empty() {
            continue;
        }
        if col as usize >= MAX_COLUMNS {
            return Err(too_wide_sheet(u64::from(row) + 1));
        }
        if !sheet.contains_key(&row) && sheet.len() > MAX_ROWS {
            return Err(Error::Config(format!(
                "The worksheet has more than {MAX_ROWS} rows; import it in parts of at most {MAX_ROWS} klanten."
            )));
        }
        kept += value.len();
        if kept > MAX_KEPT {
            return Err(too_large("its cells hold more text than a klant list has"));
        }
        sheet.entry(row).or_default().insert(col, value);
    }
    drop(cells);
    table_of(sheet)
}

/// Most bytes of cell text kept from a sheet: 5,000 klanten's rows take a few MiB.
const MAX_KEPT: usize = 64 * 1024 * 1024;

/// `value` as a person reads it, text taken to one character past [`MAX_CELL`] (so that a cut
/// cell is still told) without copying the rest of it.
fn cell_text(value: &calamine::DataRef<'_>) -> String {
    use calamine::DataRef;
    let head = |text: &str| text.chars().take(MAX_CELL + 1).collect();
    match value {
        DataRef::String(text) | DataRef::DateTimeIso(text) | DataRef::DurationIso(text) => {
            head(text)
        }
        DataRef::SharedString(text) => head(text),
        other => text(&Data::from(other.clone())),
    }
}

/// The refusal of a sheet with a value past column [`MAX_COLUMNS`] (in row `row`).
fn too_wide_sheet(row: u64) -> Error {
    Error::Config(format!(
        "Row {row} of the worksheet has a value past column {MAX_COLUMNS}; Kluis reads at most {MAX_COLUMNS} columns. Remove it, or save only the klanten's columns (name, username, …)."
    ))
}

/// The refusals of a shared-strings part too large to read: its inflated size, or the count
/// its `<sst>` tag declares (read first: the reader reserves room for it).
fn check_shared_strings(archive: &mut zip::ZipArchive<Cursor<&[u8]>>) -> Result<()> {
    for i in 0..archive.len() {
        let part = archive.by_index(i).map_err(unreadable)?;
        let name = part.name().map_err(unreadable)?.to_ascii_lowercase();
        if !name.ends_with("sharedstrings.xml") {
            continue;
        }
        if part.size() > MAX_SHARED_BYTES {
            return Err(too_large("its texts take more than 16 MiB"));
        }
        // Read up to its `<sst>` tag, however far in (a declaration, comments, space: the
        // reader looks as far; the part is at most 16 MiB), streaming.
        let mut xml = quick_xml::Reader::from_reader(std::io::BufReader::new(part));
        let mut buf = Vec::new();
        loop {
            match xml.read_event_into(&mut buf) {
                Ok(quick_xml::events::Event::Start(tag) | quick_xml::events::Event::Empty(tag))
                    if tag.local_name().as_ref() == "sst" =>
                {
                    for attr in tag.attributes().flatten() {
                        let counted = matches!(attr.key.as_ref(), "count" | "uniqueCount");
                        let declared = attr.value.trim().parse::<u64>().ok();
                        if counted && declared.is_none_or(|n| n > MAX_SHARED_STRINGS) {
                            return Err(too_large("it declares more texts than a klant list has"));
                        }
                    }
                    break;
                }
                Ok(quick_xml::events::Event::Eof) => {
                    return Err(unreadable("its table of texts has no <sst> tag"))
                }
                Err(e) => return Err(unreadable(e)),
                _ => buf.clear(),
            }
        }
    }
    Ok(())
}

/// The sheet's values as a table: the first row that holds one is the header, columns counted
/// from the leftmost that holds one, as the spreadsheet shows them.
fn table_of(sheet: BTreeMap<u32, BTreeMap<u32, String>>) -> Result<Table> {
    let left = (sheet.values())
        .filter_map(|cells| cells.keys().next())
        .min()
        .copied()
        .unwrap_or(0);
    let width = (sheet.values())
        .filter_map(|cells| cells.keys().next_back())
        .max()
        .map_or(0, |right| (right - left + 1) as usize);
    let mut rows = sheet.into_iter().map(|(row, cells)| {
        let mut line = vec![String::new(); width];
        let mut cut = false;
        for (col, value) in cells {
            cut |= value.chars().count() > MAX_CELL;
            line[(col - left) as usize] = value.trim().chars().take(MAX_CELL).collect();
        }
        (row, line, cut)
    });
    let header = match rows.next() {
        Some((_, header, _)) => header,
        None => Vec::new(),
    };
    if header.iter().all(String::is_empty) {
        return Err(Error::Config(
            "The worksheet has no header row: its first row must name the columns (name, username, …)."
                .into(),
        ));
    }
    let rows = rows
        .filter(|(_, cells, _)| cells.iter().any(|c| !c.is_empty()))
        .map(|(row, cells, cut)| Row {
            line: u64::from(row) + 1,
            cells,
            cut,
        })
        .collect();
    Ok(Table { header, rows })
}

/// A cell as a person reads it.
fn text(cell: &Data) -> String {
    match cell {
        Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::Int(i) => i.to_string(),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        Data::Float(f) => f.to_string(),
        Data::Bool(b) => b.to_string(),
        // A time of day alone: a fraction of a day.
        Data::DateTime(t) if (0.0..1.0).contains(&t.as_f64()) => {
            let minutes = (t.as_f64() * 24.0 * 60.0).round() as u32;
            format!("{:02}:{:02}", minutes / 60 % 24, minutes % 60)
        }
        Data::DateTime(t) => t.as_f64().to_string(),
        Data::Error(_) | Data::Empty => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_xlsxwriter::{Format, Workbook};

    /// A workbook as a spreadsheet library writes one: text, a number, a time typed as 02:00
    /// (a time value) — read as the CSV reader reads its text; an empty row left out.
    #[test]
    fn a_workbook_reads_as_its_text() {
        let mut workbook = Workbook::new();
        let sheet = workbook.add_worksheet();
        for (col, name) in ["Naam", "Gebruikersnaam", "Bewaren", "Tijd"]
            .iter()
            .enumerate()
        {
            sheet.write_string(0, col as u16, *name).unwrap();
        }
        sheet.write_string(1, 0, "Café Brûlé").unwrap();
        sheet.write_string(1, 1, "cafe").unwrap();
        sheet.write_number(1, 2, 14.0).unwrap();
        let time = Format::new().set_num_format("hh:mm");
        sheet
            .write_number_with_format(1, 3, 2.0 / 24.0, &time)
            .unwrap();
        sheet.write_string(3, 0, "Visser").unwrap();
        let bytes = workbook.save_to_buffer().unwrap();
        assert!(is_workbook(&bytes));
        let table = read(&bytes).unwrap();
        assert_eq!(table.header, ["Naam", "Gebruikersnaam", "Bewaren", "Tijd"]);
        assert_eq!(table.rows[0].cells, ["Café Brûlé", "cafe", "14", "02:00"]);
        assert_eq!(
            (table.rows[1].line, table.rows[1].cells[0].as_str()),
            (4, "Visser")
        );
        assert!(read(b"PK\x03\x04 not a zip").is_err());
    }

    /// Hostile workbooks of a few hundred bytes are refused, said as too large, without the
    /// memory they would have taken: cells at `A1` and `XFD1048576` (10^10 cells as a
    /// rectangle: the reader aborted), shared strings declaring 10^14 (the reader reserved room
    /// for them) — also when that count comes after 64 KiB of padding; a sheet of two
    /// far-apart rows, and a `<dimension>` spanning the whole sheet, read as the two rows they
    /// are; 2,000 cells sharing one 4 MiB text (a file of some KiB) read as 2,000 cut cells,
    /// not 8 GB of copies.
    #[test]
    fn hostile_workbooks_are_refused_before_they_take_memory() {
        use crate::fuzz::workbook;
        let cell = |row, col, text: &str| (row, col, text.to_string());
        let corners = workbook(
            &[cell(0, 0, "Naam"), cell(1_048_575, 16_383, "x")],
            "A1",
            None,
            0,
        );
        assert!(corners.len() < 2_000, "{} bytes", corners.len());
        let refused = read(&corners).unwrap_err().to_string();
        assert!(refused.contains("columns"), "{refused}");
        let declared = workbook(&[cell(0, 0, "Naam")], "A1", Some("99999999999999"), 0);
        let refused = read(&declared).unwrap_err().to_string();
        assert!(refused.contains("too large"), "{refused}");
        let hidden = crate::fuzz::with_padded_shared_strings(&declared, 64 * 1024);
        let refused = read(&hidden).unwrap_err().to_string();
        assert!(
            refused.contains("too large"),
            "the count far into the part: {refused}"
        );
        let many = crate::fuzz::workbook_sharing(&"x".repeat(4 * 1024 * 1024), 2_000);
        assert!(many.len() < 200_000, "{} bytes", many.len());
        let table = read(&many).unwrap();
        assert_eq!(table.rows.len(), 2_000);
        assert!(
            table
                .rows
                .iter()
                .all(|r| r.cut && r.cells[0].len() == MAX_CELL),
            "2,000 cells sharing a 4 MiB text: each read to its limit and marked cut"
        );
        let far = workbook(
            &[
                cell(0, 0, "Naam"),
                cell(0, 1, "Gebruikersnaam"),
                cell(1_048_574, 1, "visser"),
            ],
            "A1:XFD1048576",
            None,
            0,
        );
        let table = read(&far).unwrap();
        assert_eq!(table.header, ["Naam", "Gebruikersnaam"]);
        assert_eq!(
            (table.rows[0].line, table.rows[0].cells.clone()),
            (1_048_575, vec![String::new(), "visser".into()])
        );
        let many = workbook(&[cell(0, 0, "Naam")], "A1", None, 4_000_000);
        assert!(
            read(&many).unwrap_err().to_string().contains("too large"),
            "more texts than 16 MiB"
        );
    }
}
