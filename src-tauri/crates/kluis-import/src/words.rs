//! A plan and a retention rule as an office writes them in a spreadsheet cell, in English or
//! Dutch: `daily 02:00` / `dagelijks 02:00`, `weekdays 18:30` / `werkdagen 18:30`,
//! `weekly monday 02:00` / `wekelijks maandag 02:00`, `every 6h` / `elke 6u`, `manual` /
//! `handmatig`; `last 14, monthly 12` / `laatste 14, maandelijks 12`.

use kluis_core::plan::{ClockTime, Day, Schedule};
use kluis_core::retention::Retention;

/// The words of `cell`, lowercase, split at spaces and commas.
fn words(cell: &str) -> Vec<String> {
    (cell.split(|c: char| c.is_whitespace() || c == ',' || c == ';'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn day(word: &str) -> Option<Day> {
    Some(match word {
        "monday" | "maandag" | "mon" | "ma" => Day::Monday,
        "tuesday" | "dinsdag" | "tue" | "di" => Day::Tuesday,
        "wednesday" | "woensdag" | "wed" | "wo" => Day::Wednesday,
        "thursday" | "donderdag" | "thu" | "do" => Day::Thursday,
        "friday" | "vrijdag" | "fri" | "vr" => Day::Friday,
        "saturday" | "zaterdag" | "sat" | "za" => Day::Saturday,
        "sunday" | "zondag" | "sun" | "zo" => Day::Sunday,
        _ => return None,
    })
}

/// The schedule `cell` says, or why it is not one (what to write instead).
pub fn schedule(cell: &str) -> Result<Schedule, String> {
    let words = words(cell);
    let at = |w: &str| ClockTime::parse(w).map_err(|e| e.to_string());
    let said = || {
        format!(
            "\"{}\" is not a plan; write daily 02:00, weekdays 18:30, weekly monday 02:00, every 6h or manual.",
            cell.chars().take(40).collect::<String>()
        )
    };
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let schedule = match words.as_slice() {
        ["manual" | "handmatig" | "none" | "geen"] => Schedule::Manual,
        ["daily" | "dagelijks" | "day" | "dag", time] => Schedule::Daily { at: at(time)? },
        ["weekdays" | "werkdagen" | "workdays", time] => Schedule::Weekdays { at: at(time)? },
        ["weekly" | "wekelijks", d, time] => Schedule::Weekly {
            day: day(d).ok_or_else(said)?,
            at: at(time)?,
        },
        ["every" | "elke" | "iedere", hours] => {
            let number = hours.trim_end_matches(['h', 'u']);
            Schedule::Every {
                hours: number.parse().map_err(|_| said())?,
            }
        }
        _ => return Err(said()),
    };
    schedule.check().map_err(|e| e.to_string())?;
    Ok(schedule)
}

/// The retention rule `cell` says (`all`/`alles`: none, every backup kept), or why not.
pub fn retention(cell: &str) -> Result<Option<Retention>, String> {
    let said = || {
        format!(
            "\"{}\" is not a retention rule; write last 14, daily 7, weekly 4, monthly 12 (any of them) or all.",
            cell.chars().take(40).collect::<String>()
        )
    };
    let words = words(cell);
    if matches!(words.as_slice(), [w] if w == "all" || w == "alles") {
        return Ok(None);
    }
    if words.is_empty() || words.len() % 2 == 1 {
        return Err(said());
    }
    let mut rule = Retention::default();
    for pair in words.chunks(2) {
        // "last 14" or "14 last".
        let (word, number) = match (pair[0].parse::<u32>(), pair[1].parse::<u32>()) {
            (Err(_), Ok(n)) => (pair[0].as_str(), n),
            (Ok(n), Err(_)) => (pair[1].as_str(), n),
            _ => return Err(said()),
        };
        let slot = match word {
            "last" | "laatste" | "newest" | "nieuwste" => &mut rule.keep_last,
            "daily" | "dagelijks" | "days" | "dagen" => &mut rule.keep_daily,
            "weekly" | "wekelijks" | "weeks" | "weken" => &mut rule.keep_weekly,
            "monthly" | "maandelijks" | "months" | "maanden" => &mut rule.keep_monthly,
            _ => return Err(said()),
        };
        if number == 0 || slot.is_some() {
            return Err(said());
        }
        *slot = Some(number);
    }
    Ok(Some(rule))
}

/// `schedule` in the words [`schedule`] reads (English).
pub fn schedule_words(schedule: &Schedule) -> String {
    let day = |d: &Day| {
        serde_json::to_value(d)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    match schedule {
        Schedule::Manual => "manual".into(),
        Schedule::Daily { at } => format!("daily {at}"),
        Schedule::Weekdays { at } => format!("weekdays {at}"),
        Schedule::Weekly { day: d, at } => format!("weekly {} {at}", day(d)),
        Schedule::Every { hours } => format!("every {hours}h"),
    }
}

/// `rule` in the words [`retention`] reads (English); none keeps every backup: `all`.
pub fn retention_words(rule: Option<&Retention>) -> String {
    let Some(rule) = rule else {
        return "all".into();
    };
    let parts: Vec<String> = [
        ("last", rule.keep_last),
        ("daily", rule.keep_daily),
        ("weekly", rule.keep_weekly),
        ("monthly", rule.keep_monthly),
    ]
    .into_iter()
    .filter_map(|(word, n)| n.filter(|n| *n > 0).map(|n| format!("{word} {n}")))
    .collect();
    match parts.is_empty() {
        true => "all".into(),
        false => parts.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each form in English and Dutch; what is not one is said with what to write.
    #[test]
    fn plans_and_rules_are_read_in_both_languages() {
        let two = ClockTime::parse("02:00").unwrap();
        assert_eq!(schedule("daily 02:00"), Ok(Schedule::Daily { at: two }));
        assert_eq!(schedule("Dagelijks 02:00"), Ok(Schedule::Daily { at: two }));
        assert_eq!(
            schedule("wekelijks maandag 02:00"),
            Ok(Schedule::Weekly {
                day: Day::Monday,
                at: two
            })
        );
        assert_eq!(schedule("elke 6u"), Ok(Schedule::Every { hours: 6 }));
        assert_eq!(schedule("handmatig"), Ok(Schedule::Manual));
        for bad in [
            "daily",
            "daily 25:00",
            "weekly someday 02:00",
            "every 0h",
            "sometimes",
        ] {
            assert!(schedule(bad).is_err(), "{bad}");
        }
        let rule = retention("laatste 14, maandelijks 12").unwrap().unwrap();
        assert_eq!((rule.keep_last, rule.keep_monthly), (Some(14), Some(12)));
        assert_eq!(retention("alles"), Ok(None));
        for bad in ["last", "last 0", "last 3, last 4", "forever 3", ""] {
            assert!(retention(bad).is_err(), "{bad}");
        }
    }

    /// What is written for an export reads back as the same plan and rule.
    #[test]
    fn written_words_read_back() {
        let two = ClockTime::parse("02:00").unwrap();
        for plan in [
            Schedule::Manual,
            Schedule::Daily { at: two },
            Schedule::Weekdays { at: two },
            Schedule::Weekly {
                day: Day::Sunday,
                at: two,
            },
            Schedule::Every { hours: 6 },
        ] {
            assert_eq!(schedule(&schedule_words(&plan)), Ok(plan));
        }
        let rule = Retention {
            keep_last: Some(14),
            keep_monthly: Some(12),
            ..Retention::default()
        };
        assert_eq!(retention(&retention_words(Some(&rule))), Ok(Some(rule)));
        assert_eq!(retention(&retention_words(None)), Ok(None));
    }
}
