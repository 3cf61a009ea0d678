//! "Export report": a period's backups for auditors (kluis-reporting's report, as `kluis report`
//! makes it), as CSV or a printable page, saved where the user chooses in a native save
//! dialog — the webview sends the period and the format, never a path.

use jiff::tz::TimeZone;
use kluis_core::{Error, KlantKey};
use serde::{Deserialize, Serialize};

use super::keeping::Keeping;
use crate::error::AppResult;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ReportFormat {
    /// RFC 4180 CSV, one row per backup (for a spreadsheet).
    Csv,
    /// One HTML page per period with print styles (for the browser's Print or Save as PDF).
    Printable,
}

/// What the "Export report" form asks for: the period (days as YYYY-MM-DD, both included,
/// local time) and the format; one klant's backups (its profile id) or every klant's.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct ReportRequest {
    pub from: String,
    pub to: String,
    pub format: ReportFormat,
    pub profile: Option<String>,
}

/// Where the report went and how many backups it lists.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ReportExport {
    pub path: String,
    pub backups: u32,
}

impl Keeping {
    /// Makes the report, asks where to save it (a name such as
    /// `kluis-report-2026-11-01-2026-11-30.csv`, in the Downloads folder) and writes it whole or
    /// not at all, readable by the user only: it names klanten and where their backups are.
    /// `None` when the dialog was cancelled (nothing is written).
    pub async fn export_report(&self, request: ReportRequest) -> AppResult<Option<ReportExport>> {
        let from = kluis_reporting::parse_day(&request.from)?;
        let to = kluis_reporting::parse_day(&request.to)?;
        let report = kluis_reporting::report(
            &self.shared.profiles,
            &self.shared.history,
            from,
            to,
            request.profile.as_deref().map(KlantKey::profile).as_ref(),
            TimeZone::system(),
        )?;
        let (extension, bytes) = match request.format {
            ReportFormat::Csv => ("csv", report.csv()),
            ReportFormat::Printable => ("html", report.html().into_bytes()),
        };
        let name = format!("kluis-report-{from}-{to}.{extension}");
        let folder = crate::dialogs::default_folder();
        let Some(path) = self
            .shared
            .dialogs()
            .save_file(&name, folder.as_deref())
            .await
        else {
            return Ok(None);
        };
        let written = path.clone();
        tokio::task::spawn_blocking(move || kluis_private::files::write_atomic(&written, &bytes))
            .await
            .map_err(|e| Error::Io(format!("Writing the report stopped unexpectedly ({e}).")))?
            .map_err(|e| Error::io(format!("write the report to {}", path.display()), e))?;
        Ok(Some(ReportExport {
            path: path.display().to_string(),
            backups: report.rows.len() as u32,
        }))
    }
}
