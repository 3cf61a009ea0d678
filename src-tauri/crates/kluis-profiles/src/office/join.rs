//! Joining the office and leaving it, for `kluis office join|leave` and the app's Settings →
//! *Office* alike: the PC key checked at the hub (a PC key of that name, not revoked), the
//! office key checked against the office's other PCs' reports (or made, by the office's first
//! PC), both keys to the keyring, the office key checked against the check value the hub keeps
//! of it (set by the office's first PC: two PCs that each made a key at once are told apart),
//! and the membership to the settings file — in that order, so a join that fails keeps
//! nothing.

use std::sync::Arc;

use kluis_core::Secret;
use kluis_office::{Hub, JoinCode, Membership, OfficeKey, SealedReport};

use super::office_error;
use crate::error::{ProfileError, ProfileResult};
use crate::secrets::{off_thread, SecretKind, SecretStore, APP};
use crate::store::ProfileStore;

/// What joining takes: the hub's address, this PC's name (empty: the one its key was made
/// for) and key there (from the relay's operator), the office key (none: this is the office's first PC, which makes it), and a CA
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
    if !request.pc.is_empty() {
        Membership::check_pc_name(&request.pc).map_err(office_error)?;
    }
    let hub_url = Membership::check_hub(&request.hub).map_err(office_error)?;
    let mut membership = Membership {
        hub: hub_url.as_str().trim_end_matches('/').to_string(),
        pc: request.pc.clone(),
        hub_ca_pem: request.hub_ca_pem,
        joined_ms: kluis_core::clock::now_ms(),
    };
    let hub = Hub::new(&membership, request.pc_key.clone()).map_err(office_error)?;
    // The key says which PC it is (no name given: that one); joined under another name, two
    // PCs would be one at the hub.
    let name = hub.me().await.map_err(office_error)?;
    if !request.pc.is_empty() && request.pc != name {
        return Err(refused(format!(
            "This key is the office's PC \"{name}\", not \"{}\": join with the name the key was made for.",
            request.pc
        )));
    }
    membership.pc = name.clone();
    let pcs = hub.pcs().await.map_err(office_error)?;
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
    off_thread(Arc::clone(&secrets), move |store| {
        store.set(APP, SecretKind::OfficePcKey, &pc_key)?;
        store.set(APP, SecretKind::OfficeKey, &kept)
    })
    .await?;
    // The hub keeps a check of the office's key (set by its first PC): two PCs that each made
    // one at the same moment, before either reported, are told apart here. Checked once the
    // keys are kept; a join that fails here keeps nothing — and when the hub had set the check
    // (its answer lost), this PC may set it anew when it tries again (the hub lets a PC alone
    // behind the check replace it, and anyone once every PC behind it is revoked).
    let checked = match hub.check_key(&office_key).await {
        Ok(true) => Ok(()),
        Ok(false) if made => Err(refused(
            "Another PC made this office's key first (joining at the same moment, or it has not reported yet): join with a join code made on a PC of the office (Settings → Office → Add a PC, or kluis office invite). If no PC kept that key, the hub's operator revokes the PC that made it (kluis-relay tenant pc-key revoke) and this PC joins again.".into(),
        )),
        Ok(false) => Err(refused(
            "That office key is not this office's (the hub keeps a check of the office's). Copy it again from where the office keeps it.".into(),
        )),
        Err(e) => Err(office_error(e)),
    };
    if let Err(e) = checked {
        off_thread(secrets, |store| {
            store.delete(APP, SecretKind::OfficePcKey)?;
            store.delete(APP, SecretKind::OfficeKey)
        })
        .await?;
        return Err(e);
    }
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

/// Joins the office with a join code (see kluis-office's `JoinCode`): the enrolment token
/// redeemed at the hub for this PC's name and key, then [`join`] with the code's office key.
/// The token works once: a join that fails after it asks for a new code.
pub async fn join_with_code(
    profiles: &ProfileStore,
    secrets: Arc<dyn SecretStore>,
    code: &Secret,
) -> ProfileResult<Joined> {
    let code = JoinCode::parse(code.expose()).map_err(office_error)?;
    let at = Membership {
        hub: code.hub.clone(),
        pc: String::new(),
        hub_ca_pem: code.hub_ca_pem.clone(),
        joined_ms: 0,
    };
    let hub = Hub::without_key(&at).map_err(office_error)?;
    let (pc, pc_key) = hub.enrol(&code.token).await.map_err(office_error)?;
    let request = JoinRequest {
        hub: code.hub,
        pc: pc.clone(),
        pc_key: pc_key.clone(),
        office_key: Some(code.office_key.text().clone()),
        hub_ca_pem: code.hub_ca_pem,
    };
    match join(profiles, secrets, request).await {
        Ok(joined) => Ok(joined),
        Err(e) => {
            // The token is spent: the key it gave, kept nowhere, is ended at the hub (so a new
            // code for this name can be made), or said to be revoked by hand.
            let ended = match Hub::new(&at, pc_key) {
                Ok(hub) => hub.revoke(&pc).await.is_ok(),
                Err(_) => false,
            };
            let next = match ended {
                true => "ask a PC of the office for a new join code".to_string(),
                false => format!("revoke \"{pc}\" from a PC of the office (kluis office revoke), then ask for a new join code"),
            };
            Err(refused(format!("{e} The join code is used up: {next}.")))
        }
    }
}

/// A join code for a new PC named `pc` (see kluis-office's `JoinCode`), made on this PC: a
/// one-time enrolment token from the hub, the hub's address and CA, and the office key from
/// the keyring. Shown once; it works once, for a day.
pub async fn invite(
    profiles: &ProfileStore,
    secrets: Arc<dyn SecretStore>,
    pc: &str,
) -> ProfileResult<JoinCode> {
    let Some(membership) = profiles.settings().office else {
        return Err(refused(
            "This PC is in no office: join one first (kluis office join, or Settings → Office)."
                .into(),
        ));
    };
    let keys = off_thread(secrets, |store| {
        Ok((
            store.get(APP, SecretKind::OfficePcKey)?,
            store.get(APP, SecretKind::OfficeKey)?,
        ))
    })
    .await?;
    let (Some(pc_key), Some(office_key)) = keys else {
        return Err(ProfileError::NotFound(
            "This PC's office keys are not in the keyring: join the office again.".into(),
        ));
    };
    let office_key = OfficeKey::parse(office_key.expose()).map_err(office_error)?;
    let hub = Hub::new(&membership, pc_key).map_err(office_error)?;
    let token = hub.invite(pc).await.map_err(office_error)?;
    Ok(JoinCode {
        hub: membership.hub,
        token,
        office_key,
        hub_ca_pem: membership.hub_ca_pem,
    })
}

/// Leaves the office: this PC's key revoked at the hub (so the office view says it left,
/// rather than that it fell silent; a hub out of reach is said by the `Err` of the first
/// field and leaving goes on), then the membership and this PC's two keys removed (its plans
/// run alone again). `false` when this PC was in no office.
pub async fn leave(
    profiles: &ProfileStore,
    secrets: Arc<dyn SecretStore>,
) -> ProfileResult<(Result<(), String>, bool)> {
    let Some(membership) = profiles.settings().office else {
        return Ok((Ok(()), false));
    };
    let key = off_thread(secrets.clone(), |store| {
        store.get(APP, SecretKind::OfficePcKey)
    })
    .await?;
    let revoked = match key.map(|key| Hub::new(&membership, key)) {
        Some(Ok(hub)) => match hub.revoke(&membership.pc).await {
            Ok(_) => Ok(()),
            Err(e) => Err(e.to_string()),
        },
        Some(Err(e)) => Err(e.to_string()),
        None => Ok(()),
    };
    profiles.update_settings(|settings| {
        settings.office = None;
        Ok(())
    })?;
    off_thread(secrets, |store| {
        store.delete(APP, SecretKind::OfficePcKey)?;
        store.delete(APP, SecretKind::OfficeKey)
    })
    .await?;
    Ok((revoked, true))
}
