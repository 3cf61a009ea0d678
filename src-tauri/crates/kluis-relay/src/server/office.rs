//! The office hub's API (a PC key only, see `storage::office`): a klant's office-wide turn,
//! and the office's PCs.
//!
//! - `POST /api/office/turns/<klant>` `{hold_ms, slot_age_ms}` → `{turn: "yours", hold_ms}`,
//!   `{turn: "held", by, left_ms}` or `{turn: "done", by, ago_ms}` (507 `office_full` beyond
//!   the office's klanten);
//! - `DELETE /api/office/turns/<klant>?backed_up=true|false` → `{had_turn}`;
//! - `PUT /api/office/turns/<klant>/done` `{ago_ms}` → `{recorded}`: this PC backed the klant
//!   up `ago_ms` ago (at most 35 days) and could not say so then — recorded unless a later
//!   backup is known, a turn held now left alone;
//! - `PUT /api/office/report` (the body: this PC's report, sealed with the office key, at most
//!   `MAX_REPORT_BYTES`, 4 MiB) → 204: it replaces the PC's last;
//! - `GET /api/office/reports` → `{reports: [{pc, age_ms, revoked, sealed}]}` (`sealed` in
//!   base64): every PC's last report, for the office view each PC opens with the office key;
//! - `POST /api/office/invites` `{pc}` → `{pc, token, ttl_ms}`: a one-time enrolment token
//!   for a new PC of that name, working for [`INVITE_TTL_MS`] (409 `pc_taken`, 507
//!   `invites_full`); the inviting PC puts it in a join code with the office key;
//! - `POST /api/office/enrol` `{token}` (no key: the token is the credential, and every try
//!   spends the budget of requests without a working key) → `{pc, key}`: the new PC's key,
//!   once (404 `no_invite` for a token used, run out or never made);
//! - `PUT /api/office/key-check` `{check}` (64 hex: a keyed hash of the office key, which the
//!   hub never holds) → `{key_check: "set"}` for the office's first (or anew, when no other
//!   PC that checked the last has a working key), `"same"` after, 409 `other_office_key` for
//!   another office key (two PCs that each made one);
//! - `GET /api/office/me` → `{pc}`: the PC this key is (a PC joining checks its name);
//! - `GET /api/office/pcs` → `{pcs: [{name, created_ms, revoked_ms}]}`;
//! - `DELETE /api/office/pcs/<name>` → 204: that PC's key works no more (from any PC of the
//!   office: a stolen laptop is shut out from the desk beside it).
//!
//! A tenant's own key or the shared secret is answered 403 `not_a_pc`: turns are a PC's.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::auth::Authorized;
use super::{internal, refusal, Relay};
use crate::storage::office::{
    check_klant, check_pc_name, InviteMade, KeyCheck, Turn, MAX_REPORT_BYTES,
};

/// The longest a turn is held without being renewed: a PC that died gives its klanten back
/// within this; one backing up renews it well before.
pub const MAX_HOLD_MS: i64 = 60 * 60 * 1000;
/// The longest slot a PC may name (a monthly plan's, with room).
pub const MAX_SLOT_AGE_MS: i64 = 35 * 24 * 60 * 60 * 1000;

/// The refusal of a key that is not a PC's.
fn not_a_pc() -> Response {
    refusal(
        StatusCode::FORBIDDEN,
        "not_a_pc",
        "this key is not a PC's: a PC joins the office with a PC key (kluis-relay tenant pc-key add)",
        None,
    )
}

fn bad(message: &str) -> Response {
    refusal(StatusCode::BAD_REQUEST, "bad_request", message, None)
}

#[derive(Deserialize)]
pub struct TakeBody {
    hold_ms: i64,
    #[serde(default)]
    slot_age_ms: i64,
}

pub async fn take(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Path(klant): Path<String>,
    Json(body): Json<TakeBody>,
) -> Response {
    let Some(pc) = tenant.pc.as_deref() else {
        return not_a_pc();
    };
    if !check_klant(&klant) {
        return bad("a klant is named by its id: 64 hex digits");
    }
    if !(1..=MAX_HOLD_MS).contains(&body.hold_ms) {
        return bad("hold_ms is from 1 to 3600000 (an hour; renew a turn to hold it longer)");
    }
    if !(0..=MAX_SLOT_AGE_MS).contains(&body.slot_age_ms) {
        return bad("slot_age_ms is from 0 to 35 days");
    }
    let turn = relay
        .store
        .take_turn(&tenant.name, pc, &klant, body.hold_ms, body.slot_age_ms)
        .await;
    match turn {
        Ok(Turn::Full) => refusal(
            StatusCode::INSUFFICIENT_STORAGE,
            "office_full",
            "this office has turns for as many klanten as the hub keeps",
            None,
        ),
        Ok(turn) => Json(turn).into_response(),
        Err(e) => internal(e),
    }
}

#[derive(Deserialize)]
pub struct EndQuery {
    #[serde(default)]
    backed_up: bool,
}

pub async fn end(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Path(klant): Path<String>,
    Query(q): Query<EndQuery>,
) -> Response {
    let Some(pc) = tenant.pc.as_deref() else {
        return not_a_pc();
    };
    if !check_klant(&klant) {
        return bad("a klant is named by its id: 64 hex digits");
    }
    match (relay.store)
        .end_turn(&tenant.name, pc, &klant, q.backed_up)
        .await
    {
        Ok(had) => Json(json!({ "had_turn": had })).into_response(),
        Err(e) => internal(e),
    }
}

#[derive(Deserialize)]
pub struct DoneBody {
    ago_ms: i64,
}

/// A backup this PC made while the hub was away, told now.
pub async fn done(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Path(klant): Path<String>,
    Json(body): Json<DoneBody>,
) -> Response {
    let Some(pc) = tenant.pc.as_deref() else {
        return not_a_pc();
    };
    if !check_klant(&klant) {
        return bad("a klant is named by its id: 64 hex digits");
    }
    if !(0..=MAX_SLOT_AGE_MS).contains(&body.ago_ms) {
        return bad("ago_ms is from 0 to 35 days");
    }
    match (relay.store)
        .record_done(&tenant.name, pc, &klant, body.ago_ms)
        .await
    {
        Ok(recorded) => Json(json!({ "recorded": recorded })).into_response(),
        Err(e) => internal(e),
    }
}

/// How long an invitation works: a day, to carry a join code to the next desk.
pub const INVITE_TTL_MS: i64 = 24 * 60 * 60 * 1000;

/// What the hub keeps of an enrolment token.
fn token_hash(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

#[derive(Deserialize)]
pub struct InviteBody {
    pc: String,
}

pub async fn invite(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Json(body): Json<InviteBody>,
) -> Response {
    let Some(by) = tenant.pc.as_deref() else {
        return not_a_pc();
    };
    if let Err(why) = check_pc_name(&body.pc) {
        return bad(&why);
    }
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let made = (relay.store)
        .add_invite(
            &tenant.name,
            &body.pc,
            by,
            token_hash(&token),
            INVITE_TTL_MS,
        )
        .await;
    match made {
        Ok(InviteMade::Made { .. }) => {
            tracing::info!(tenant = %tenant.name, pc = %body.pc, by = %by, "PC invited");
            Json(json!({ "pc": body.pc, "token": token, "ttl_ms": INVITE_TTL_MS })).into_response()
        }
        Ok(InviteMade::Taken) => refusal(
            StatusCode::CONFLICT,
            "pc_taken",
            "the office has a PC of that name with a working key: choose another name, or revoke that PC first",
            None,
        ),
        Ok(InviteMade::Full) => refusal(
            StatusCode::INSUFFICIENT_STORAGE,
            "invites_full",
            "the office has as many open invitations as the hub keeps: use or let some run out first",
            None,
        ),
        Err(e) => internal(e),
    }
}

#[derive(Deserialize)]
pub struct EnrolBody {
    token: String,
}

pub async fn enrol(State(relay): State<Arc<Relay>>, Json(body): Json<EnrolBody>) -> Response {
    // Guessing tokens is as slow as guessing keys: every try spends that budget.
    if !relay.unauthenticated_rate.admit() {
        return refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "the relay takes no more requests a second without a working key; try again shortly",
            Some(1),
        );
    }
    if !check_klant(&body.token) {
        return bad("an enrolment token is 64 hex digits");
    }
    let key = crate::tenants::new_key();
    match (relay.store)
        .redeem_invite(token_hash(&body.token), &key.id, key.hash)
        .await
    {
        Ok(Some((tenant, pc))) => {
            tracing::info!(tenant = %tenant, pc = %pc, "PC enrolled");
            Json(json!({ "pc": pc, "key": key.text })).into_response()
        }
        Ok(None) => refusal(
            StatusCode::NOT_FOUND,
            "no_invite",
            "this join code was used already, ran out (it works a day) or was never made: ask a PC of the office for a new one",
            None,
        ),
        Err(e) => internal(e),
    }
}

pub async fn put_report(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    sealed: axum::body::Bytes,
) -> Response {
    let Some(pc) = tenant.pc.as_deref() else {
        return not_a_pc();
    };
    if sealed.is_empty() || sealed.len() > MAX_REPORT_BYTES {
        return refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "report_size",
            "a report is 1 byte to 4 MiB",
            None,
        );
    }
    match relay.store.put_report(&tenant.name, pc, &sealed).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => internal(e),
    }
}

#[derive(Deserialize)]
pub struct KeyCheckBody {
    check: String,
}

pub async fn check_key(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Json(body): Json<KeyCheckBody>,
) -> Response {
    let Some(pc) = tenant.pc.as_deref() else {
        return not_a_pc();
    };
    let mut check = [0u8; 32];
    if body.check.len() != 64 || hex::decode_to_slice(&body.check, &mut check).is_err() {
        return bad("the office key's check is 64 hex digits");
    }
    match relay.store.check_office_key(&tenant.name, pc, check).await {
        Ok(KeyCheck::Set) => Json(json!({ "key_check": "set" })).into_response(),
        Ok(KeyCheck::Same) => Json(json!({ "key_check": "same" })).into_response(),
        Ok(KeyCheck::Other) => refusal(
            StatusCode::CONFLICT,
            "other_office_key",
            "this office has another office key: join with a join code made on one of its PCs",
            None,
        ),
        Err(e) => internal(e),
    }
}

pub async fn reports(State(relay): State<Arc<Relay>>, Authorized(tenant): Authorized) -> Response {
    use base64::Engine as _;
    if tenant.pc.is_none() {
        return not_a_pc();
    }
    match relay.store.reports(&tenant.name).await {
        Ok(reports) => {
            let reports: Vec<_> = (reports.iter())
                .map(|r| {
                    json!({
                        "pc": r.pc, "age_ms": r.age_ms, "revoked": r.revoked,
                        "sealed": base64::engine::general_purpose::STANDARD.encode(&r.sealed),
                    })
                })
                .collect();
            Json(json!({ "reports": reports })).into_response()
        }
        Err(e) => internal(e),
    }
}

/// `GET /api/office/me` → `{pc}`: the PC this key was made for.
pub async fn me(Authorized(tenant): Authorized) -> Response {
    match tenant.pc.as_deref() {
        Some(pc) => Json(json!({ "pc": pc })).into_response(),
        None => not_a_pc(),
    }
}

pub async fn pcs(State(relay): State<Arc<Relay>>, Authorized(tenant): Authorized) -> Response {
    if tenant.pc.is_none() {
        return not_a_pc();
    }
    match relay.store.pcs(&tenant.name).await {
        Ok(pcs) => Json(json!({ "pcs": pcs })).into_response(),
        Err(e) => internal(e),
    }
}

pub async fn revoke(
    State(relay): State<Arc<Relay>>,
    Authorized(tenant): Authorized,
    Path(name): Path<String>,
) -> Response {
    let Some(pc) = tenant.pc.as_deref() else {
        return not_a_pc();
    };
    if check_pc_name(&name).is_err() {
        return bad("not a PC's name");
    }
    match relay.store.revoke_pc(&tenant.name, &name).await {
        Ok(true) => {
            relay.keys.forget_rows();
            tracing::info!(tenant = %tenant.name, pc = %name, by = %pc, "PC revoked");
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(false) => refusal(
            StatusCode::NOT_FOUND,
            "no_pc",
            "this office has no PC of that name with a working key",
            None,
        ),
        Err(e) => internal(e),
    }
}
