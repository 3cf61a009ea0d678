//! [`OfficeView`]: the office's PCs' last reports put together — every klant of every PC,
//! with its PCs — and what an office manager must act on, flagged: a klant planned on two PCs,
//! a PC silent for more than a day (its klanten's last state shown), a klant whose last backup
//! on any PC is older than its plan allows, a failure, a PC whose report cannot be opened.
//! The app's *Office* and `kluis office status` show it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::PcReport;

/// A PC silent for longer than this is flagged (a day: every PC reports at least hourly).
pub const SILENT_AFTER_MS: i64 = 24 * 60 * 60 * 1000;

/// A PC's report as the hub gave it, opened or not.
pub struct Received {
    pub pc: String,
    /// How long ago the hub received it (the hub's clock).
    pub age_ms: i64,
    pub revoked: bool,
    /// The report, or why it could not be opened.
    pub report: Result<PcReport, String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct OfficeView {
    pub pcs: Vec<PcRow>,
    /// Every klant, those needing attention first, then by name.
    pub klanten: Vec<KlantRow>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct PcRow {
    pub name: String,
    /// How long ago the hub last heard from it.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub heard_ms_ago: i64,
    /// Silent for more than [`SILENT_AFTER_MS`].
    pub silent: bool,
    pub revoked: bool,
    /// Why its report could not be read, if it could not.
    pub unreadable: Option<String>,
    pub klanten: usize,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct KlantRow {
    pub klant: String,
    /// Its names on the PCs that have it (one, mostly).
    pub names: Vec<String>,
    pub service: String,
    pub username: String,
    /// Each PC that has it, as that PC reported it.
    pub on: Vec<OnPc>,
    /// Its newest backup on any PC: when, and which PC.
    #[cfg_attr(feature = "ts", ts(type = "[number, string] | null"))]
    pub last_backup: Option<(i64, String)>,
    pub flags: Vec<Flag>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct OnPc {
    pub pc: String,
    pub plan: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub last_backup_ms: Option<i64>,
    pub overdue: bool,
    pub last_error: Option<String>,
}

/// What needs someone's attention about a klant.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "flag", rename_all = "snake_case")]
pub enum Flag {
    /// Planned on more than one PC: the hub keeps it to one backup a slot, but one plan is
    /// enough (and each PC keeps copies of its own).
    PlannedTwice { pcs: Vec<String> },
    /// Every PC that plans it says its last backup is older than the plan allows.
    Overdue,
    /// A PC's last try failed (since its last backup).
    Failed { pc: String, error: String },
    /// It is on a PC that has been silent for more than a day (or was revoked): its state
    /// there is the last one heard.
    OnSilentPc { pc: String },
    /// No PC plans it: it is backed up only when someone clicks.
    NotPlanned,
}

impl OfficeView {
    /// The view of `received` reports.
    pub fn of(received: Vec<Received>) -> OfficeView {
        let mut pcs = Vec::new();
        let mut klanten: BTreeMap<String, KlantRow> = BTreeMap::new();
        let mut silent_pcs = Vec::new();
        for r in received {
            let silent = r.age_ms > SILENT_AFTER_MS;
            if silent || r.revoked {
                silent_pcs.push(r.pc.clone());
            }
            let (unreadable, report) = match r.report {
                // A report whose inner name is not the PC's is not that PC's.
                Ok(report) if report.pc != r.pc => {
                    (Some(format!("{}'s report names another PC", r.pc)), None)
                }
                Ok(report) => (None, Some(report)),
                Err(why) => (Some(why), None),
            };
            pcs.push(PcRow {
                name: r.pc.clone(),
                heard_ms_ago: r.age_ms,
                silent,
                revoked: r.revoked,
                unreadable,
                klanten: report.as_ref().map_or(0, |rep| rep.klanten.len()),
            });
            for k in report.into_iter().flat_map(|rep| rep.klanten) {
                let row = klanten.entry(k.klant.clone()).or_insert_with(|| KlantRow {
                    klant: k.klant.clone(),
                    names: Vec::new(),
                    service: k.service.clone(),
                    username: k.username.clone(),
                    on: Vec::new(),
                    last_backup: None,
                    flags: Vec::new(),
                });
                if !row.names.contains(&k.name) {
                    row.names.push(k.name.clone());
                }
                let newest = [
                    k.last_backup_ms.map(|at| (at, r.pc.clone())),
                    k.backed_up_elsewhere.clone(),
                ];
                for candidate in newest.into_iter().flatten() {
                    if row
                        .last_backup
                        .as_ref()
                        .is_none_or(|(at, _)| candidate.0 > *at)
                    {
                        row.last_backup = Some(candidate);
                    }
                }
                row.on.push(OnPc {
                    pc: r.pc.clone(),
                    plan: k.plan.clone(),
                    last_backup_ms: k.last_backup_ms,
                    overdue: k.overdue,
                    last_error: k.last_error.clone(),
                });
            }
        }
        let mut klanten: Vec<KlantRow> = klanten
            .into_values()
            .map(|row| flagged(row, &silent_pcs))
            .collect();
        klanten.sort_by(|a, b| (a.flags.is_empty(), &a.names).cmp(&(b.flags.is_empty(), &b.names)));
        OfficeView { pcs, klanten }
    }

    /// Whether every klant is safe: no flag on any, no PC silent or unreadable.
    pub fn all_safe(&self) -> bool {
        self.klanten.iter().all(|k| k.flags.is_empty())
            && self.pcs.iter().all(|p| !p.silent && p.unreadable.is_none())
    }
}

/// `row` with its flags.
fn flagged(mut row: KlantRow, silent_pcs: &[String]) -> KlantRow {
    let planning: Vec<&OnPc> = row.on.iter().filter(|o| o.plan.is_some()).collect();
    if planning.len() > 1 {
        row.flags.push(Flag::PlannedTwice {
            pcs: planning.iter().map(|o| o.pc.clone()).collect(),
        });
    }
    if planning.is_empty() {
        row.flags.push(Flag::NotPlanned);
    } else if planning.iter().all(|o| o.overdue) {
        row.flags.push(Flag::Overdue);
    }
    for on in &row.on {
        if let Some(error) = &on.last_error {
            row.flags.push(Flag::Failed {
                pc: on.pc.clone(),
                error: error.clone(),
            });
        }
        if silent_pcs.contains(&on.pc) {
            row.flags.push(Flag::OnSilentPc { pc: on.pc.clone() });
        }
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{KlantReport, REPORT_VERSION};

    fn klant(id: &str, name: &str, plan: bool) -> KlantReport {
        KlantReport {
            klant: id.into(),
            name: name.into(),
            service: "https://api.example.nl/webservice_v2".into(),
            username: name.to_lowercase(),
            plan: plan.then(|| "every day at 02:00".into()),
            last_backup_ms: Some(1_000),
            backed_up_elsewhere: None,
            last_error: None,
            overdue: false,
            next_due_ms: None,
            copies: None,
            restore_test_failed: false,
            restore_test_overdue: false,
        }
    }

    fn received(pc: &str, age_ms: i64, klanten: Vec<KlantReport>) -> Received {
        Received {
            pc: pc.into(),
            age_ms,
            revoked: false,
            report: Ok(PcReport {
                version: REPORT_VERSION,
                pc: pc.into(),
                sent_ms: 0,
                klanten,
            }),
        }
    }

    /// One klant on two PCs is one row with both PCs, flagged as planned twice; a PC silent for
    /// over a day flags its klanten (their last state kept); a klant overdue on every PC that
    /// plans it is flagged, one that another PC keeps up with is not; an unplanned one says so;
    /// a report that names another PC, or cannot be opened, counts for nothing and is said.
    #[test]
    fn the_office_view_flags_what_needs_attention() {
        let hour = 3_600_000;
        let mut late_here = klant("b", "Bakker", true);
        late_here.overdue = true;
        let mut failed = klant("c", "Smit", true);
        failed.last_error = Some("The service could not be reached.".into());
        let mut later = klant("a", "Visser B.V.", true);
        later.last_backup_ms = Some(5_000);
        let mut mislabelled = received("BALIE", hour, vec![klant("x", "X", true)]);
        if let Ok(report) = &mut mislabelled.report {
            report.pc = "RECEPTIE".into();
        }
        let view = OfficeView::of(vec![
            received(
                "RECEPTIE",
                hour,
                vec![
                    klant("a", "Visser", true),
                    late_here,
                    failed,
                    klant("d", "Mulder", false),
                ],
            ),
            received(
                "LAPTOP",
                30 * hour,
                vec![
                    later,
                    klant("b", "Bakker", true),
                    klant("e", "Jansen", true),
                ],
            ),
            mislabelled,
            Received {
                pc: "OUD".into(),
                age_ms: hour,
                revoked: true,
                report: Err("cannot be opened".into()),
            },
        ]);
        let row = |name: &str| {
            view.klanten
                .iter()
                .find(|k| k.names.contains(&name.to_string()))
                .unwrap()
        };
        let visser = row("Visser");
        assert_eq!(visser.names, ["Visser", "Visser B.V."]);
        assert_eq!(visser.last_backup, Some((5_000, "LAPTOP".into())));
        assert!(visser.flags.contains(&Flag::PlannedTwice {
            pcs: vec!["RECEPTIE".into(), "LAPTOP".into()]
        }));
        assert!(visser.flags.contains(&Flag::OnSilentPc {
            pc: "LAPTOP".into()
        }));
        assert!(
            !row("Bakker").flags.contains(&Flag::Overdue),
            "LAPTOP keeps up with it"
        );
        assert!(row("Smit")
            .flags
            .iter()
            .any(|f| matches!(f, Flag::Failed { pc, .. } if pc == "RECEPTIE")));
        assert_eq!(row("Mulder").flags, [Flag::NotPlanned]);
        assert!(
            !view.klanten.iter().any(|k| k.klant == "x"),
            "a report passed off as another PC's"
        );
        let pc = |name: &str| view.pcs.iter().find(|p| p.name == name).unwrap();
        assert!(pc("LAPTOP").silent && !pc("RECEPTIE").silent);
        assert!(
            pc("BALIE").unreadable.is_some() && pc("OUD").unreadable.is_some() && pc("OUD").revoked
        );
        assert!(!view.all_safe());

        let mut overdue = klant("b", "Bakker", true);
        overdue.overdue = true;
        let alone = OfficeView::of(vec![received(
            "RECEPTIE",
            hour,
            vec![klant("a", "Aarts", true), overdue],
        )]);
        assert_eq!(
            alone.klanten[0].flags,
            [Flag::Overdue],
            "overdue on every PC that plans it"
        );
        let fine = OfficeView::of(vec![received(
            "RECEPTIE",
            hour,
            vec![klant("a", "Visser", true)],
        )]);
        assert!(fine.all_safe());
    }
}
