//! A CSV file's text as a table: its header row and each row's cells with its line number.
//! The delimiter is what the header uses (comma, semicolon — Excel's in Dutch — tab or bar);
//! quotes as RFC 4180 has them; a formula-like cell kept from a spreadsheet by a leading `'`
//! is read as itself. Bounded: a file of more rows than an office has klanten, a row of more
//! columns than a klant list has, or a cell longer than any name or password, is said, never
//! read on without end.

use kluis_core::{Error, Result};

/// Most rows (klanten) one import takes.
pub const MAX_ROWS: usize = 5_000;
/// Longest cell read as it is; a longer one is cut here and its row marked.
pub const MAX_CELL: usize = 1_000;
/// Most columns a row may have: a klant list has a dozen; a header of millions of empty
/// columns made every row that wide (hundreds of MB a row) and the process abort.
pub const MAX_COLUMNS: usize = 200;

/// The refusal of a file or sheet with a row wider than [`MAX_COLUMNS`] (at `line`).
pub(crate) fn too_wide(line: u64) -> Error {
    Error::Config(format!(
        "Line {line} of the file has more than {MAX_COLUMNS} columns; Kluis reads at most {MAX_COLUMNS}. Remove what is past them, or save only the klanten's columns (name, username, …) as CSV or .xlsx."
    ))
}

/// The first line (from 1) of a record with more than [`MAX_COLUMNS`] fields split by
/// `delimiter`; none when every record fits. One pass of the csv reader's own parser
/// (csv-core, configured as [`read`] configures the reader), each field's bytes discarded as
/// they are read: before the reader builds any record, which a row of millions of fields
/// would make hundreds of MB.
fn too_wide_at(text: &str, delimiter: u8) -> Option<u64> {
    use csv_core::ReadFieldResult;
    let mut parser = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    let (mut input, mut discarded) = (text.as_bytes(), [0u8; 4096]);
    let (mut fields, mut record_line) = (0usize, 1u64);
    loop {
        if fields == 0 {
            record_line = parser.line();
        }
        // (An empty `input` tells the parser the text ended.)
        let (result, read, _) = parser.read_field(input, &mut discarded);
        input = &input[read..];
        match result {
            ReadFieldResult::InputEmpty | ReadFieldResult::OutputFull => {}
            ReadFieldResult::Field { record_end } => {
                fields += 1;
                if fields > MAX_COLUMNS {
                    return Some(record_line);
                }
                if record_end {
                    fields = 0;
                }
            }
            ReadFieldResult::End => return None,
        }
    }
}

/// A file read as a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Row>,
}

/// One row: where it is in the file, and its cells (as many as the header has).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Its line in the file (1 is the header).
    pub line: u64,
    pub cells: Vec<String>,
    /// A cell was longer than [`MAX_CELL`] and is cut.
    pub cut: bool,
}

/// The delimiter the header line uses most, outside quotes: `,` `;` tab or `|` (a comma when it
/// has none of them: one column).
fn delimiter(text: &str) -> u8 {
    let header = text.lines().next().unwrap_or_default();
    let mut quoted = false;
    let mut counts = [0usize; 4];
    const CANDIDATES: [u8; 4] = [b',', b';', b'\t', b'|'];
    for byte in header.bytes() {
        match byte {
            b'"' => quoted = !quoted,
            b if !quoted => {
                if let Some(i) = CANDIDATES.iter().position(|c| *c == b) {
                    counts[i] += 1;
                }
            }
            _ => {}
        }
    }
    let most = (0..4)
        .max_by_key(|i| (counts[*i], std::cmp::Reverse(*i)))
        .unwrap_or(0);
    match counts[most] {
        0 => b',',
        _ => CANDIDATES[most],
    }
}

/// A cell written with a leading `'` so that a spreadsheet does not run it as a formula
/// (Kluis's export does so: `'=…`) read as itself.
fn undefused(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.starts_with(['=', '+', '-', '@']) => rest,
        _ => cell,
    }
}

/// `text` read as a table (see the module's text). Empty rows are left out.
pub fn read(text: &str) -> Result<Table> {
    let delimiter = delimiter(text);
    if let Some(line) = too_wide_at(text, delimiter) {
        return Err(too_wide(line));
    }
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .has_headers(true)
        .from_reader(text.as_bytes());
    let unreadable = |e: csv::Error| {
        Error::Config(format!(
            "The file cannot be read as CSV ({e}). Save it from the spreadsheet as CSV (UTF-8), or as .xlsx."
        ))
    };
    let header: Vec<String> = (reader.headers().map_err(unreadable)?.iter())
        .map(|h| h.trim().chars().take(MAX_CELL).collect())
        .collect();
    if header.len() > MAX_COLUMNS {
        return Err(too_wide(1));
    }
    if header.iter().all(String::is_empty) {
        return Err(Error::Config(
            "The file has no header row: its first row must name the columns (name, username, …)."
                .into(),
        ));
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(unreadable)?;
        if record.len() > MAX_COLUMNS {
            // (The scan above reads as the reader does; this holds if they ever differ.)
            return Err(too_wide(record.position().map_or(0, |p| p.line())));
        }
        if record.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        if rows.len() == MAX_ROWS {
            return Err(Error::Config(format!(
                "The file has more than {MAX_ROWS} rows; import it in parts of at most {MAX_ROWS} klanten."
            )));
        }
        let mut cut = false;
        let mut cells: Vec<String> = (record.iter())
            .map(|c| {
                cut |= c.chars().count() > MAX_CELL;
                undefused(c.trim()).chars().take(MAX_CELL).collect()
            })
            .collect();
        cells.resize(header.len().max(cells.len()), String::new());
        let line = record.position().map_or(0, |p| p.line());
        rows.push(Row { line, cells, cut });
    }
    Ok(Table { header, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Excel's Dutch CSV (semicolons, a quoted cell holding one), a comma file, a tab file:
    /// each read into the same cells; empty rows left out; short rows filled.
    #[test]
    fn each_delimiter_is_found() {
        for text in [
            "naam;gebruikersnaam\n\"Bakker; Zn\";jan\n\n;\nVisser\n",
            "naam,gebruikersnaam\n\"Bakker; Zn\",jan\n\n,\nVisser\n",
            "naam\tgebruikersnaam\n\"Bakker; Zn\"\tjan\n\n\t\nVisser\n",
        ] {
            let table = read(text).unwrap();
            assert_eq!(table.header, ["naam", "gebruikersnaam"]);
            let cells: Vec<&[String]> = table.rows.iter().map(|r| r.cells.as_slice()).collect();
            assert_eq!(
                cells,
                [
                    &["Bakker; Zn".to_string(), "jan".into()][..],
                    &["Visser".to_string(), String::new()][..]
                ],
                "{text:?}"
            );
            assert_eq!(table.rows[1].line, 5);
        }
    }

    /// Hostile files: more rows than the limit are refused with what to do; a very long cell is
    /// cut and its row marked; a file with no header is said.
    #[test]
    fn limits_are_said() {
        let many = format!("name\n{}", "x\n".repeat(MAX_ROWS + 1));
        let refused = read(&many).unwrap_err();
        assert!(refused.to_string().contains("parts"), "{refused}");
        let long = format!("name\n{}\n", "y".repeat(10 * MAX_CELL));
        let table = read(&long).unwrap();
        assert!(table.rows[0].cut && table.rows[0].cells[0].len() == MAX_CELL);
        assert!(read(";;\nx\n").is_err(), "an empty header");
    }

    /// A row wider than the limit — the header of 30 million empty columns that made every
    /// row that wide, or a data row — is refused with its line, before a record is built; a
    /// delimiter inside quotes is no column; the limit itself is read.
    #[test]
    fn too_many_columns_are_refused() {
        let header = ",".repeat(30_000_000);
        let refused = read(&format!("name{header}\nBakker\n")).unwrap_err();
        assert!(
            refused.to_string().contains("Line 1") && refused.to_string().contains("columns"),
            "{refused}"
        );
        let wide_row = format!("name;user\nBakker;bakker\nx{}\n", ";".repeat(MAX_COLUMNS));
        assert!(read(&wide_row).unwrap_err().to_string().contains("Line 3"));
        let quoted = format!("name,user\n\"{}\",bakker\n", ",".repeat(10 * MAX_COLUMNS));
        assert_eq!(read(&quoted).unwrap().rows[0].cells[1], "bakker");
        let widest = format!("{}\n", vec!["c"; MAX_COLUMNS].join(","));
        assert_eq!(read(&widest).unwrap().header.len(), MAX_COLUMNS);
    }
}
