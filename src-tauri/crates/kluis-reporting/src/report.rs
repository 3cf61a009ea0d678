//! Reports for auditors: every backup of a period, per klant, with when, its size, its
//! SHA-256, where it is, its status and what its last verification found — as CSV (one row a
//! backup, for a spreadsheet or a script) or as a printable HTML page (a section per klant,
//! with print styles). `kluis report` writes them; both are built from [`Report`].
//!
//! Both formats hold text that came from outside (klant names, paths, the service's error
//! messages): HTML escapes it, and CSV neutralises a text cell a spreadsheet would run as a
//! formula (one starting with `=`, `+`, `-`, `@`, a tab or a carriage return) by putting `'`
//! before it, as OWASP advises — and so each piece after a `,`, `;` or tab, which a spreadsheet
//! set to another separator makes a cell of its own.

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use kluis_core::{Code, History, HistoryEntry, KlantKey, Stage};

use kluis_copies::CopyTarget;
use kluis_core::copies::CopyRecord;
use kluis_profiles::ProfileStore;

/// One backup as a report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRow {
    pub klant: String,
    /// Whose backup it is (the history's key).
    pub profile_id: KlantKey,
    pub job: String,
    pub started_ms: i64,
    pub finished_ms: Option<i64>,
    pub status: RowStatus,
    pub bytes: Option<u64>,
    pub sha256: Option<String>,
    pub path: Option<String>,
    /// A failure's code and message.
    pub error: Option<(Code, String)>,
    pub removed: Option<kluis_core::history::Removal>,
    pub last_check: Option<kluis_core::history::Check>,
    /// For an encrypted backup: the encrypted file's length and SHA-256 (`bytes`, `sha256`
    /// are the plain stream's).
    pub encrypted: Option<kluis_core::EncryptedFile>,
    /// Its copies off this computer, each in words: "NAS: /mnt/nas/… (intact 2026-11-24
    /// 09:00)", or why it is not there.
    pub copies: Vec<String>,
    /// Its last restore test in words: "passed 2026-11-25 10:00 (412 entries, 1.2 GB in
    /// 14 s)", or "failed …: what did not restore".
    pub restore_test: Option<String>,
}

/// How a backup in a report ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowStatus {
    Saved,
    /// Saved, then deleted by a retention rule.
    Removed,
    Failed,
    Cancelled,
    /// Still running, or stopped and kept for a resume.
    Unfinished,
}

impl RowStatus {
    /// The word a report shows (the CSV's `status` column).
    pub fn as_str(self) -> &'static str {
        match self {
            RowStatus::Saved => "saved",
            RowStatus::Removed => "removed",
            RowStatus::Failed => "failed",
            RowStatus::Cancelled => "cancelled",
            RowStatus::Unfinished => "unfinished",
        }
    }

    /// Saved, whether or not a rule has removed the file since.
    pub fn was_saved(self) -> bool {
        matches!(self, RowStatus::Saved | RowStatus::Removed)
    }
}

/// Every backup of a period, in local time `zone`.
#[derive(Debug, Clone)]
pub struct Report {
    pub from: Date,
    /// The last day included.
    pub to: Date,
    pub zone: TimeZone,
    pub generated: Zoned,
    /// By klant (name), then oldest first.
    pub rows: Vec<ReportRow>,
}

impl ReportRow {
    fn of(entry: HistoryEntry, klant: String) -> ReportRow {
        let status = match (entry.stage, entry.error_code) {
            (Stage::Saved, _) if entry.removed.is_some() => RowStatus::Removed,
            (Stage::Saved, _) => RowStatus::Saved,
            (Stage::Failed, Some(Code::Cancelled)) => RowStatus::Cancelled,
            (Stage::Failed, _) => RowStatus::Failed,
            _ => RowStatus::Unfinished,
        };
        let error = match entry.stage {
            Stage::Failed => Some((
                entry.error_code.unwrap_or(Code::ServiceError),
                entry.error_message.clone().unwrap_or_default(),
            )),
            _ => None,
        };
        let saved = entry.stage == Stage::Saved;
        ReportRow {
            klant,
            profile_id: entry.profile,
            job: entry.id,
            started_ms: entry.started_at_ms,
            finished_ms: entry.finished_at_ms,
            status,
            bytes: entry.bytes.filter(|_| saved),
            sha256: entry.sha256.filter(|_| saved),
            path: entry.path.filter(|_| saved),
            error,
            removed: entry.removed,
            last_check: entry.last_check.filter(|_| saved),
            encrypted: entry.encrypted.filter(|_| saved),
            copies: Vec::new(),
            restore_test: None,
        }
    }
}

/// `record` in words for a report, its target named from `targets` (or by its id, when the
/// target was removed since).
fn copy_in_words(
    record: &CopyRecord,
    targets: &[CopyTarget],
    time: impl Fn(i64) -> String,
) -> String {
    let target = (targets.iter())
        .find(|t| t.id == record.target)
        .map_or(record.target.as_str(), |t| t.name.as_str());
    match (&record.last_check, record.made) {
        (Some(check), true) => format!(
            "{target}: {} ({} {})",
            record.location.as_deref().unwrap_or_default(),
            check.finding,
            time(check.at_ms)
        ),
        (None, true) => format!(
            "{target}: {} (copied {})",
            record.location.as_deref().unwrap_or_default(),
            time(record.at_ms)
        ),
        (_, false) => format!(
            "{target}: not copied ({})",
            record.error_message.as_deref().unwrap_or("not tried yet")
        ),
    }
}

/// A report's day as typed or sent by a date field (YYYY-MM-DD).
pub fn parse_day(text: &str) -> kluis_core::Result<Date> {
    text.trim().parse().map_err(|_| {
        kluis_core::Error::Config(format!(
            "\"{}\" is not a day; write it as YYYY-MM-DD, e.g. 2026-11-01.",
            text.chars().take(20).collect::<String>()
        ))
    })
}

/// The report of `from` to `to` (both days included, local time in `zone`), of one
/// profile's backups (its id, or a name the history records) or every one's. Klanten are
/// named as the profiles file names them; backups of a profile no longer saved, by the name
/// the history records.
pub fn report(
    profiles: &ProfileStore,
    history: &History,
    from: Date,
    to: Date,
    profile: Option<&KlantKey>,
    zone: TimeZone,
) -> kluis_core::Result<Report> {
    if to < from {
        return Err(kluis_core::Error::Config(
            "The report's period ends before it begins: --to is a later day than --from.".into(),
        ));
    }
    let start = |day: Date| -> kluis_core::Result<i64> {
        let at = day.to_zoned(zone.clone()).map_err(|e| {
            kluis_core::Error::Config(format!("The day {day} cannot be used ({e})."))
        })?;
        Ok(at.timestamp().as_millisecond())
    };
    let end = to
        .tomorrow()
        .map_err(|e| kluis_core::Error::Config(format!("The day {to} cannot be used ({e}).")))?;
    let entries = history.between(start(from)?, start(end)?, profile)?;
    let names = kluis_profiles::klant_names(&profiles.list(), history)?;
    let targets = profiles.settings().copy_targets;
    let time = |ms: i64| {
        (Timestamp::from_millisecond(ms).ok())
            .map(|t| {
                t.to_zoned(zone.clone())
                    .strftime("%Y-%m-%d %H:%M")
                    .to_string()
            })
            .unwrap_or_default()
    };
    let mut rows = Vec::new();
    for e in entries {
        let klant = names
            .get(&e.profile)
            .cloned()
            .unwrap_or_else(|| e.profile.to_string());
        let copies = (history.copies_of(&e.id)?.iter())
            .map(|record| copy_in_words(record, &targets, time))
            .collect();
        let restore_test =
            (history.restore_test_of(&e.id)?).map(|t| restore_test_in_words(&t, time));
        rows.push(ReportRow {
            copies,
            restore_test,
            ..ReportRow::of(e, klant)
        });
    }
    rows.sort_by(|a, b| {
        (a.klant.to_lowercase(), &a.profile_id, a.started_ms).cmp(&(
            b.klant.to_lowercase(),
            &b.profile_id,
            b.started_ms,
        ))
    });
    Ok(Report {
        from,
        to,
        generated: Timestamp::now().to_zoned(zone.clone()),
        zone,
        rows,
    })
}

/// The CSV columns, in order.
pub const CSV_COLUMNS: [&str; 20] = [
    "klant",
    "profile_id",
    "job",
    "started",
    "finished",
    "status",
    "bytes",
    "sha256",
    "path",
    "error_code",
    "error_message",
    "removed_at",
    "removed_by_rule",
    "verified_at",
    "verification",
    "verification_detail",
    "encrypted_bytes",
    "encrypted_sha256",
    "copies",
    "restore_test",
];

/// A restore test in words (see [`ReportRow::restore_test`]).
fn restore_test_in_words(
    test: &kluis_core::restore_tests::RestoreTestRecord,
    time: impl Fn(i64) -> String,
) -> String {
    let summary = format!(
        "{} entries, {} bytes in {:.1} s",
        test.entries,
        test.bytes,
        test.took_ms as f64 / 1000.0
    );
    match (test.passed, &test.detail) {
        (true, _) => format!("passed {} ({summary})", time(test.at_ms)),
        (false, Some(detail)) => format!("failed {}: {detail}", time(test.at_ms)),
        (false, None) => format!("failed {} ({summary})", time(test.at_ms)),
    }
}

/// A text cell as a spreadsheet may show it: never a formula — neither the cell as written
/// nor any piece of it a spreadsheet splitting on another separator makes into a cell (Excel
/// with Dutch settings splits on `;`): a formula's first character after `,`, `;` or a tab
/// gets a `'` too.
fn cell(text: &str) -> String {
    let starts_formula = |c: char| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r');
    let mut out = String::with_capacity(text.len() + 1);
    let mut at_start = true;
    for c in text.chars() {
        if at_start && starts_formula(c) {
            out.push('\'');
        }
        out.push(c);
        at_start = matches!(c, ',' | ';' | '\t');
    }
    out
}

impl Report {
    /// `2026-11-24 02:00:13 +01:00` for `ms`, in the report's zone.
    fn time(&self, ms: i64) -> String {
        Timestamp::from_millisecond(ms)
            .map(|t| {
                t.to_zoned(self.zone.clone())
                    .strftime("%Y-%m-%d %H:%M:%S %:z")
                    .to_string()
            })
            .unwrap_or_default()
    }

    /// The report as CSV (RFC 4180, a header row, UTF-8): one row per backup.
    pub fn csv(&self) -> Vec<u8> {
        let mut out = csv::Writer::from_writer(Vec::new());
        let write = |out: &mut csv::Writer<Vec<u8>>, record: &[String]| {
            out.write_record(record)
                .expect("writing to memory cannot fail");
        };
        write(&mut out, &CSV_COLUMNS.map(String::from));
        for row in &self.rows {
            let opt_time = |ms: Option<i64>| ms.map(|ms| self.time(ms)).unwrap_or_default();
            write(
                &mut out,
                &[
                    cell(&row.klant),
                    cell(row.profile_id.as_str()),
                    row.job.clone(),
                    self.time(row.started_ms),
                    opt_time(row.finished_ms),
                    row.status.as_str().to_string(),
                    row.bytes.map(|b| b.to_string()).unwrap_or_default(),
                    row.sha256.clone().unwrap_or_default(),
                    cell(row.path.as_deref().unwrap_or_default()),
                    row.error
                        .as_ref()
                        .map(|(c, _)| c.to_string())
                        .unwrap_or_default(),
                    cell(
                        row.error
                            .as_ref()
                            .map(|(_, m)| m.as_str())
                            .unwrap_or_default(),
                    ),
                    opt_time(row.removed.as_ref().map(|r| r.at_ms)),
                    cell(
                        row.removed
                            .as_ref()
                            .map(|r| r.rule.as_str())
                            .unwrap_or_default(),
                    ),
                    opt_time(row.last_check.as_ref().map(|c| c.at_ms)),
                    (row.last_check.as_ref())
                        .map(|c| c.finding.to_string())
                        .unwrap_or_default(),
                    cell(
                        (row.last_check.as_ref())
                            .and_then(|c| c.detail.as_deref())
                            .unwrap_or_default(),
                    ),
                    (row.encrypted.as_ref())
                        .map(|e| e.bytes.to_string())
                        .unwrap_or_default(),
                    (row.encrypted.as_ref())
                        .map(|e| e.sha256.clone())
                        .unwrap_or_default(),
                    cell(&row.copies.join(" | ")),
                    cell(row.restore_test.as_deref().unwrap_or_default()),
                ],
            );
        }
        out.into_inner().expect("writing to memory cannot fail")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use kluis_core::download::Saved;
    use kluis_core::history::Check;
    use kluis_core::verify::Finding;
    use kluis_core::Error;

    use super::*;
    use kluis_profiles::Profile;

    struct Office {
        _dir: tempfile::TempDir,
        profiles: ProfileStore,
        history: History,
    }

    /// A klant with a hostile name and one named plainly; backups saved (one verified
    /// changed, one removed by a rule), failed and cancelled.
    fn office() -> (Office, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let profiles = ProfileStore::open(dir.path().join("profiles.json")).unwrap();
        let hostile = Profile::new("=HYPERLINK(\"http://x\")<script>", "https://h/ws", "u");
        let bakker = Profile::new("Bakker B.V.", "https://h/ws", "u");
        profiles.put(hostile.clone()).unwrap();
        profiles.put(bakker.clone()).unwrap();
        let history = History::in_memory().unwrap();
        let mut ids = Vec::new();
        let saved = |profile: &str, n: u8| {
            let id = uuid::Uuid::new_v4();
            history
                .start(id, &KlantKey::profile(profile), "relay")
                .unwrap();
            let saved = Saved {
                path: format!("/backups/{profile}/backup {n}.zip").into(),
                bytes: 1000 + n as u64,
                sha256: format!("{n:02x}").repeat(32),
                encrypted: (n == 2).then(|| kluis_core::EncryptedFile {
                    bytes: 1200,
                    sha256: "ee".repeat(32),
                }),
            };
            history.saved(id, &saved).unwrap();
            id
        };
        let kept = saved(&bakker.id, 1);
        let removed = saved(&bakker.id, 2);
        history
            .removed(&removed.to_string(), "keep the last 1")
            .unwrap();
        let check = Check {
            at_ms: Timestamp::now().as_millisecond(),
            finding: Finding::Changed,
            detail: Some("-It is 3 bytes.".into()),
        };
        history.checked(&kept.to_string(), &check).unwrap();
        let failed = uuid::Uuid::new_v4();
        history.start(failed, &hostile.key(), "relay").unwrap();
        let error = Error::Network("The service could not be reached.".into());
        history.failed(failed, Stage::Accepted, &error).unwrap();
        let cancelled = uuid::Uuid::new_v4();
        history.start(cancelled, &bakker.key(), "relay").unwrap();
        history
            .failed(cancelled, Stage::Downloading, &Error::Cancelled)
            .unwrap();
        ids.extend([kept, removed, failed, cancelled].map(|id| id.to_string()));
        let office = Office {
            _dir: dir,
            profiles,
            history,
        };
        (office, ids)
    }

    fn today() -> Date {
        Zoned::now().with_time_zone(TimeZone::UTC).date()
    }

    /// The office's report of `from` to `to`, in UTC.
    fn of(o: &Office, from: Date, to: Date) -> kluis_core::Result<Report> {
        report(&o.profiles, &o.history, from, to, None, TimeZone::UTC)
    }

    /// A formula is neutralised at the start of a cell and after each separator a spreadsheet
    /// may split on (`;` with Dutch settings): `Bakker;=HYPERLINK(…)` would otherwise put a
    /// formula in the next cell. Text without one is left as it is.
    #[test]
    fn a_formula_after_a_separator_is_neutralised() {
        assert_eq!(cell("=1+1"), "'=1+1");
        assert_eq!(
            cell("Bakker;=HYPERLINK(\"x\")"),
            "Bakker;'=HYPERLINK(\"x\")"
        );
        assert_eq!(cell("a,@SUM(1);+2\t-3"), "a,'@SUM(1);'+2\t'-3");
        assert_eq!(
            cell("Bakker B.V.; Jansen - De Vries"),
            "Bakker B.V.; Jansen - De Vries"
        );
        assert_eq!(cell(""), "");
    }

    /// A backup's last restore test is in its row (the CSV's `restore_test` column and the
    /// printable page): passed with its counts, or failed with what did not restore.
    #[test]
    fn a_restore_test_is_reported() {
        let (o, ids) = office();
        let at_ms = Timestamp::now().as_millisecond();
        let test = |passed: bool| kluis_core::restore_tests::RestoreTestRecord {
            job: ids[0].clone(),
            at_ms,
            passed,
            entries: 412,
            bytes: 1_200,
            took_ms: 1_500,
            detail: (!passed).then(|| "2025/a.csv: CRC-32".into()),
            target: None,
        };
        o.history.restore_tested(&test(true)).unwrap();
        let report = of(&o, today(), today()).unwrap();
        let row = report.rows.iter().find(|r| r.job == ids[0]).unwrap();
        let said = row.restore_test.as_deref().unwrap();
        assert!(
            said.starts_with("passed ") && said.ends_with("(412 entries, 1200 bytes in 1.5 s)"),
            "{said}"
        );
        let csv = String::from_utf8(report.csv()).unwrap();
        assert!(
            csv.lines().next().unwrap().ends_with(",restore_test"),
            "{csv}"
        );
        assert!(csv.contains("412 entries"), "{csv}");
        o.history.restore_tested(&test(false)).unwrap();
        let report = of(&o, today(), today()).unwrap();
        let row = report.rows.iter().find(|r| r.job == ids[0]).unwrap();
        assert!(
            row.restore_test.as_deref().unwrap().contains("failed")
                && row.restore_test.as_deref().unwrap().contains("CRC-32")
        );
        assert!(
            report.html().contains("2025/a.csv: CRC-32"),
            "the printable page shows it"
        );
        assert_eq!(
            report
                .rows
                .iter()
                .filter(|r| r.restore_test.is_some())
                .count(),
            1,
            "only the tested backup"
        );
    }

    /// The CSV parses back into what the history holds, row for row — status, size, digest,
    /// path, failure, removal and verification — with the klanten named; a name a spreadsheet
    /// would run as a formula is neutralised.
    #[test]
    fn the_csv_parses_back() {
        let (o, ids) = office();
        let made = of(&o, today(), today()).unwrap();
        let csv = made.csv();
        let mut reader = csv::Reader::from_reader(csv.as_slice());
        assert_eq!(
            reader.headers().unwrap().iter().collect::<Vec<_>>(),
            CSV_COLUMNS
        );
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 4);
        let row = |id: &str| {
            let row = rows
                .iter()
                .find(|r| &r[2] == id)
                .expect("every backup has a row");
            CSV_COLUMNS
                .iter()
                .zip(row.iter())
                .map(|(k, v)| (*k, v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        let kept = row(&ids[0]);
        assert_eq!(kept["klant"], "Bakker B.V.");
        assert_eq!(kept["status"], "saved");
        assert_eq!(kept["bytes"], "1001");
        assert_eq!(kept["sha256"], "01".repeat(32));
        let entry = o.history.get(ids[0].parse().unwrap()).unwrap().unwrap();
        assert_eq!(kept["path"], entry.path.unwrap());
        assert_eq!(kept["verification"], "changed");
        assert_eq!(
            kept["verification_detail"], "'-It is 3 bytes.",
            "a leading - is not a formula"
        );
        assert!(!kept["verified_at"].is_empty());
        let removed = row(&ids[1]);
        assert_eq!(
            (
                removed["status"].as_str(),
                removed["removed_by_rule"].as_str()
            ),
            ("removed", "keep the last 1")
        );
        assert_eq!(
            (
                removed["encrypted_bytes"].as_str(),
                removed["encrypted_sha256"].as_str()
            ),
            ("1200", "ee".repeat(32).as_str()),
            "both digests of an encrypted backup"
        );
        assert_eq!(kept["encrypted_sha256"], "");
        let failed = row(&ids[2]);
        assert_eq!(failed["status"], "failed");
        assert_eq!(failed["error_code"], "network");
        assert_eq!(failed["klant"], "'=HYPERLINK(\"http://x\")<script>");
        assert_eq!(
            (failed["bytes"].as_str(), failed["path"].as_str()),
            ("", "")
        );
        assert_eq!(row(&ids[3])["status"], "cancelled");

        let tomorrow = today().tomorrow().unwrap();
        let later = of(&o, tomorrow, tomorrow).unwrap();
        assert!(later.rows.is_empty(), "only the period's backups");
        assert!(of(&o, tomorrow, today()).is_err());
    }

    /// The printable page has a section per klant with every backup's digest, escapes what
    /// came from outside, and has print styles.
    #[test]
    fn the_printable_page_escapes_and_prints() {
        let (o, _) = office();
        let page = of(&o, today(), today()).unwrap().html();
        assert!(!page.contains("<script>"), "a name is text, not markup");
        assert!(page.contains("=HYPERLINK(&quot;http://x&quot;)&lt;script&gt;"));
        assert_eq!(page.matches("<section class=\"klant\">").count(), 2);
        assert!(page.contains(&"01".repeat(32)) && page.contains(&"02".repeat(32)));
        assert!(page.contains("@media print") && page.contains("break-before: page"));
        assert!(page.contains("<span class=\"bad\">changed</span>"));
    }
}
