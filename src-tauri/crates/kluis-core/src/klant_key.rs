//! [`KlantKey`]: whose backups a history row holds.
//!
//! The history's `profile` column groups backups by klant, and a klant is known in one of three
//! ways: a saved profile by its id, a klant backed up with flags by its ad-hoc key
//! (`LABEL [12 hex]`, see [`crate::ad_hoc`]), and the backups an older Kluis made without a
//! profile by the bare label it wrote. A key is made only from one of those, or read back from
//! the history, so a display name or a typed `--profile NAME` cannot be passed where a key is
//! meant: retention, verification and reports select a klant's backups by it, and the wrong
//! selection deletes another klant's backups (issue 30). Names become keys in one place,
//! `kluis_profiles::klant_names::find_klant`.

use std::fmt;

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::Serialize;

/// Whose backups a history row holds: a saved profile's id, an ad-hoc klant's key
/// (`LABEL [12 hex]`), or a bare label an older Kluis recorded.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct KlantKey(String);

impl KlantKey {
    /// A saved profile's backups: recorded under its id.
    pub fn profile(id: &str) -> Self {
        KlantKey(id.to_string())
    }

    /// An ad-hoc klant's backups (made by [`crate::ad_hoc::AdHocKlant::key`]).
    pub(crate) fn ad_hoc(text: String) -> Self {
        KlantKey(text)
    }

    /// The backups an older Kluis recorded under a bare `label`: only for a label the history
    /// was seen to hold (see [`crate::History::has_backups_of`]).
    pub fn older_label(label: &str) -> Self {
        KlantKey(label.to_string())
    }

    /// The key as the history stores it (and `--profile` accepts).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KlantKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ToSql for KlantKey {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

impl FromSql for KlantKey {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        String::column_result(value).map(KlantKey)
    }
}
