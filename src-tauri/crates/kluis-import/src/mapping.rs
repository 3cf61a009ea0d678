//! Which column holds what: the header's names matched to Kluis's fields ([`Field`]) in
//! English and Dutch, and as password managers name them in their exports (Bitwarden's
//! `login_username`, KeePass's `User Name`, 1Password's `Title`); shown to the user and
//! changeable before anything is imported.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a column can hold.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// The klant's name in Kluis (also how a row finds the klant again on a second import).
    Name,
    Username,
    /// A secret: never shown, never kept but in the keyring.
    Password,
    /// A secret, as the password.
    ApiKey,
    /// The service's address (`https://…/webservice_v2`).
    BaseUrl,
    /// When the klant is backed up: `daily 02:00`, `weekdays 18:30`, `weekly monday 02:00`,
    /// `every 6h`, `manual` (or in Dutch).
    Plan,
    /// Which backups are kept: `last 14, monthly 12` (or in Dutch).
    Retention,
    /// Tags, separated by commas (a password manager's folder or group is read as one).
    Tags,
}

impl Field {
    pub const ALL: [Field; 8] = [
        Field::Name,
        Field::Username,
        Field::Password,
        Field::ApiKey,
        Field::BaseUrl,
        Field::Plan,
        Field::Retention,
        Field::Tags,
    ];

    /// Header names (lowercase, with spaces, `_` and `-` taken out) read as this field.
    fn names(self) -> &'static [&'static str] {
        match self {
            Field::Name => &[
                "name",
                "naam",
                "klant",
                "klantnaam",
                "client",
                "customer",
                "title",
                "titel",
                "relatie",
            ],
            Field::Username => &[
                "username",
                "user",
                "gebruikersnaam",
                "gebruiker",
                "login",
                "loginusername",
                "loginname",
            ],
            Field::Password => &["password", "wachtwoord", "loginpassword", "pass", "pwd"],
            Field::ApiKey => &["apikey", "apisleutel", "sleutel", "key", "api"],
            Field::BaseUrl => &[
                "baseurl", "url", "loginuri", "uri", "website", "webadres", "adres", "service",
                "dienst",
            ],
            Field::Plan => &["plan", "schedule", "schema", "planning"],
            Field::Retention => &["retention", "keep", "bewaren", "bewaarregel", "rule"],
            Field::Tags => &[
                "tags", "tag", "labels", "label", "folder", "group", "groep", "map",
            ],
        }
    }
}

/// A header name as [`Field::names`] are written.
fn normalised(header: &str) -> String {
    (header.chars())
        .filter(|c| !matches!(c, ' ' | '_' | '-' | '.'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Which column (its index in the header) holds each field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Mapping {
    pub columns: BTreeMap<Field, usize>,
}

impl Mapping {
    /// The mapping the header's names suggest: each field to the first column named as it is
    /// (a column is used for one field only).
    pub fn guess(header: &[String]) -> Mapping {
        let mut columns = BTreeMap::new();
        for field in Field::ALL {
            let found = (header.iter().enumerate())
                .filter(|(i, _)| !columns.values().any(|taken| taken == i))
                .find(|(_, name)| field.names().contains(&normalised(name).as_str()));
            if let Some((i, _)) = found {
                columns.insert(field, i);
            }
        }
        Mapping { columns }
    }

    /// `field` read from column `column` (none: not imported).
    pub fn set(&mut self, field: Field, column: Option<usize>) {
        match column {
            Some(column) => {
                self.columns.retain(|_, c| *c != column);
                self.columns.insert(field, column);
            }
            None => {
                self.columns.remove(&field);
            }
        }
    }

    /// The cell of `field` in `cells`, when the field is mapped and the cell is not empty.
    pub fn cell<'a>(&self, field: Field, cells: &'a [String]) -> Option<&'a str> {
        let column = *self.columns.get(&field)?;
        cells
            .get(column)
            .map(String::as_str)
            .filter(|c| !c.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    /// Dutch headers, Bitwarden's and KeePass's exports are each mapped to the same fields.
    #[test]
    fn headers_are_guessed_in_each_form() {
        let dutch = Mapping::guess(&header(&[
            "Naam",
            "Gebruikersnaam",
            "Wachtwoord",
            "Plan",
            "Tags",
        ]));
        assert_eq!(dutch.columns.get(&Field::Name), Some(&0));
        assert_eq!(dutch.columns.get(&Field::Password), Some(&2));
        let bitwarden = Mapping::guess(&header(&[
            "folder",
            "favorite",
            "type",
            "name",
            "notes",
            "fields",
            "reprompt",
            "login_uri",
            "login_username",
            "login_password",
            "login_totp",
        ]));
        let at = |m: &Mapping, f| m.columns.get(&f).copied();
        const LOGIN: [Field; 5] = [
            Field::Name,
            Field::Username,
            Field::Password,
            Field::BaseUrl,
            Field::Tags,
        ];
        assert_eq!(
            LOGIN.map(|f| at(&bitwarden, f)),
            [Some(3), Some(8), Some(9), Some(7), Some(0)]
        );
        let keepass = Mapping::guess(&header(&[
            "Group", "Title", "Username", "Password", "URL", "Notes",
        ]));
        assert_eq!(
            LOGIN.map(|f| at(&keepass, f)),
            [Some(1), Some(2), Some(3), Some(4), Some(0)]
        );
        let mut changed = keepass.clone();
        changed.set(Field::Tags, None);
        changed.set(Field::Name, Some(5));
        assert_eq!(
            (at(&changed, Field::Tags), at(&changed, Field::Name)),
            (None, Some(5))
        );
    }
}
