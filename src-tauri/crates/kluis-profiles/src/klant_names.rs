//! Which klant a name on the command line means (`--profile NAME` of `prune`, `report`,
//! `verify`, `history`), and each history key's name for a person.
//!
//! The history records a saved profile's backups under its id and an ad-hoc klant's under its
//! key ([`kluis_core::ad_hoc`]); backups an older Kluis made without a profile are recorded
//! under a bare label. A name that could mean two klanten is an error that lists them, never a
//! guess: a retention rule applied to the wrong klant deletes its backups.

use std::collections::BTreeMap;

use kluis_core::ad_hoc::AdHocKlant;
use kluis_core::{Error, History, KlantKey, Result};

use crate::Profile;

/// The klant a name means, and the key its backups are recorded under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Klant {
    /// A saved profile.
    Saved { id: String, name: String },
    /// Backed up with flags, without a saved profile.
    AdHoc { key: KlantKey, klant: AdHocKlant },
    /// Backups an older Kluis recorded under a bare label: they may be several klanten'.
    Label(String),
}

impl Klant {
    /// The key the history records this klant's backups under.
    pub fn key(&self) -> KlantKey {
        match self {
            Klant::Saved { id, .. } => KlantKey::profile(id),
            Klant::AdHoc { key, .. } => key.clone(),
            Klant::Label(label) => KlantKey::older_label(label),
        }
    }

    /// The klant's name for a person.
    pub fn name(&self) -> &str {
        match self {
            Klant::Saved { name, .. } => name,
            Klant::AdHoc { klant, .. } => &klant.label,
            Klant::Label(label) => label,
        }
    }

    /// Whether a retention rule may be applied to this klant's backups: not to a bare label's,
    /// which may hold several klanten's backups in several folders.
    pub fn can_be_pruned(&self) -> Result<()> {
        match self {
            Klant::Label(label) => Err(Error::Config(format!(
                "The backups recorded as \"{label}\" were made by an older Kluis, which did not record each klant's service and folder: they may be several klanten's, so no rule is applied to them. Remove those you no longer need by hand (see `kluis history --profile \"{label}\"`)."
            ))),
            _ => Ok(()),
        }
    }
}

/// The klant `name` means: a saved profile (by name or id), an ad-hoc klant (by label or key),
/// or a label an older Kluis recorded. No klant of that name, or more than one, is an error
/// that says what to type instead.
pub fn find_klant(saved: &[Profile], history: &History, name: &str) -> Result<Klant> {
    let wanted = name.trim();
    let mut matches: Vec<Klant> = (saved.iter())
        .filter(|p| p.id == wanted || p.name.trim().eq_ignore_ascii_case(wanted))
        .map(|p| Klant::Saved {
            id: p.id.clone(),
            name: p.name.clone(),
        })
        .collect();
    let ad_hoc = history.ad_hoc_klanten()?;
    matches.extend(
        (ad_hoc.into_iter())
            .filter(|(key, klant)| key.as_str() == wanted || klant.label == wanted)
            .map(|(key, klant)| Klant::AdHoc { key, klant }),
    );
    if matches.is_empty() && history.has_backups_of(wanted)? {
        matches.push(Klant::Label(wanted.to_string()));
    }
    match matches.len() {
        1 => Ok(matches.remove(0)),
        0 => Err(Error::Config(format!(
            "No klant is named \"{}\": see `kluis profiles list` and `kluis history`.",
            wanted.chars().take(80).collect::<String>()
        ))),
        n => {
            let lines: Vec<String> = (matches.iter())
                .map(|m| match m {
                    Klant::Saved { id, .. } => format!("  {id}  (the saved profile)"),
                    Klant::AdHoc { key, klant } => format!("  \"{key}\"  ({})", klant.describe()),
                    Klant::Label(label) => format!("  {label}"),
                })
                .collect();
            Err(Error::Config(format!(
                "\"{wanted}\" names {n} klanten; say which with --profile and one of these:\n{}",
                lines.join("\n")
            )))
        }
    }
}

/// Every history key's name for a person: saved profiles' names by id, ad-hoc klanten's labels
/// by key — or, where a label names more than one klant, the key itself (which `--profile`
/// takes), so two klanten never look alike in a history or a report. A key missing here (a
/// deleted profile, an older label) is shown as it is.
pub fn klant_names(saved: &[Profile], history: &History) -> Result<BTreeMap<KlantKey, String>> {
    let ad_hoc = history.ad_hoc_klanten()?;
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    let labels = (ad_hoc.iter().map(|(_, k)| k.label.to_lowercase()))
        .chain(saved.iter().map(|p| p.name.trim().to_lowercase()));
    for label in labels {
        *uses.entry(label).or_default() += 1;
    }
    let mut names: BTreeMap<KlantKey, String> = (ad_hoc.into_iter())
        .map(|(key, klant)| match uses[&klant.label.to_lowercase()] {
            1 => (key, klant.label),
            _ => (key.clone(), key.to_string()),
        })
        .collect();
    names.extend(saved.iter().map(|p| (p.key(), p.name.clone())));
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kluis_core::ad_hoc::AdHocKlant;

    /// A label used by one klant names it; a label two klanten share (two folders, or a saved
    /// profile's name) gives way to each one's key, which `find_klant` accepts.
    #[test]
    fn two_klanten_never_share_a_name() {
        let history = History::in_memory().unwrap();
        let dir = std::path::Path::new("/backups");
        let klant = |label: &str, folder: &str| {
            AdHocKlant::new(label, "https://s/", "u", &dir.join(folder))
        };
        let visser = history.ad_hoc_klant(&klant("visser", "v")).unwrap();
        let bakker_a = history.ad_hoc_klant(&klant("bakker", "a")).unwrap();
        let bakker_b = history.ad_hoc_klant(&klant("bakker", "b")).unwrap();
        let names = klant_names(&[], &history).unwrap();
        assert_eq!(names[&visser], "visser");
        assert_eq!(names[&bakker_a], bakker_a.as_str());
        assert_eq!(names[&bakker_b], bakker_b.as_str());
        assert_ne!(bakker_a, bakker_b);
        let found = find_klant(&[], &history, bakker_b.as_str()).unwrap();
        assert_eq!(found.key(), bakker_b);
        assert!(find_klant(&[], &history, "bakker").is_err(), "ambiguous");
    }
}
