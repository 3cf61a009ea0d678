//! The printable report: one self-contained HTML page (no script, no outside resource) of a
//! [`Report`], with a summary per klant and then a section per klant listing every backup.
//! Print styles put each klant on its own page, repeat a table's header on every page and
//! keep a row on one page; on screen it reads as a plain document.

use std::fmt::Write;

use crate::report::{Report, ReportRow, RowStatus};

/// Text made safe to place in HTML (element content and quoted attributes).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font: 10.5pt/1.4 system-ui, sans-serif; color: #111; margin: 2em; }
h1 { font-size: 16pt; margin: 0 0 .2em; }
h2 { font-size: 13pt; margin: 1.6em 0 .4em; }
p.meta { color: #444; margin: 0 0 1em; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1em; }
th, td { border-bottom: 1px solid #ccc; padding: .3em .4em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; white-space: nowrap; }
code { font-size: 8.5pt; word-break: break-all; }
.path { word-break: break-all; }
.bad { color: #a00; font-weight: 600; }
.ok { color: #060; }
@media print {
  @page { size: A4 landscape; margin: 12mm; }
  body { margin: 0; }
  section.klant { break-before: page; }
  thead { display: table-header-group; }
  tr { break-inside: avoid; }
}
";

/// A verification in words, marked when it is a problem.
fn verification(row: &ReportRow, report: &Report) -> String {
    match &row.last_check {
        None if row.status == RowStatus::Saved => "not verified".into(),
        None => String::new(),
        Some(check) => {
            let class = if check.finding.is_problem() {
                "bad"
            } else {
                "ok"
            };
            let detail = (check.detail.as_deref())
                .map(|d| format!("<br>{}", escape(d)))
                .unwrap_or_default();
            format!(
                "<span class=\"{class}\">{}</span> {}{detail}",
                escape(check.finding.as_str()),
                escape(&report_time(report, check.at_ms)),
            )
        }
    }
}

fn report_time(report: &Report, ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| {
            t.to_zoned(report.zone.clone())
                .strftime("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_default()
}

/// The digest cell: the backup's, and for an encrypted one the encrypted file's beneath it.
fn sha256(row: &ReportRow) -> String {
    let plain = escape(row.sha256.as_deref().unwrap_or_default());
    match &row.encrypted {
        Some(e) => format!(
            "{plain}<br>encrypted ({}): {}",
            size(Some(e.bytes)),
            escape(&e.sha256)
        ),
        None => plain,
    }
}

fn size(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        Some(b) if b >= 1_000 => format!("{:.1} kB", b as f64 / 1e3),
        Some(b) => format!("{b} B"),
        None => String::new(),
    }
}

fn status(row: &ReportRow, report: &Report) -> String {
    match (row.status, &row.error, &row.removed) {
        (RowStatus::Failed, Some((code, message)), _) => format!(
            "<span class=\"bad\">failed</span> ({})<br>{}",
            escape(code.as_str()),
            escape(message)
        ),
        (RowStatus::Removed, _, Some(removed)) => format!(
            "removed {} ({})",
            escape(&report_time(report, removed.at_ms)),
            escape(&removed.rule)
        ),
        (status, _, _) => escape(status.as_str()),
    }
}

impl Report {
    /// The report as one printable HTML page.
    pub fn html(&self) -> String {
        let mut page = String::new();
        let title = format!("Kluis backup report {} to {}", self.from, self.to);
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n",
            escape(&title)
        );
        let _ = writeln!(
            page,
            "<h1>{}</h1><p class=\"meta\">Every backup started from {} to {} (both days included, time zone {}), as Kluis recorded it. Made {}.</p>",
            escape(&title),
            self.from,
            self.to,
            escape(self.zone.iana_name().unwrap_or("local")),
            escape(&self.generated.strftime("%Y-%m-%d %H:%M %:z").to_string()),
        );
        let klanten = self.by_klant();
        page.push_str("<table><thead><tr><th>Klant</th><th>Saved</th><th>Failed</th><th>Removed by a rule</th><th>Last saved</th><th>Verification problems</th></tr></thead><tbody>\n");
        for rows in &klanten {
            let count = |status: RowStatus| rows.iter().filter(|r| r.status == status).count();
            let last = (rows.iter().rev())
                .find(|r| r.status.was_saved())
                .and_then(|r| r.finished_ms)
                .map(|ms| report_time(self, ms))
                .unwrap_or_else(|| "—".into());
            let problems = (rows.iter())
                .filter(|r| {
                    r.last_check
                        .as_ref()
                        .is_some_and(|c| c.finding.is_problem())
                })
                .count();
            let problems = match problems {
                0 => "0".to_string(),
                n => format!("<span class=\"bad\">{n}</span>"),
            };
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{last}</td><td class=\"num\">{problems}</td></tr>",
                escape(&rows[0].klant),
                count(RowStatus::Saved),
                count(RowStatus::Failed),
                count(RowStatus::Removed),
            );
        }
        page.push_str("</tbody></table>\n");
        if klanten.is_empty() {
            page.push_str("<p>No backups in this period.</p>\n");
        }
        for rows in &klanten {
            let _ = writeln!(
                page,
                "<section class=\"klant\"><h2>{}</h2><table><thead><tr><th>Started</th><th>Status</th><th>Size</th><th>SHA-256</th><th>Where</th><th>Verification</th><th>Copies</th><th>Restore test</th></tr></thead><tbody>",
                escape(&rows[0].klant)
            );
            for row in rows.iter() {
                let _ = writeln!(
                    page,
                    "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td><code>{}</code></td><td class=\"path\">{}</td><td>{}</td><td class=\"path\">{}</td><td>{}</td></tr>",
                    escape(&report_time(self, row.started_ms)),
                    status(row, self),
                    size(row.bytes),
                    sha256(row),
                    escape(row.path.as_deref().unwrap_or_default()),
                    verification(row, self),
                    (row.copies.iter())
                        .map(|c| escape(c))
                        .collect::<Vec<_>>()
                        .join("<br>"),
                    escape(row.restore_test.as_deref().unwrap_or("—")),
                );
            }
            page.push_str("</tbody></table></section>\n");
        }
        page.push_str("</body></html>\n");
        page
    }

    /// The rows, one group per klant (they come sorted by klant).
    fn by_klant(&self) -> Vec<&[ReportRow]> {
        self.rows
            .chunk_by(|a, b| a.profile_id == b.profile_id)
            .collect()
    }
}
