//! The office view read from the hub: every PC's last report opened with the office key, and
//! each live PC that sent none yet said as such (a PC that joined and never ran is not safe to
//! count on), put together by [`OfficeView::of`]. kluis-profiles' `Office::view` (the app's
//! *Office*, `kluis office status`) and the hub's load benchmark read it so.

use crate::error::OfficeResult;
use crate::hub::{Hub, SealedReport};
use crate::key::OfficeKey;
use crate::report::PcReport;
use crate::view::{OfficeView, Received};

impl OfficeView {
    /// The office as its PCs last reported it to `hub`, opened with `key`.
    pub async fn read(hub: &Hub, key: &OfficeKey) -> OfficeResult<OfficeView> {
        let (reports, pcs) = tokio::try_join!(hub.reports(), hub.pcs())?;
        let silent: Vec<Received> = (pcs.into_iter())
            .filter(|p| p.revoked_ms.is_none() && !reports.iter().any(|r| r.pc == p.name))
            .map(|p| Received {
                report: Err(format!("{} has sent no report yet", p.name)),
                pc: p.name,
                age_ms: 0,
                revoked: false,
            })
            .collect();
        let received = (reports.into_iter())
            .map(|r| Received::opened(key, r))
            .chain(silent)
            .collect();
        Ok(OfficeView::of(received, kluis_core::clock::now_ms()))
    }
}

impl Received {
    /// `sealed` opened with `key` (bound to the PC it is kept under), or why it cannot be.
    pub fn opened(key: &OfficeKey, sealed: SealedReport) -> Received {
        let pc = &sealed.pc;
        let report = crate::sealed::open(key, pc, &sealed.sealed)
            .map_err(|e| e.to_string())
            .and_then(|plain| {
                serde_json::from_slice::<PcReport>(&plain).map_err(|_| {
                    format!("{pc}'s report is not one this Kluis reads (a newer Kluis?)")
                })
            });
        Received {
            pc: sealed.pc,
            age_ms: sealed.age_ms,
            revoked: sealed.revoked,
            report,
        }
    }
}
