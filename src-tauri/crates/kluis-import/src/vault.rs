//! The passwords of a password manager's export, for the rows of an import file that have
//! none: Bitwarden (CSV, or its unencrypted JSON), KeePass and KeePassXC (CSV, or KeePass 2's
//! XML), 1Password (CSV). Each login is matched to a row by its name — or, when no name
//! matches, by its username at the row's service host. Secrets only: never shown, never kept.

use std::collections::HashMap;

use kluis_core::{Error, Result, Secret};
use serde::Deserialize;

use crate::mapping::{Field, Mapping};

/// One login of the export.
#[derive(Debug, Clone)]
pub struct Login {
    pub name: String,
    pub username: String,
    /// Its address (the host is what a row's base URL is matched by).
    pub url: String,
    pub password: Secret,
}

fn unreadable(what: &str, why: impl std::fmt::Display) -> Error {
    Error::Config(format!(
        "The password manager's export cannot be read as {what} ({why}). Export it again as CSV."
    ))
}

/// The logins of the export `bytes` (JSON, XML, CSV or .xlsx, told by its first bytes);
/// entries without a password are left out.
pub fn read(bytes: &[u8]) -> Result<Vec<Login>> {
    let text = crate::text::decode(bytes);
    let start = text.trim_start();
    let logins = match start.as_bytes().first() {
        Some(b'{') => bitwarden_json(start)?,
        Some(b'<') => keepass_xml(start)?,
        _ => tabular(&crate::read_file(bytes)?),
    };
    Ok(logins
        .into_iter()
        .filter(|l| !l.password.is_empty())
        .collect())
}

/// A table of logins (Bitwarden's, KeePassXC's or 1Password's CSV: their header names are the
/// import's).
fn tabular(table: &crate::Table) -> Vec<Login> {
    let mapping = Mapping::guess(&table.header);
    (table.rows.iter())
        .map(|row| {
            let cell = |f| mapping.cell(f, &row.cells).unwrap_or_default().to_string();
            Login {
                name: cell(Field::Name),
                username: cell(Field::Username),
                url: cell(Field::BaseUrl),
                password: Secret::new(cell(Field::Password)),
            }
        })
        .collect()
}

#[derive(Deserialize)]
struct BitwardenExport {
    #[serde(default)]
    encrypted: bool,
    #[serde(default)]
    items: Vec<BitwardenItem>,
}

#[derive(Deserialize)]
struct BitwardenItem {
    #[serde(default)]
    name: String,
    login: Option<BitwardenLogin>,
}

#[derive(Deserialize)]
struct BitwardenLogin {
    username: Option<String>,
    password: Option<String>,
    #[serde(default)]
    uris: Option<Vec<BitwardenUri>>,
}

#[derive(Deserialize)]
struct BitwardenUri {
    uri: Option<String>,
}

/// Bitwarden's JSON export (its `items` with a `login`); an encrypted export is refused.
fn bitwarden_json(text: &str) -> Result<Vec<Login>> {
    let export: BitwardenExport =
        serde_json::from_str(text).map_err(|e| unreadable("Bitwarden's JSON", e))?;
    if export.encrypted {
        return Err(Error::Config(
            "This Bitwarden export is encrypted; export the vault again as JSON or CSV (not \"encrypted\").".into(),
        ));
    }
    Ok((export.items.into_iter())
        .filter_map(|item| {
            let login = item.login?;
            let url = (login.uris.unwrap_or_default().into_iter())
                .find_map(|u| u.uri)
                .unwrap_or_default();
            Some(Login {
                name: item.name,
                username: login.username.unwrap_or_default(),
                url,
                password: Secret::new(login.password.unwrap_or_default()),
            })
        })
        .collect())
}

/// KeePass 2's XML export: each `Entry`'s `String`s (`Title`, `UserName`, `Password`,
/// `URL`); the entries of its history (`History`) are older versions, left out.
fn keepass_xml(text: &str) -> Result<Vec<Login>> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut logins = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let (mut fields, mut key, mut value) = (HashMap::new(), String::new(), String::new());
    loop {
        match reader
            .read_event()
            .map_err(|e| unreadable("KeePass's XML", e))?
        {
            Event::Start(tag) => {
                let name = tag.name().as_ref().to_string();
                if name == "Entry" && !path.iter().any(|p| p == "History") {
                    fields = HashMap::new();
                }
                path.push(name);
            }
            // Text comes in pieces: plain text, and each entity (`&amp;`, `&#38;`) on its own.
            Event::Text(t) => push(&path, &mut key, &mut value, &t.xml10_content()),
            Event::GeneralRef(r) => {
                let raw = format!("&{};", r.into_inner());
                let text = quick_xml::escape::unescape(&raw)
                    .map_err(|e| unreadable("KeePass's XML", e))?;
                push(&path, &mut key, &mut value, &text);
            }
            Event::End(_) => {
                let in_history = path.iter().any(|p| p == "History");
                match path.pop().as_deref() {
                    Some("String") if !in_history => {
                        fields.insert(std::mem::take(&mut key), std::mem::take(&mut value));
                    }
                    Some("String") => {
                        key.clear();
                        value.clear();
                    }
                    Some("Entry") if !in_history => {
                        let mut take = |k: &str| fields.remove(k).unwrap_or_default();
                        logins.push(Login {
                            name: take("Title"),
                            username: take("UserName"),
                            url: take("URL"),
                            password: Secret::new(take("Password")),
                        });
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(logins)
}

/// `text` added to the `Key` or the `Value` being read (by the innermost of `path`).
fn push(path: &[String], key: &mut String, value: &mut String, text: &str) {
    match path.last().map(String::as_str) {
        Some("Key") => key.push_str(text),
        Some("Value") => value.push_str(text),
        _ => {}
    }
}

/// The address `url` parsed (`https://` taken when it names no scheme).
fn parsed(url: &str) -> Option<url::Url> {
    let url = url.trim();
    url::Url::parse(url)
        .or_else(|_| url::Url::parse(&format!("https://{url}")))
        .ok()
}

/// The site of an address: its host and port (443 when it names none) — a login saved for a
/// site is a password for it, not for another port of the same host.
fn site(url: &str) -> Option<(String, Option<u16>)> {
    let parsed = parsed(url)?;
    Some((
        parsed.host_str()?.to_lowercase(),
        parsed.port_or_known_default(),
    ))
}

/// The login of `logins` for a klant named `name` with `username` at `base_url`: among the
/// logins saved for its service's site (host and port), the one of its name (case aside), else
/// the one of its username. A login saved for another site, or for none, is never taken: a name alone would
/// hand a klant's password for one server to whatever address an import row names.
pub fn find<'a>(
    logins: &'a [Login],
    name: &str,
    username: &str,
    base_url: Option<&str>,
) -> Option<&'a Login> {
    let same = |a: &str, b: &str| {
        !a.trim().is_empty() && a.trim().to_lowercase() == b.trim().to_lowercase()
    };
    let wanted = site(base_url?)?;
    let at_host: Vec<&Login> = (logins.iter())
        .filter(|l| site(&l.url).as_ref() == Some(&wanted))
        .collect();
    (at_host.iter().find(|l| same(&l.name, name)))
        .or_else(|| at_host.iter().find(|l| same(&l.username, username)))
        .copied()
}

/// A login of `logins` of the klant's `name` that [`find`] leaves out because it was saved for
/// another site than `base_url`'s, or for none: said, so that its password is not thought
/// lost.
pub fn named_elsewhere<'a>(
    logins: &'a [Login],
    name: &str,
    base_url: Option<&str>,
) -> Option<&'a Login> {
    let wanted = base_url.and_then(site);
    (logins.iter()).find(|l| {
        !name.trim().is_empty()
            && l.name.trim().to_lowercase() == name.trim().to_lowercase()
            && (wanted.is_none() || site(&l.url) != wanted)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each manager's export as it really looks (by their documentation): the same login read
    /// from each; an entry without a password and KeePass's history left out.
    #[test]
    fn each_password_manager_export_is_read() {
        let bitwarden_csv = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n\
            Klanten,,login,Bakker B.V.,,,0,https://service.example/webservice_v2,bakker,geheim-1,\n\
            ,,note,Een notitie,tekst,,0,,,,\n";
        let bitwarden_json = r#"{"encrypted": false, "folders": [], "items": [
            {"id": "1", "type": 1, "name": "Bakker B.V.", "login": {"uris": [{"match": null, "uri": "https://service.example/webservice_v2"}], "username": "bakker", "password": "geheim-1", "totp": null}},
            {"id": "2", "type": 2, "name": "Een notitie", "secureNote": {"type": 0}}]}"#;
        let keepassxc_csv = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n\
            \"Root/Klanten\",\"Bakker B.V.\",\"bakker\",\"geheim-1\",\"https://service.example/webservice_v2\",\"\",\"\",\"0\",\"2026-11-01T10:00:00Z\",\"2026-11-01T10:00:00Z\"\n";
        let keepass_xml = r#"<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<KeePassFile><Root><Group><Name>Klanten</Name>
<Entry><String><Key>Title</Key><Value>Bakker B.V.</Value></String><String><Key>UserName</Key><Value>bakker</Value></String>
<String><Key>Password</Key><Value ProtectInMemory="True">geheim&amp;1</Value></String><String><Key>URL</Key><Value>https://service.example/webservice_v2</Value></String>
<History><Entry><String><Key>Title</Key><Value>Bakker (oud)</Value></String><String><Key>Password</Key><Value>oud</Value></String></Entry></History>
</Entry></Group></Root></KeePassFile>"#;
        let onepassword_csv =
            "Title,Website,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n\
            Bakker B.V.,https://service.example/webservice_v2,bakker,geheim-1,,false,false,,\n";
        for (form, text) in [
            ("bitwarden csv", bitwarden_csv),
            ("bitwarden json", bitwarden_json),
            ("keepassxc csv", keepassxc_csv),
            ("keepass xml", keepass_xml),
            ("1password csv", onepassword_csv),
        ] {
            let logins = read(text.as_bytes()).unwrap_or_else(|e| panic!("{form}: {e}"));
            assert_eq!(logins.len(), 1, "{form}: {logins:?}");
            let l = &logins[0];
            let password = l.password.expose().replace('&', "-"); // KeePass's is "geheim&1"
            assert_eq!(
                (l.name.as_str(), l.username.as_str(), password.as_str()),
                ("Bakker B.V.", "bakker", "geheim-1"),
                "{form}"
            );
            assert_eq!(
                site(&l.url).map(|s| s.0).as_deref(),
                Some("service.example"),
                "{form}"
            );
        }
        let refused = read(br#"{"encrypted": true, "items": []}"#).unwrap_err();
        assert!(refused.to_string().contains("encrypted"), "{refused}");
    }

    /// Among the logins saved for the row's host, one is found by its name, else by its
    /// username; a login saved for another host, or for none, is never found — not by its
    /// name either (it was, whatever site it was saved for).
    #[test]
    fn logins_are_matched_only_at_the_rows_host() {
        let login = |name: &str, user: &str, url: &str| Login {
            name: name.into(),
            username: user.into(),
            url: url.into(),
            password: Secret::new(format!("{name}-pw")),
        };
        let logins = [
            login("Bakker B.V.", "bakker", "https://a.example/x"),
            login("Iets anders", "visser", "service.example"),
            login("Jansen", "jansen", ""),
        ];
        let found = |name, user, url| find(&logins, name, user, url).map(|l| l.name.as_str());
        assert_eq!(
            found(
                "bakker b.v.",
                "wie",
                Some("https://A.example/webservice_v2")
            ),
            Some("Bakker B.V.")
        );
        assert_eq!(found("bakker b.v.", "wie", None), None, "no host: none");
        assert_eq!(
            found("Bakker B.V.", "bakker", Some("https://evil.example/")),
            None,
            "the name alone, at another host"
        );
        assert_eq!(
            found(
                "Visser",
                "visser",
                Some("https://service.example/webservice_v2")
            ),
            Some("Iets anders")
        );
        assert_eq!(
            found("Visser", "visser", Some("https://elders.example/")),
            None
        );
        assert_eq!(
            found("Jansen", "jansen", Some("https://service.example/")),
            None,
            "a login saved for no site"
        );
        assert_eq!(
            found(
                "Visser",
                "visser",
                Some("https://service.example:8443/webservice_v2")
            ),
            None,
            "another port of the same host"
        );
    }
}
