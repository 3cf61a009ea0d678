//! The names of unattended backups' files: a template of the office's choosing (Settings, kept
//! in the profiles file the app and the CLI share), `{klant} {date} {time}` unless changed —
//! `Bakker B.V. 2026-11-23 0200.zip`. The download's extension is added after it.

use crate::error::{ProfileError, ProfileResult};

/// The name unless the office chose another.
pub const DEFAULT_TEMPLATE: &str = "{klant} {date} {time}";

/// The placeholders a template may use, and what each becomes.
pub const PLACEHOLDERS: [&str; 3] = ["{klant}", "{date}", "{time}"];

/// The longest template: the name must still fit a file system's 255 bytes with a long klant
/// name and the extension.
const MAX_CHARS: usize = 80;

/// A checked template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileNameTemplate(String);

impl Default for FileNameTemplate {
    fn default() -> Self {
        FileNameTemplate(DEFAULT_TEMPLATE.into())
    }
}

impl FileNameTemplate {
    /// `text` as a template, or why it cannot be one: it needs `{date}` (so each day's backup
    /// has a name of its own), knows only [`PLACEHOLDERS`], and names a file, not a folder.
    pub fn parse(text: &str) -> ProfileResult<FileNameTemplate> {
        let text = text.trim();
        let refuse = |why: String| Err(ProfileError::Core(kluis_core::Error::Config(why)));
        if text.is_empty() || text.chars().count() > MAX_CHARS {
            return refuse(format!(
                "A file name template has 1 to {MAX_CHARS} characters, such as {DEFAULT_TEMPLATE}."
            ));
        }
        if text.contains(['/', '\\']) || text.chars().any(char::is_control) {
            return refuse("A file name template names a file: no / or \\ in it.".into());
        }
        let mut rest = text;
        loop {
            let open = rest.find('{');
            if rest[..open.unwrap_or(rest.len())].contains('}') {
                return refuse("A } in the file name template has no {.".into());
            }
            let Some(open) = open else { break };
            let Some(close) = rest[open..].find('}') else {
                return refuse("A { in the file name template is not closed with }.".into());
            };
            let placeholder = &rest[open..open + close + 1];
            if !PLACEHOLDERS.contains(&placeholder) {
                return refuse(format!(
                    "{} is not a placeholder; use {}.",
                    placeholder.chars().take(30).collect::<String>(),
                    PLACEHOLDERS.join(", ")
                ));
            }
            rest = &rest[open + close + 1..];
        }
        if !text.contains("{date}") {
            return refuse(
                "A file name template needs {date}, so each day's backup has a name of its own."
                    .into(),
            );
        }
        Ok(FileNameTemplate(text.to_string()))
    }

    /// The stored setting as a template: the default when none is set, or when the stored one
    /// is no longer valid (a hand-edited file must not stop the backups).
    pub fn of_setting(setting: Option<&str>) -> FileNameTemplate {
        setting
            .and_then(|text| FileNameTemplate::parse(text).ok())
            .unwrap_or_default()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The file's name (without its extension) for klant `klant` (already safe as a file
    /// name) at `now`, in local time: `{date}` is `YYYY-MM-DD`, `{time}` is `HHmm`.
    pub fn render(&self, klant: &str, now: &jiff::Zoned) -> String {
        self.0
            .replace("{date}", &now.strftime("%Y-%m-%d").to_string())
            .replace("{time}", &now.strftime("%H%M").to_string())
            .replace("{klant}", klant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> jiff::Zoned {
        "2026-11-23T02:05:00+01:00[Europe/Amsterdam]"
            .parse()
            .unwrap()
    }

    /// The default names by klant, date and time; another order and words are kept.
    #[test]
    fn renders_klant_date_and_time() {
        let default = FileNameTemplate::default();
        assert_eq!(
            default.render("Bakker B.V.", &at()),
            "Bakker B.V. 2026-11-23 0205"
        );
        let own = FileNameTemplate::parse("  backup {date}_{time} van {klant} ").unwrap();
        assert_eq!(
            own.render("Bakker", &at()),
            "backup 2026-11-23_0205 van Bakker"
        );
        assert_eq!(
            FileNameTemplate::parse("{date}")
                .unwrap()
                .render("x", &at()),
            "2026-11-23"
        );
    }

    /// Templates that would lose a day's backup, name a folder or hide a typo are refused
    /// with a reason; a stored one that is no longer valid falls back to the default.
    #[test]
    fn refuses_what_cannot_name_a_file() {
        for (bad, why) in [
            ("", "1 to 80 characters"),
            ("{klant}", "needs {date}"),
            ("{klant}/{date}", "no / or \\"),
            ("..\\{date}", "no / or \\"),
            ("{date} {klnt}", "{klnt} is not a placeholder"),
            ("{date} {time", "not closed"),
            ("{date} time}", "has no {"),
            ("{date}\n", "1 to 80"), // trimmed to "{date}": fine, see below
        ] {
            match FileNameTemplate::parse(bad) {
                Err(e) => assert!(e.to_string().contains(why), "{bad:?}: {e}"),
                Ok(_) => assert_eq!(bad, "{date}\n", "{bad:?} was accepted"),
            }
        }
        assert!(FileNameTemplate::parse(&"{date}".repeat(20)).is_err());
        assert_eq!(
            FileNameTemplate::of_setting(Some("{klant}")),
            FileNameTemplate::default()
        );
        assert_eq!(
            FileNameTemplate::of_setting(None),
            FileNameTemplate::default()
        );
    }
}
