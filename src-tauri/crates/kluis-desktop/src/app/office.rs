//! The office this PC joined (`kluis office join`; the settings file and keyring the CLI
//! shares), for the app's plans: [`Shared::office`] reads its keys once and again only when
//! the membership changes. Its plans then ask the office hub for each klant's turn (see
//! kluis-profiles' `office`); what the hub could not do goes to the app's log, its absence
//! once until it is back.

use std::sync::Arc;

use kluis_office::{Membership, OfficeError};
use kluis_profiles::secrets::off_thread;
use kluis_profiles::Office;

use super::shared::Shared;

/// The office as last read: the membership it was read for, and the office (none: its keys
/// could not be read — said once in the log).
pub(crate) type OfficeRead = Option<(Membership, Option<Arc<Office>>)>;

impl Shared {
    /// The office this PC joined, if any and its keys can be read.
    pub async fn office(&self) -> Option<Arc<Office>> {
        let membership = self.profiles.settings().office?;
        let mut read = self.office.lock().await;
        if let Some((seen, office)) = read.as_ref() {
            if *seen == membership {
                return office.clone();
            }
        }
        let settings = self.profiles.settings();
        let tell: kluis_profiles::office::TellHub = Arc::new(|e: &OfficeError| {
            tracing::warn!(code = e.code(), "office hub: {e}");
        });
        let office = off_thread(self.keyring.clone(), move |store| {
            Office::of(&settings, store, tell)
        })
        .await;
        let office = match office {
            Ok(office) => office.map(Arc::new),
            Err(e) => {
                tracing::warn!(
                    code = e.code(),
                    "the office's keys could not be read; plans run alone: {e}"
                );
                None
            }
        };
        *read = Some((membership, office.clone()));
        office
    }
}
