//! [`OfficeView`]: the office's PCs' last reports put together — every klant of every PC,
//! with its PCs — and what an office manager must act on, flagged: a klant planned on two PCs,
//! a klant only on PCs silent for more than a day or revoked (their last state shown), a klant
//! whose last backup on any PC is older than its plan allows, a failure, a backup another PC
//! was said to make that its own report does not bear out, a PC whose report cannot be opened
//! (or that sent none). A PC is silent by the hub's clock or by when it says it sent its
//! report, whichever is older.
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
    /// Another PC backed it up later, that PC says: when, and which.
    #[cfg_attr(feature = "ts", ts(type = "[number, string] | null"))]
    pub backed_up_elsewhere: Option<(i64, String)>,
    pub overdue: bool,
    pub last_error: Option<String>,
}

/// What needs someone's attention about a klant.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "flag", rename_all = "snake_case")]
pub enum Flag {
    /// Planned on more than one PC (of those the office hears of): the hub keeps it to one
    /// backup a slot, but one plan is enough (and each PC keeps copies of its own).
    PlannedTwice { pcs: Vec<String> },
    /// Every PC that plans it (of those the office hears of) says its last backup is older
    /// than the plan allows.
    Overdue,
    /// A PC's last try failed (since its last backup).
    Failed { pc: String, error: String },
    /// It is only on PCs that have been silent for more than a day: its state there is the
    /// last one heard.
    OnSilentPc { pc: String },
    /// It is only on a PC whose key was revoked: plan it on another PC.
    OnRevokedPc { pc: String },
    /// PC `pc` skipped it because, the hub said, PC `by` backed it up — and `by`'s own report,
    /// sent since, shows no such backup (a broken or hostile hub, or PC).
    Unconfirmed { pc: String, by: String },
    /// No PC the office hears of plans it: it is backed up only when someone clicks.
    NotPlanned,
}

impl OfficeView {
    /// The view of `received` reports at `now_ms` (this PC's clock).
    pub fn of(received: Vec<Received>, now_ms: i64) -> OfficeView {
        let mut pcs = Vec::new();
        let mut klanten: BTreeMap<String, KlantRow> = BTreeMap::new();
        let mut sent = BTreeMap::new();
        for r in received {
            let (unreadable, report) = match r.report {
                // A report whose inner name is not the PC's is not that PC's.
                Ok(report) if report.pc != r.pc => {
                    (Some(format!("{}'s report names another PC", r.pc)), None)
                }
                Ok(report) => (None, Some(report)),
                Err(why) => (Some(why), None),
            };
            // Silent by the hub's clock, or by when the PC says it sent the report (a hub
            // handing back an old report as new does not make a dead PC look alive).
            let sent_ago = report.as_ref().map_or(0, |rep| {
                now_ms
                    .saturating_sub(rep.sent_ms)
                    .saturating_sub(CLOCK_SKEW_MS)
            });
            let heard_ms_ago = r.age_ms.max(sent_ago).max(0);
            if let Some(rep) = &report {
                sent.insert(r.pc.clone(), rep.sent_ms);
            }
            pcs.push(PcRow {
                name: r.pc.clone(),
                heard_ms_ago,
                silent: heard_ms_ago > SILENT_AFTER_MS,
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
                row.on.push(OnPc {
                    pc: r.pc.clone(),
                    plan: k.plan.clone(),
                    last_backup_ms: k.last_backup_ms,
                    backed_up_elsewhere: k.backed_up_elsewhere.clone(),
                    overdue: k.overdue,
                    last_error: k.last_error.clone(),
                });
            }
        }
        let mut klanten: Vec<KlantRow> = (klanten.into_values())
            .map(|row| flagged(row, &pcs, &sent))
            .collect();
        klanten.sort_by(|a, b| (a.flags.is_empty(), &a.names).cmp(&(b.flags.is_empty(), &b.names)));
        OfficeView { pcs, klanten }
    }

    /// Whether every klant is safe: no flag on any, no PC of the office silent or unreadable
    /// (a revoked PC is no longer the office's: its klanten are flagged when no other PC has
    /// them).
    pub fn all_safe(&self) -> bool {
        self.klanten.iter().all(|k| k.flags.is_empty())
            && (self.pcs.iter())
                .filter(|p| !p.revoked)
                .all(|p| !p.silent && p.unreadable.is_none())
    }
}

/// What two PCs' clocks may differ by before the view takes a report for older than it is.
const CLOCK_SKEW_MS: i64 = 10 * 60 * 1000;

/// `row` with its newest backup and its flags; `pcs`: the office's PCs as heard of, `sent`:
/// when each PC's report was sent (by its clock).
fn flagged(mut row: KlantRow, pcs: &[PcRow], sent: &BTreeMap<String, i64>) -> KlantRow {
    let pc = |name: &str| pcs.iter().find(|p| p.name == name);
    let present = |name: &str| pc(name).is_some_and(|p| !p.silent && !p.revoked);
    // Each PC's own backup counts; one it says another PC made counts when that PC's own
    // report bears it out — or is older than the claim (not heard of since).
    let mut unconfirmed = Vec::new();
    for on in &row.on {
        let mut candidates = vec![on.last_backup_ms.map(|at| (at, on.pc.clone()))];
        if let Some((at, by)) = &on.backed_up_elsewhere {
            let theirs = row.on.iter().find(|o| &o.pc == by);
            let reported_since = sent
                .get(by)
                .is_some_and(|s| *s > at.saturating_add(CLOCK_SKEW_MS));
            let borne_out = theirs
                .and_then(|o| o.last_backup_ms)
                .is_some_and(|b| b.saturating_add(CLOCK_SKEW_MS) >= *at);
            // A PC the office has no word of (no readable report, revoked, silent) cannot
            // bear a claim out: it does not count.
            let known = present(by) && sent.contains_key(by);
            if !known || (reported_since && !borne_out) {
                unconfirmed.push(Flag::Unconfirmed {
                    pc: on.pc.clone(),
                    by: by.clone(),
                });
            } else {
                candidates.push(Some((*at, by.clone())));
            }
        }
        for candidate in candidates.into_iter().flatten() {
            if row
                .last_backup
                .as_ref()
                .is_none_or(|(at, _)| candidate.0 > *at)
            {
                row.last_backup = Some(candidate);
            }
        }
    }
    // Only the plans of PCs the office hears of count: a silent or revoked PC's plan backs
    // nothing up (its klanten are flagged below when no other PC has them).
    let planning: Vec<&OnPc> = (row.on.iter())
        .filter(|o| o.plan.is_some() && present(&o.pc))
        .collect();
    if planning.len() > 1 {
        row.flags.push(Flag::PlannedTwice {
            pcs: planning.iter().map(|o| o.pc.clone()).collect(),
        });
    }
    let heard_of = row.on.iter().any(|o| present(&o.pc));
    if planning.is_empty() && heard_of {
        row.flags.push(Flag::NotPlanned);
    } else if !planning.is_empty() && planning.iter().all(|o| o.overdue) {
        row.flags.push(Flag::Overdue);
    }
    row.flags.extend(unconfirmed);
    for on in &row.on {
        if let Some(error) = &on.last_error {
            row.flags.push(Flag::Failed {
                pc: on.pc.clone(),
                error: error.clone(),
            });
        }
    }
    // A klant only on PCs that are silent or revoked: nobody is looking after it.
    if !heard_of {
        for on in &row.on {
            match pc(&on.pc) {
                Some(p) if p.revoked => row.flags.push(Flag::OnRevokedPc { pc: on.pc.clone() }),
                _ => row.flags.push(Flag::OnSilentPc { pc: on.pc.clone() }),
            }
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

    /// This PC's clock in the tests.
    const NOW: i64 = 1_800_000_000_000;
    const HOUR: i64 = 3_600_000;

    /// PC `pc`'s report, sent (and received by the hub) `age_ms` ago.
    fn received(pc: &str, age_ms: i64, klanten: Vec<KlantReport>) -> Received {
        Received {
            pc: pc.into(),
            age_ms,
            revoked: false,
            report: Ok(PcReport {
                version: REPORT_VERSION,
                pc: pc.into(),
                sent_ms: NOW - age_ms,
                klanten,
            }),
        }
    }

    /// One klant on two PCs is one row with both PCs; a klant only on a PC silent for over a
    /// day, or a revoked one, is flagged (its last state kept), one another PC still has is
    /// not, and a silent PC's plan counts for nothing; a klant overdue on every PC that plans
    /// it is flagged; an unplanned one says so; a report that names another PC, or cannot be
    /// opened, counts for nothing and is said; attention first.
    #[test]
    fn the_office_view_flags_what_needs_attention() {
        let mut late_here = klant("b", "Bakker", true);
        late_here.overdue = true;
        let mut failed = klant("c", "Smit", true);
        failed.last_error = Some("The service could not be reached.".into());
        let mut later = klant("a", "Visser B.V.", true);
        later.last_backup_ms = Some(5_000);
        let mut mislabelled = received("BALIE", HOUR, vec![klant("x", "X", true)]);
        if let Ok(report) = &mut mislabelled.report {
            report.pc = "RECEPTIE".into();
        }
        let mut oud = received("OUD", HOUR, vec![klant("g", "Bos", true)]);
        oud.revoked = true;
        let receptie = vec![
            klant("a", "Visser", true),
            late_here,
            failed,
            klant("d", "Mulder", false),
        ];
        let laptop = vec![
            later,
            klant("b", "Bakker", true),
            klant("e", "Jansen", true),
        ];
        let view = OfficeView::of(
            vec![
                received("RECEPTIE", HOUR, receptie),
                received("LAPTOP", 30 * HOUR, laptop),
                mislabelled,
                oud,
            ],
            NOW,
        );
        let row = |name: &str| {
            view.klanten
                .iter()
                .find(|k| k.names.contains(&name.to_string()))
                .unwrap()
        };
        let visser = row("Visser");
        assert_eq!(visser.names, ["Visser", "Visser B.V."]);
        assert_eq!(visser.last_backup, Some((5_000, "LAPTOP".into())));
        assert_eq!(
            visser.flags,
            [],
            "a silent PC's plan counts for nothing; RECEPTIE has it"
        );
        assert_eq!(
            row("Jansen").flags,
            [Flag::OnSilentPc {
                pc: "LAPTOP".into()
            }]
        );
        assert_eq!(row("Bos").flags, [Flag::OnRevokedPc { pc: "OUD".into() }]);
        assert!(
            row("Bakker").flags.contains(&Flag::Overdue),
            "a silent LAPTOP keeps up with nothing"
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
        assert!(pc("BALIE").unreadable.is_some() && pc("OUD").revoked);
        assert!(!view.all_safe());
        let attention_first: Vec<bool> = view.klanten.iter().map(|k| k.flags.is_empty()).collect();
        assert!(
            attention_first.windows(2).all(|w| w[0] <= w[1]),
            "{attention_first:?}"
        );

        let mut overdue = klant("b", "Bakker", true);
        overdue.overdue = true;
        let alone = OfficeView::of(
            vec![received(
                "RECEPTIE",
                HOUR,
                vec![klant("a", "Aarts", true), overdue],
            )],
            NOW,
        );
        assert_eq!(
            alone.klanten[0].names,
            ["Bakker"],
            "attention first, then by name"
        );
        assert_eq!(
            alone.klanten[0].flags,
            [Flag::Overdue],
            "overdue on every PC that plans it"
        );
        assert!(alone.klanten[1].flags.is_empty());
        let fine = OfficeView::of(
            vec![received("RECEPTIE", HOUR, vec![klant("a", "Visser", true)])],
            NOW,
        );
        assert!(fine.all_safe());
        let twice = OfficeView::of(
            vec![
                received("RECEPTIE", HOUR, vec![klant("a", "Visser", true)]),
                received("BALIE", HOUR, vec![klant("a", "Visser", true)]),
            ],
            NOW,
        );
        let both = vec!["RECEPTIE".to_string(), "BALIE".to_string()];
        assert_eq!(twice.klanten[0].flags, [Flag::PlannedTwice { pcs: both }]);
        // Only a revoked PC planned it; the live PC that has it does not: nobody plans it.
        let mut oud = received("OUD", HOUR, vec![klant("a", "Visser", true)]);
        oud.revoked = true;
        let live = received("RECEPTIE", HOUR, vec![klant("a", "Visser", false)]);
        let orphan = OfficeView::of(vec![oud, live], NOW);
        assert_eq!(orphan.klanten[0].flags, [Flag::NotPlanned]);
        assert!(!orphan.all_safe());
        // A report with times at the ends of the range is read without overflow.
        let mut extreme = received("RECEPTIE", HOUR, vec![klant("a", "Visser", true)]);
        if let Ok(report) = &mut extreme.report {
            report.sent_ms = i64::MIN;
            report.klanten[0].last_backup_ms = Some(i64::MAX);
            report.klanten[0].backed_up_elsewhere = Some((i64::MAX, "RECEPTIE".into()));
        }
        assert!(OfficeView::of(vec![extreme], i64::MAX).pcs[0].silent);
    }

    /// A hub that hands back an old report as new does not make a dead PC look alive: the
    /// report's own time counts too. A revoked PC that is quiet keeps no klant from being safe
    /// when another PC has it.
    #[test]
    fn silence_is_judged_by_the_report_s_own_time_too() {
        let mut replayed = received("LAPTOP", 60_000, vec![klant("a", "Visser", true)]);
        if let Ok(report) = &mut replayed.report {
            report.sent_ms = NOW - 3 * 24 * HOUR;
        }
        let view = OfficeView::of(vec![replayed], NOW);
        assert!(view.pcs[0].silent, "{:?}", view.pcs[0]);
        let mut gone = received("OUD", 5 * 24 * HOUR, vec![klant("a", "Visser", true)]);
        gone.revoked = true;
        let view = OfficeView::of(
            vec![
                gone,
                received("RECEPTIE", HOUR, vec![klant("a", "Visser", true)]),
            ],
            NOW,
        );
        assert!(view.klanten[0]
            .flags
            .iter()
            .all(|f| !matches!(f, Flag::OnRevokedPc { .. } | Flag::OnSilentPc { .. })));
    }

    /// A backup PC RECEPTIE was told BALIE made counts when BALIE's own report bears it out (or
    /// has not been sent since); when BALIE's report, sent since, shows none, it is flagged and
    /// does not count as the klant's last backup.
    #[test]
    fn a_backup_said_to_be_made_elsewhere_must_be_borne_out() {
        let claimed = NOW - 2 * HOUR;
        let skipped = || {
            let mut k = klant("a", "Visser", true);
            k.last_backup_ms = Some(NOW - 50 * HOUR);
            k.backed_up_elsewhere = Some((claimed, "BALIE".into()));
            k
        };
        let balie = |last: i64, sent_ago: i64| {
            let mut k = klant("a", "Visser", true);
            k.last_backup_ms = Some(last);
            received("BALIE", sent_ago, vec![k])
        };
        let borne_out = OfficeView::of(
            vec![
                received("RECEPTIE", HOUR, vec![skipped()]),
                balie(claimed - 60_000, 60_000),
            ],
            NOW,
        );
        let row = &borne_out.klanten[0];
        assert!(
            !row.flags
                .iter()
                .any(|f| matches!(f, Flag::Unconfirmed { .. })),
            "{:?}",
            row.flags
        );
        assert_eq!(row.last_backup, Some((claimed, "BALIE".into())));
        let not_yet = OfficeView::of(
            vec![
                received("RECEPTIE", HOUR, vec![skipped()]),
                balie(NOW - 50 * HOUR, 3 * HOUR),
            ],
            NOW,
        );
        assert!(
            !not_yet.klanten[0]
                .flags
                .iter()
                .any(|f| matches!(f, Flag::Unconfirmed { .. })),
            "BALIE not heard of since"
        );
        let ghost = OfficeView::of(vec![received("RECEPTIE", HOUR, vec![skipped()])], NOW);
        assert!(
            ghost.klanten[0].flags.contains(&Flag::Unconfirmed {
                pc: "RECEPTIE".into(),
                by: "BALIE".into()
            }),
            "a PC the office has no report of bears nothing out"
        );
        let denied = OfficeView::of(
            vec![
                received("RECEPTIE", HOUR, vec![skipped()]),
                balie(NOW - 50 * HOUR, 60_000),
            ],
            NOW,
        );
        let row = &denied.klanten[0];
        assert!(
            row.flags.contains(&Flag::Unconfirmed {
                pc: "RECEPTIE".into(),
                by: "BALIE".into()
            }),
            "{:?}",
            row.flags
        );
        assert_eq!(
            row.last_backup,
            Some((NOW - 50 * HOUR, "RECEPTIE".into())),
            "the claim does not count"
        );
        assert!(!denied.all_safe());
    }
}
