//! The dashboard: every klant's standing at once (kluis-profiles' `klant_statuses`, which
//! `kluis status` prints too), in the profiles' order.

use kluis_profiles::{klant_statuses, KlantStatus};

use super::keeping::Keeping;
use crate::error::AppResult;

impl Keeping {
    /// Each klant's last verified backup, last failure since, next due, overdue and the
    /// strip of its last 30 days.
    pub fn dashboard(&self) -> AppResult<Vec<KlantStatus>> {
        let now = jiff::Zoned::now();
        Ok(klant_statuses(
            &self.shared.profiles,
            &self.shared.history,
            &now,
        )?)
    }
}
