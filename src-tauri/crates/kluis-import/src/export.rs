//! The klant list as a CSV file (no secret in it): to move to another PC, or to check in a
//! spreadsheet. Its columns are what [`crate::Mapping::guess`] reads, its plan and rule in the
//! words [`crate::words`] reads, so importing it again (with the passwords, from the office's
//! password manager) makes the same klanten. A cell a spreadsheet would run as a formula
//! (`=`, `+`, `-`, `@`) is written with a leading `'`, which reading takes off again.

use kluis_core::plan::Schedule;
use kluis_core::retention::Retention;

use crate::words::{retention_words, schedule_words};

/// One klant as exported.
pub struct Klant<'a> {
    pub name: &'a str,
    pub username: &'a str,
    pub base_url: &'a str,
    pub schedule: Option<&'a Schedule>,
    pub retention: Option<&'a Retention>,
    pub tags: &'a [String],
}

impl<'a> Klant<'a> {
    /// A saved profile as exported.
    pub fn of(p: &'a kluis_profiles::Profile) -> Klant<'a> {
        Klant {
            name: &p.name,
            username: &p.username,
            base_url: &p.base_url,
            schedule: p.plan.as_ref().map(|plan| &plan.schedule),
            retention: p.retention.as_ref(),
            tags: &p.tags,
        }
    }
}

/// The saved klanten `profiles` as CSV (see [`csv`]); demo profiles are not the office's and
/// are left out.
pub fn profiles_csv(profiles: &[kluis_profiles::Profile]) -> String {
    let klanten: Vec<Klant> = (profiles.iter().filter(|p| !p.demo))
        .map(Klant::of)
        .collect();
    csv(&klanten)
}

/// The header of an export.
pub const HEADER: [&str; 6] = ["name", "username", "base_url", "plan", "retention", "tags"];

/// A cell as a spreadsheet may open it: one that starts like a formula gets a leading `'`.
pub fn defused(cell: &str) -> String {
    match cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        true => format!("'{cell}"),
        false => cell.to_string(),
    }
}

/// `klanten` as CSV (comma-separated, UTF-8, CRLF line ends as spreadsheets write them).
pub fn csv(klanten: &[Klant<'_>]) -> String {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    writer.write_record(HEADER).expect("writing to memory");
    for k in klanten {
        let plan = k
            .schedule
            .map(schedule_words)
            .unwrap_or_else(|| "manual".into());
        let cells = [
            defused(k.name),
            defused(k.username),
            defused(k.base_url),
            plan,
            retention_words(k.retention),
            defused(&k.tags.join(", ")),
        ];
        writer.write_record(&cells).expect("writing to memory");
    }
    String::from_utf8(writer.into_inner().expect("writing to memory")).expect("UTF-8 in, UTF-8 out")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{preview, read_csv, Action, Known, Mapping};
    use kluis_core::plan::ClockTime;

    /// An export read back (on a PC that has the klant) updates the same klant with the same
    /// plan, rule and tags; a formula-like name survives as itself, defused in the file.
    #[test]
    fn an_export_reads_back_as_the_same_klanten() {
        let plan = Schedule::Weekdays {
            at: ClockTime::parse("18:30").unwrap(),
        };
        let rule = Retention {
            keep_daily: Some(7),
            ..Retention::default()
        };
        let tags = vec!["Jan".to_string(), "Bakkers".into()];
        let klant = Klant {
            name: "=Bakker, B.V.",
            username: "bakker",
            base_url: "https://service.example/webservice_v2",
            schedule: Some(&plan),
            retention: Some(&rule),
            tags: &tags,
        };
        let text = csv(&[klant]);
        assert!(text.contains("\"'=Bakker, B.V.\""), "{text}");
        let table = read_csv(text.as_bytes()).unwrap();
        let saved = [crate::preview::SavedKlant {
            name: "=Bakker, B.V.".into(),
            base_url: "https://service.example/webservice_v2".into(),
        }];
        let known = Known {
            saved: &saved,
            base_url: None,
            has_api_key: false,
            vault: &[],
            front: crate::preview::Front::Cli,
        };
        let rows = preview(&table, &Mapping::guess(&table.header), &known);
        let row = &rows[0];
        assert_eq!(row.action, Action::Update, "{:?}", row.problems);
        assert_eq!(
            (row.name.as_str(), row.username.as_str()),
            ("=Bakker, B.V.", "bakker")
        );
        assert_eq!(row.schedule, Some(plan));
        assert_eq!(row.retention, Some(Some(rule)));
        assert_eq!(row.tags, tags);
    }
}
