//! Joining the office and leaving it, for `kluis office join|leave` and the app's Settings →
//! *Office* alike: the PC key checked at the hub (a PC key of that name, not revoked), the
//! office key checked against the office's other PCs' reports (or made, by the office's first
//! PC), both keys to the keyring and the membership to the settings file — in that order, so a
//! join that fails keeps nothing.

use std::sync::Arc;

use kluis_core::Secret;
use kluis_office::{Hub, Membership, OfficeKey, SealedReport};

use super::office_error;
use crate::error::{ProfileError, ProfileResult};
use crate::secrets::{off_thread, SecretKind, SecretStore, APP};
use crate::store::ProfileStore;

/// What joining takes: the hub's address, this PC's name and key there (from the relay's
/// operator), the office key (none: this is the office's first PC, which makes it), and a CA
/// the hub's certificate is signed by besides the system's.
pub struct JoinRequest {
    pub hub: String,
    pub pc: String,
    pub pc_key: Secret,
    pub office_key: Option<Secret>,
    pub hub_ca_pem: Option<String>,
}

/// A join done: the membership kept, the office's PCs, and the office key when this PC made it
/// (to be shown once: the office's next PCs join with it).
pub struct Joined {
    pub membership: Membership,
    pub pcs: Vec<String>,
    pub made_key: Option<OfficeKey>,
}

fn refused(message: String) -> ProfileError {
    ProfileError::Core(kluis_core::Error::Config(message))
}

/// Joins the office `request` names (see the module).
pub async fn join(
    profiles: &ProfileStore,
    secrets: Arc<dyn SecretStore>,
    request: JoinRequest,
) -> ProfileResult<Joined> {
    let name = request.pc;
    Membership::check_pc_name(&name).map_err(office_error)?;
    let hub_url = Membership::check_hub(&request.hub).map_err(office_error)?;
    let membership = Membership {
        hub: hub_url.as_str().trim_end_matches('/').to_string(),
        pc: name.clone(),
        hub_ca_pem: request.hub_ca_pem,
        joined_ms: kluis_core::clock::now_ms(),
    };
    let hub = Hub::new(&membership, request.pc_key.clone()).map_err(office_error)?;
    let pcs = hub.pcs().await.map_err(office_error)?;
    if !pcs
        .iter()
        .any(|pc| pc.name == name && pc.revoked_ms.is_none())
    {
        return Err(refused(format!(
            "The office hub knows no PC named \"{name}\" with a working key: give the name the key was made for (kluis-relay tenant pc-key list OFFICE)."
        )));
    }
    // The office's other PCs' reports say whether this is the office's key: a PC with another
    // key would make other klant ids, and back up twice what the office backs up once.
    let others: Vec<SealedReport> = (hub.reports().await.map_err(office_error)?.into_iter())
        .filter(|r| r.pc != name && !r.revoked)
        .collect();
    let (office_key, made) = match request.office_key {
        Some(text) => (
            OfficeKey::parse(text.expose()).map_err(office_error)?,
            false,
        ),
        None if others.is_empty() => (OfficeKey::generate().map_err(office_error)?, true),
        None => {
            let pcs: Vec<&str> = others.iter().map(|r| r.pc.as_str()).collect();
            return Err(refused(format!(
                "This office has PCs already ({}): join with its office key, from where the first PC's was kept.",
                pcs.join(", ")
            )));
        }
    };
    let opens =
        |r: &SealedReport| kluis_office::sealed::open(&office_key, &r.pc, &r.sealed).is_ok();
    if !others.is_empty() && !others.iter().any(opens) {
        return Err(refused(
            "That office key is not this office's: no PC's report opens with it. Copy it again from where the office keeps it.".into(),
        ));
    }
    let (pc_key, kept) = (request.pc_key, office_key.text().clone());
    off_thread(secrets, move |store| {
        store.set(APP, SecretKind::OfficePcKey, &pc_key)?;
        store.set(APP, SecretKind::OfficeKey, &kept)
    })
    .await?;
    profiles.update_settings(|settings| {
        settings.office = Some(membership.clone());
        Ok(())
    })?;
    Ok(Joined {
        membership,
        pcs: (pcs.into_iter().filter(|p| p.revoked_ms.is_none()))
            .map(|p| p.name)
            .collect(),
        made_key: made.then_some(office_key),
    })
}

/// Leaves the office: the membership, then this PC's two keys, removed (its plans run alone
/// again). The hub still knows its key until another PC or the operator revokes it. `false`
/// when this PC was in no office.
pub async fn leave(profiles: &ProfileStore, secrets: Arc<dyn SecretStore>) -> ProfileResult<bool> {
    if profiles.settings().office.is_none() {
        return Ok(false);
    }
    profiles.update_settings(|settings| {
        settings.office = None;
        Ok(())
    })?;
    off_thread(secrets, |store| {
        store.delete(APP, SecretKind::OfficePcKey)?;
        store.delete(APP, SecretKind::OfficeKey)
    })
    .await?;
    Ok(true)
}
