//! [`Language`]: the language Kluis speaks — the window's choice (its *English / Nederlands*
//! menu, or the OS's until one is chosen), kept in the profiles file so that what speaks
//! without a window (the tray's menu and tooltip, the notifications) speaks it too.

use serde::{Deserialize, Serialize};

/// English or Dutch: the window's two languages.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    #[default]
    En,
    Nl,
}

/// Reads a kept language leniently: one this build does not know (a newer Kluis's third, a
/// hand edit) is none chosen — never a profiles file that cannot be read, which would leave
/// every process that reads it without its klanten.
pub(crate) fn lenient<'de, D: serde::Deserializer<'de>>(
    kept: D,
) -> Result<Option<Language>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(kept)?;
    Ok(value.and_then(|value| serde_json::from_value(value).ok()))
}

impl Language {
    /// `chosen` (the settings'), else the OS's as the process's locale says it, read as gettext
    /// reads it: the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`: the first set) and, unless that
    /// is C or POSIX (or none), `LANGUAGE`'s first entry before it; Dutch when it starts with
    /// `nl`, else English. Windows sets none of these: there the user's display language.
    pub fn or_from_os(chosen: Option<Language>) -> Language {
        chosen.unwrap_or_else(Language::of_os)
    }

    #[cfg(not(windows))]
    fn of_os() -> Language {
        Language::of_environment(|name| std::env::var(name).ok())
    }

    /// The language Windows shows its own menus in (the user's display language, Settings →
    /// Time & language), not the region's formats: a Dutch office on an English Windows reads
    /// English menus every day.
    #[cfg(windows)]
    fn of_os() -> Language {
        // SAFETY: takes nothing, returns a LANGID; no memory is shared.
        let langid = unsafe { windows_sys::Win32::Globalization::GetUserDefaultUILanguage() };
        Language::of_langid(langid)
    }

    /// The language of a Windows LANGID: Dutch for any Dutch (primary language 0x13: the
    /// Netherlands, Belgium), else English.
    #[cfg_attr(not(windows), allow(dead_code))]
    fn of_langid(langid: u16) -> Language {
        const LANG_DUTCH: u16 = 0x13;
        match langid & 0x3ff == LANG_DUTCH {
            true => Language::Nl,
            false => Language::En,
        }
    }

    /// The language of the locale that the environment `var` gives (see
    /// [`Language::or_from_os`]).
    #[cfg_attr(windows, allow(dead_code))]
    fn of_environment(var: impl Fn(&str) -> Option<String>) -> Language {
        let var = |name| var(name).filter(|v| !v.is_empty());
        let locale = (var("LC_ALL"))
            .or_else(|| var("LC_MESSAGES"))
            .or_else(|| var("LANG"));
        let plain =
            (locale.as_deref()).is_none_or(|l| l == "C" || l.starts_with("C.") || l == "POSIX");
        let listed = var("LANGUAGE")
            .and_then(|list| list.split(':').find(|l| !l.is_empty()).map(str::to_owned));
        let os = match plain {
            true => locale,
            false => listed.or(locale),
        };
        Language::of_locale(os.as_deref().unwrap_or(""))
    }

    /// The language of a locale name such as `nl_NL.UTF-8` or `en-GB`.
    pub fn of_locale(locale: &str) -> Language {
        match locale.to_ascii_lowercase().starts_with("nl") {
            true => Language::Nl,
            false => Language::En,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window's choice wins; without one, the OS's locale; Dutch only for `nl…`.
    #[test]
    fn chosen_then_the_locale() {
        assert_eq!(Language::or_from_os(Some(Language::Nl)), Language::Nl);
        assert_eq!(Language::or_from_os(Some(Language::En)), Language::En);
        assert_eq!(Language::of_locale("nl_NL.UTF-8"), Language::Nl);
        assert_eq!(Language::of_locale("nl-BE"), Language::Nl);
        assert_eq!(Language::of_locale("en_GB.UTF-8"), Language::En);
        assert_eq!(Language::of_locale("C.UTF-8"), Language::En);
        assert_eq!(Language::of_locale(""), Language::En);
    }

    /// Windows's display language: Dutch (Netherlands 0x0413, Belgium 0x0813) is Dutch; English,
    /// Frisian (0x0462, its own primary language) and any other is English.
    #[test]
    fn windows_display_language() {
        assert_eq!(Language::of_langid(0x0413), Language::Nl);
        assert_eq!(Language::of_langid(0x0813), Language::Nl);
        assert_eq!(Language::of_langid(0x0409), Language::En);
        assert_eq!(Language::of_langid(0x0462), Language::En);
        assert_eq!(Language::of_langid(0x0000), Language::En);
    }

    /// The OS's language as gettext finds it: the locale, `LANGUAGE` before it unless the
    /// locale is C.
    #[test]
    fn the_os_s_as_gettext_reads_it() {
        let of = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = (pairs.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Language::of_environment(|name| {
                (pairs.iter())
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            })
        };
        assert_eq!(of(&[("LANG", "nl_NL.UTF-8")]), Language::Nl);
        assert_eq!(
            of(&[("LANG", "nl_NL.UTF-8"), ("LC_ALL", "en_GB.UTF-8")]),
            Language::En
        );
        assert_eq!(
            of(&[("LANG", "en_GB.UTF-8"), ("LC_MESSAGES", "nl_BE")]),
            Language::Nl
        );
        assert_eq!(
            of(&[("LANG", "en_GB.UTF-8"), ("LANGUAGE", ":nl:en")]),
            Language::Nl
        );
        assert_eq!(
            of(&[("LC_ALL", "C"), ("LANGUAGE", "nl")]),
            Language::En,
            "C: LANGUAGE unread"
        );
        assert_eq!(of(&[("LANGUAGE", "nl")]), Language::En, "no locale: C");
        assert_eq!(of(&[]), Language::En);
    }

    /// Kept as the window names them ("en", "nl"); a file without one, or with one this build
    /// does not know, reads as none chosen, the rest of the settings as they are.
    #[test]
    fn kept_by_name() {
        assert_eq!(serde_json::to_string(&Language::Nl).unwrap(), "\"nl\"");
        let settings: crate::Settings = serde_json::from_str("{\"save_folder\": null}").unwrap();
        assert_eq!(settings.language, None);
        let settings: crate::Settings =
            serde_json::from_str("{\"save_folder\": null, \"language\": \"nl\"}").unwrap();
        assert_eq!(settings.language, Some(Language::Nl));
        for unknown in ["\"de\"", "5", "{\"x\": 1}", "\"\""] {
            let text = format!("{{\"save_folder\": \"/b\", \"language\": {unknown}}}");
            let settings: crate::Settings = serde_json::from_str(&text).unwrap();
            assert_eq!(settings.language, None, "{unknown}: none chosen");
            assert_eq!(settings.save_folder.as_deref(), Some("/b"), "the rest kept");
        }
    }
}
