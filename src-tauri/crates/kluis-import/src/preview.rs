//! What an import would do, row by row, before anything is stored: each row read through the
//! [`Mapping`] into a klant ([`Planned`]) — added, or updated when a saved klant has its name
//! — or skipped with its problems (no name or username, no password for a new klant, a
//! service address that is not https, a plan or rule that is not one, the same name twice,
//! control characters, a cell cut at the limit). Secrets are carried, never shown.
//!
//! A row that gives a saved klant another service address moves it there — shown as such
//! ([`Planned::moves_from`]) — and only with a password and an api key the row, a password
//! manager's export or the import itself gives: the klant's saved secrets are never sent to an
//! address from a file (a spreadsheet is mailed around an office; a row of it must not be able
//! to point a klant, and with it its saved password and api key, at another server). A row
//! without an address keeps the saved klant's own.

use kluis_core::plan::Schedule;
use kluis_core::retention::Retention;
use kluis_core::Secret;
use serde::Serialize;

use crate::mapping::{Field, Mapping};
use crate::table::{Table, MAX_CELL};
use crate::words;

/// What a row comes to.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A new klant.
    Add,
    /// The saved klant of this name, its settings (and secrets, when the row has them) set.
    Update,
    /// Not imported: see the row's problems.
    Skip,
}

/// One row as it would be imported.
#[derive(Debug, Clone, Serialize)]
pub struct Planned {
    /// Its line in the file.
    pub line: u64,
    pub action: Action,
    pub name: String,
    pub username: String,
    pub base_url: Option<String>,
    /// The saved klant's service address, when the row moves it to another (`base_url`).
    pub moves_from: Option<String>,
    /// The plan the row sets (none: the row names none).
    pub schedule: Option<Schedule>,
    /// The rule the row sets: `Some(None)` keeps every backup; none: the row names none.
    pub retention: Option<Option<Retention>>,
    pub tags: Vec<String>,
    /// Whether the row has a password / an api key (never what they are).
    pub has_password: bool,
    pub has_api_key: bool,
    #[serde(skip)]
    pub password: Option<Secret>,
    #[serde(skip)]
    pub api_key: Option<Secret>,
    /// Why the row is skipped.
    pub problems: Vec<String>,
}

/// A saved klant, as [`preview`] matches a row to it.
#[derive(Debug, Clone)]
pub struct SavedKlant {
    pub name: String,
    pub base_url: String,
}

impl SavedKlant {
    /// The saved `profiles`, as a preview matches rows to them.
    pub fn of(profiles: &[kluis_profiles::Profile]) -> Vec<SavedKlant> {
        (profiles.iter())
            .map(|p| SavedKlant {
                name: p.name.clone(),
                base_url: p.base_url.clone(),
            })
            .collect()
    }
}

/// What [`preview`] needs of what is there already.
pub struct Known<'a> {
    /// The saved klanten (a row of one of their names updates it).
    pub saved: &'a [SavedKlant],
    /// The service address for new klanten whose row names none (`--base-url`).
    pub base_url: Option<&'a str>,
    /// An api key for rows that have none (the office's: one key serves every klant).
    pub has_api_key: bool,
    /// A password manager's logins, for rows without a password (see [`crate::vault`]).
    pub vault: &'a [crate::vault::Login],
    /// Whose words a problem uses for what is given for every klant.
    pub front: Front,
}

/// Where the import runs: a problem names what the user can give there for every klant (the
/// CLI's flag or variable, the app's field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Front {
    Cli,
    App,
}

impl Front {
    fn no_base_url(self) -> &'static str {
        match self {
            Front::Cli => "no service address (a base URL column, or --base-url)",
            Front::App => "no service address (a column, or the address for every klant)",
        }
    }

    fn no_api_key(self) -> &'static str {
        match self {
            Front::Cli => "no api key (an api key column, or KLUIS_API_KEY for every klant)",
            Front::App => "no api key (a column, or the office's api key for every klant)",
        }
    }

    /// Why a row that moves a saved klant from `from` to `to` is skipped: it gives no
    /// password (`no_password`) or no api key for the new address.
    fn moved_without(self, from: &str, to: &str, no_password: bool) -> String {
        let short = |url: &str| url.chars().take(80).collect::<String>();
        let (from, to) = (short(from), short(to));
        let needs = match (self, no_password) {
            (Front::Cli, true) => {
                "the klant's password there (a password column, or --secrets FILE)"
            }
            (Front::App, true) => {
                "the klant's password there (a password column, or the password manager's export)"
            }
            (Front::Cli, false) => "an api key (an api key column, or KLUIS_API_KEY)",
            (Front::App, false) => "an api key (a column, or the office's api key)",
        };
        let otherwise = match self {
            Front::Cli => "",
            Front::App => "; or change the address in the klant's own form",
        };
        format!("the row moves the klant from {from} to {to}: that needs {needs}, as the saved one is never sent to another address{otherwise}")
    }
}

/// Whether two service addresses are the same: scheme, host, port and path, case in the host
/// and a trailing `/` aside.
pub fn same_address(a: &str, b: &str) -> bool {
    let key = |text: &str| {
        url::Url::parse(text.trim()).ok().map(|u| {
            (
                u.scheme().to_string(),
                u.host_str().map(str::to_lowercase),
                u.port_or_known_default(),
                u.path().trim_end_matches('/').to_string(),
            )
        })
    };
    match (key(a), key(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a.trim() == b.trim(),
    }
}

/// A name as two rows, or a row and a saved klant, are matched: case and surrounding space
/// aside.
fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// Each row of `table` as it would be imported through `mapping` (see the module's text).
pub fn preview(table: &Table, mapping: &Mapping, known: &Known<'_>) -> Vec<Planned> {
    let mut planned: Vec<Planned> = Vec::with_capacity(table.rows.len());
    for row in &table.rows {
        let cell = |field| mapping.cell(field, &row.cells);
        let mut problems = Vec::new();
        if row.cut {
            problems.push(format!("a cell is longer than {MAX_CELL} characters"));
        }
        if row.cells.iter().any(|c| c.chars().any(char::is_control)) {
            problems.push("a cell holds control characters (a line break, a tab)".into());
        }
        let name = cell(Field::Name).unwrap_or_default().to_string();
        let username = cell(Field::Username).unwrap_or_default().to_string();
        if name.is_empty() {
            problems.push("no name".into());
        }
        if username.is_empty() {
            problems.push("no username".into());
        }
        let saved = (known.saved.iter()).find(|k| !name.is_empty() && same_name(&k.name, &name));
        let base_url = match saved {
            Some(saved) => Some(cell(Field::BaseUrl).unwrap_or(&saved.base_url)),
            None => cell(Field::BaseUrl).or(known.base_url),
        }
        .map(str::to_string);
        match &base_url {
            None => problems.push(known.front.no_base_url().into()),
            Some(url) if !url.starts_with("https://") || url.contains(char::is_whitespace) => {
                problems.push(format!(
                    "the service address \"{}\" is not an https:// address",
                    url.chars().take(60).collect::<String>()
                ))
            }
            Some(_) => {}
        }
        let schedule =
            cell(Field::Plan).and_then(|c| words::schedule(c).map_err(|e| problems.push(e)).ok());
        let retention = cell(Field::Retention)
            .and_then(|c| words::retention(c).map_err(|e| problems.push(e)).ok());
        let tags: Vec<String> = (cell(Field::Tags).unwrap_or_default().split([',', ';', '/']))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        let password = (cell(Field::Password).map(Secret::new)).or_else(|| {
            crate::vault::find(known.vault, &name, &username, base_url.as_deref())
                .map(|login| login.password.clone())
        });
        let api_key = cell(Field::ApiKey).map(Secret::new);
        let exists = saved.is_some();
        let moves_from = (saved.zip(base_url.as_ref()))
            .filter(|(saved, url)| !same_address(&saved.base_url, url))
            .map(|(saved, _)| saved.base_url.clone());
        let needs_password = (!exists || moves_from.is_some()) && !name.is_empty();
        if needs_password && password.is_none() {
            if let Some(login) =
                crate::vault::named_elsewhere(known.vault, &name, base_url.as_deref())
            {
                problems.push(format!(
                    "the password manager's login \"{}\" is saved for another site (or none) and was not used: add the service's address to it, or put the password in the file",
                    login.name.chars().take(60).collect::<String>()
                ));
            }
        }
        if !exists && password.is_none() && !name.is_empty() {
            problems.push("no password for a new klant".into());
        }
        if !exists && api_key.is_none() && !known.has_api_key && !name.is_empty() {
            problems.push(known.front.no_api_key().into());
        }
        if let (Some(from), Some(to)) = (&moves_from, &base_url) {
            if password.is_none() {
                problems.push(known.front.moved_without(from, to, true));
            }
            if api_key.is_none() && !known.has_api_key {
                problems.push(known.front.moved_without(from, to, false));
            }
        }
        if let Some(first) = planned
            .iter()
            .find(|p| !name.is_empty() && same_name(&p.name, &name))
        {
            problems.push(format!("the same name as line {}", first.line));
        }
        let action = match (problems.is_empty(), exists) {
            (false, _) => Action::Skip,
            (true, true) => Action::Update,
            (true, false) => Action::Add,
        };
        planned.push(Planned {
            line: row.line,
            action,
            name,
            username,
            base_url,
            moves_from,
            schedule,
            retention,
            tags,
            has_password: password.is_some(),
            has_api_key: api_key.is_some(),
            password,
            api_key,
            problems,
        });
    }
    planned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table;

    /// A file of five klanten: one new, one saved already (updated), and three skipped, each
    /// with its problem; the rows' secrets are carried but never serialised.
    #[test]
    fn each_row_is_added_updated_or_skipped_with_why() {
        let text = "naam;gebruikersnaam;wachtwoord;plan;bewaren\n\
                    Bakker B.V.;bakker;geheim-1;dagelijks 02:00;laatste 14\n\
                    Visser;visser;;;\n\
                    ;jansen;geheim-3;;\n\
                    De Vries;vries;geheim-4;soms;\n\
                    bakker b.v.;bakker2;geheim-5;;\n";
        let table = table::read(text).unwrap();
        let mapping = Mapping::guess(&table.header);
        let saved = [SavedKlant {
            name: "Visser".into(),
            base_url: "https://service.example/webservice_v2".into(),
        }];
        let known = Known {
            saved: &saved,
            base_url: Some("https://service.example/webservice_v2"),
            has_api_key: true,
            vault: &[],
            front: Front::Cli,
        };
        let rows = preview(&table, &mapping, &known);
        let actions: Vec<Action> = rows.iter().map(|r| r.action).collect();
        assert_eq!(
            actions,
            [
                Action::Add,
                Action::Update,
                Action::Skip,
                Action::Skip,
                Action::Skip
            ]
        );
        assert!(rows[0].schedule.is_some() && rows[0].retention.is_some());
        assert_eq!(rows[2].problems, ["no name"]);
        assert!(
            rows[3].problems[0].contains("\"soms\" is not a plan"),
            "{:?}",
            rows[3].problems
        );
        assert_eq!(rows[4].problems, ["the same name as line 2"]);
        let json = serde_json::to_string(&rows).unwrap();
        assert!(!json.contains("geheim"), "no secret in the preview: {json}");
        assert!(json.contains("\"has_password\":true"));
    }

    /// A new klant needs a password and an api key, a service address over https; control
    /// characters and cut cells are said.
    #[test]
    fn what_a_new_klant_lacks_is_said() {
        let text = "name,username,url\nA,a,http://plain.example\n\"B\nC\",b,https://x.example\n";
        let table = table::read(text).unwrap();
        let known = Known {
            saved: &[],
            base_url: None,
            has_api_key: false,
            vault: &[],
            front: Front::Cli,
        };
        let rows = preview(&table, &Mapping::guess(&table.header), &known);
        let said = rows[0].problems.join("; ");
        for why in ["not an https://", "no password", "no api key"] {
            assert!(said.contains(why), "{said}");
        }
        assert!(
            rows[1]
                .problems
                .iter()
                .any(|p| p.contains("control characters")),
            "{:?}",
            rows[1].problems
        );
    }

    /// A row without a password gets its klant's from a password manager's export (by name,
    /// or by username, among the logins saved for its host); a row with one keeps its own;
    /// a login saved for another site is not taken.
    #[test]
    fn passwords_come_from_the_vault() {
        let text = "name,username,password\nBakker B.V.,bakker,\nVisser,visser,eigen\nJansen,jansen,\nDe Vries,vries,\n";
        let table = table::read(text).unwrap();
        let vault = crate::vault::read(
            b"Title,Website,Username,Password\nbakker b.v.,https://service.example,x,uit-de-kluis\nVisser,https://service.example,visser,niet-deze\nDe Vries,https://elders.example,vries,van-elders\n",
        )
        .unwrap();
        let known = Known {
            saved: &[],
            base_url: Some("https://service.example/webservice_v2"),
            has_api_key: true,
            vault: &vault,
            front: Front::Cli,
        };
        let rows = preview(&table, &Mapping::guess(&table.header), &known);
        let password = |i: usize| rows[i].password.as_ref().map(|s| s.expose().to_string());
        assert_eq!(password(0).as_deref(), Some("uit-de-kluis"));
        assert_eq!(password(1).as_deref(), Some("eigen"));
        assert_eq!(password(2), None);
        assert_eq!(rows[2].problems, ["no password for a new klant"]);
        assert_eq!(password(3), None, "saved for another site");
        assert!(
            rows[3].problems[0].contains("\"De Vries\" is saved for another site"),
            "said, not thought lost: {:?}",
            rows[3].problems
        );
    }

    /// A row that gives a saved klant another address moves it — shown as a move — only with
    /// a password the row or the password manager's export gives for the new address, and an
    /// api key the row or the import gives; without, it is skipped and says why. A row
    /// without an address keeps the klant's own (also when an address for new klanten is
    /// given), and the same address written otherwise is no move.
    #[test]
    fn a_new_address_is_a_move_that_needs_new_secrets() {
        let text = "name,username,url,password\n\
                    Bakker,bakker,https://evil.example/webservice_v2,\n\
                    Visser,visser,https://nieuw.example/webservice_v2,nieuw-geheim\n\
                    Jansen,jansen,,\n\
                    De Vries,vries,HTTPS://Service.Example/webservice_v2/,\n\
                    Smit,smit,https://nieuw.example/webservice_v2,\n";
        let table = table::read(text).unwrap();
        let old = "https://service.example/webservice_v2";
        let saved: Vec<SavedKlant> = ["Bakker", "Visser", "Jansen", "De Vries", "Smit"]
            .iter()
            .map(|name| SavedKlant {
                name: name.to_string(),
                base_url: old.into(),
            })
            .collect();
        let vault = crate::vault::read(
            b"Title,Website,Username,Password\nBakker,https://service.example,bakker,echt\nSmit,https://nieuw.example,smit,uit-de-kluis\n",
        )
        .unwrap();
        let mut known = Known {
            saved: &saved,
            base_url: Some("https://ander.example/webservice_v2"),
            has_api_key: true,
            vault: &vault,
            front: Front::Cli,
        };
        let rows = preview(&table, &Mapping::guess(&table.header), &known);
        let row = |name: &str| rows.iter().find(|r| r.name == name).unwrap();
        let bakker = row("Bakker");
        assert_eq!(
            bakker.action,
            Action::Skip,
            "no password for the new address"
        );
        assert_eq!(bakker.moves_from.as_deref(), Some(old));
        assert!(
            bakker.problems[0].contains("\"Bakker\" is saved for another site")
                && bakker.problems[1]
                    .contains("from https://service.example/webservice_v2 to https://evil.example")
                && bakker.problems[1].contains("never sent to another address"),
            "the export's login for the old address not used, and why: {:?}",
            bakker.problems
        );
        let visser = row("Visser");
        assert_eq!(
            (visser.action, visser.moves_from.as_deref()),
            (Action::Update, Some(old))
        );
        let jansen = row("Jansen");
        assert_eq!(
            (
                jansen.action,
                jansen.base_url.as_deref(),
                jansen.moves_from.as_deref()
            ),
            (Action::Update, Some(old), None),
            "no address in the row: the saved klant's own, not the one for new klanten"
        );
        assert_eq!(
            row("De Vries").moves_from,
            None,
            "the same address, written otherwise"
        );
        let smit = row("Smit");
        assert_eq!(
            (
                smit.action,
                smit.password.as_ref().map(|p| p.expose().to_string())
            ),
            (Action::Update, Some("uit-de-kluis".to_string())),
            "the export's login for the new address"
        );
        known.has_api_key = false;
        let rows = preview(&table, &Mapping::guess(&table.header), &known);
        let visser = rows.iter().find(|r| r.name == "Visser").unwrap();
        assert_eq!(visser.action, Action::Skip, "no api key but the saved one");
        assert!(
            visser.problems.iter().any(|p| p.contains("api key")),
            "{:?}",
            visser.problems
        );
    }
}
