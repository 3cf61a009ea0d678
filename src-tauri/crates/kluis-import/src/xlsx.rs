//! An Excel workbook (.xlsx) read as a [`Table`]: its first worksheet, the first row the
//! header, through `calamine`. Numbers are written as a person reads them (`14`, not
//! `14.0`), a time of day as `HH:MM` (Excel keeps "02:00" typed in a cell as a fraction of a
//! day). Bounded as the CSV reader is, and before anything is inflated: a workbook larger than
//! a klant list can be, or one whose parts would inflate past [`MAX_INFLATED`], is refused.

use std::io::Cursor;

use calamine::{Data, Reader, Xlsx};
use kluis_core::{Error, Result};

use crate::table::{Row, Table, MAX_CELL, MAX_ROWS};

/// Largest workbook file read.
pub const MAX_FILE: usize = 20 * 1024 * 1024;
/// Most bytes its parts may declare inflated, together.
pub const MAX_INFLATED: u64 = 200 * 1024 * 1024;

/// Whether `bytes` look like a workbook (a zip archive) rather than text.
pub fn is_workbook(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

fn unreadable(why: impl std::fmt::Display) -> Error {
    Error::Config(format!(
        "The workbook cannot be read ({why}). Save it from the spreadsheet again as .xlsx, or as CSV."
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
    let mut workbook: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(unreadable)?;
    let sheet = (workbook.worksheet_range_at(0))
        .ok_or_else(|| unreadable("it has no worksheet"))?
        .map_err(unreadable)?;
    let mut rows = sheet.rows();
    let header: Vec<String> = rows
        .next()
        .map(|cells| {
            cells
                .iter()
                .map(|c| text(c).chars().take(MAX_CELL).collect())
                .collect()
        })
        .unwrap_or_default();
    if header.iter().all(String::is_empty) {
        return Err(Error::Config(
            "The worksheet has no header row: its first row must name the columns (name, username, …)."
                .into(),
        ));
    }
    let first_line = sheet.start().map_or(1, |(row, _)| u64::from(row) + 1);
    let mut table = Table {
        header,
        rows: Vec::new(),
    };
    for (n, cells) in rows.enumerate() {
        let mut cut = false;
        let mut cells: Vec<String> = (cells.iter())
            .map(|c| {
                let text = text(c);
                cut |= text.chars().count() > MAX_CELL;
                text.trim().chars().take(MAX_CELL).collect()
            })
            .collect();
        if cells.iter().all(String::is_empty) {
            continue;
        }
        if table.rows.len() == MAX_ROWS {
            return Err(Error::Config(format!(
                "The worksheet has more than {MAX_ROWS} rows; import it in parts of at most {MAX_ROWS} klanten."
            )));
        }
        cells.resize(table.header.len().max(cells.len()), String::new());
        table.rows.push(Row {
            line: first_line + 1 + n as u64,
            cells,
            cut,
        });
    }
    Ok(table)
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
}
