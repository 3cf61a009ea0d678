//! [`Hub`]: the office hub's API as this PC uses it (`kluis-relay`'s `/api/office`, see its
//! `server::office`). This PC's key goes in `Authorization: Bearer` to the hub's origin only
//! (a redirect elsewhere is refused, not followed). Every call is bounded by [`CALL_BOUND`]: a
//! hub that answers slowly is a hub that is not there, and a backup never waits on it long.

use std::time::Duration;

use kluis_core::http::RedirectRule;
use kluis_core::Secret;
use reqwest::{Method, StatusCode};
use serde::Deserialize;

use crate::error::{OfficeError, OfficeResult};
use crate::key::{KlantId, OfficeKey};
use crate::membership::Membership;

/// The longest one call to the hub may take, connecting included.
pub const CALL_BOUND: Duration = Duration::from_secs(5);

/// The longest an answer's body may be (the office's PCs, 10,000 of them, fit well within)…
const MOST_BODY: usize = 2 * 1024 * 1024;
/// …and the office's reports (each PC's at most [`MOST_REPORT`] at the hub, in base64).
const MOST_REPORTS: usize = 96 * 1024 * 1024;
/// The longest sealed report the hub keeps (kluis-relay's `MAX_REPORT_BYTES`).
pub const MOST_REPORT: usize = 4 * 1024 * 1024;

/// What the hub answers a PC asking for a klant's turn.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "turn", rename_all = "snake_case")]
pub enum TurnAnswer {
    /// This PC has the turn for `hold_ms` from now: it backs the klant up.
    Yours { hold_ms: i64 },
    /// PC `by` is backing the klant up now (its turn has `left_ms` more unless renewed).
    Held { by: String, left_ms: i64 },
    /// PC `by` backed the klant up `ago_ms` ago, within this PC's slot.
    Done { by: String, ago_ms: i64 },
}

/// A PC's last report as the hub gives it (see [`Hub::reports`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedReport {
    pub pc: String,
    pub age_ms: i64,
    pub revoked: bool,
    pub sealed: Vec<u8>,
}

/// A request's body.
enum Body {
    None,
    Json(serde_json::Value),
    Bytes(Vec<u8>),
}

/// A PC of the office, as the hub lists them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PcSummary {
    pub name: String,
    pub created_ms: i64,
    /// When its key was revoked.
    pub revoked_ms: Option<i64>,
}

/// The office hub, reached with this PC's key (cheap to clone: a lease and its renewals share
/// one).
#[derive(Clone)]
pub struct Hub(std::sync::Arc<Reached>);

struct Reached {
    base: url::Url,
    /// This PC's key (none: a PC not enrolled yet, which may only enrol).
    key: Option<Secret>,
    client: reqwest::Client,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hub({})", self.0.base)
    }
}

impl Hub {
    /// The hub `membership` names, reached with `pc_key`.
    pub fn new(membership: &Membership, pc_key: Secret) -> OfficeResult<Self> {
        Self::reached(membership, Some(pc_key))
    }

    /// The hub `membership` names, by a PC that has no key there yet: it may only enrol.
    pub fn without_key(membership: &Membership) -> OfficeResult<Self> {
        Self::reached(membership, None)
    }

    fn reached(membership: &Membership, pc_key: Option<Secret>) -> OfficeResult<Self> {
        let base = Membership::check_hub(&membership.hub)?;
        let timeouts = kluis_core::config::Timeouts {
            connect: CALL_BOUND,
            read: CALL_BOUND,
            liveness_check: CALL_BOUND,
        };
        let client = kluis_core::http::client_trusting(
            membership.hub_ca_pem.as_deref(),
            false,
            &timeouts,
            RedirectRule::SameOrigin,
        )
        .map_err(|e| OfficeError::Input(format!("The hub's settings cannot be used: {e}")))?;
        Ok(Hub(std::sync::Arc::new(Reached {
            base,
            key: pc_key,
            client,
        })))
    }

    /// The hub's address, as said to the user.
    pub fn address(&self) -> String {
        self.0.base.as_str().trim_end_matches('/').to_string()
    }

    /// Asks for `klant`'s turn for `hold` (asked again while this PC holds it: renewed); this
    /// PC's slot for it began `slot_age` ago.
    pub async fn take(
        &self,
        klant: &KlantId,
        hold: Duration,
        slot_age: Duration,
    ) -> OfficeResult<TurnAnswer> {
        let body = serde_json::json!({
            "hold_ms": hold.as_millis().min(i64::MAX as u128) as i64,
            "slot_age_ms": slot_age.as_millis().min(i64::MAX as u128) as i64,
        });
        let answer = self
            .call(
                Method::POST,
                &["api", "office", "turns", klant.as_str()],
                Body::Json(body),
                &[],
                MOST_BODY,
            )
            .await?;
        let turn: TurnAnswer = parse(&answer)?;
        match &turn {
            TurnAnswer::Yours { hold_ms } if *hold_ms > 0 => Ok(turn),
            TurnAnswer::Held { by, .. } | TurnAnswer::Done { by, .. }
                if Membership::check_pc_name(by).is_ok() =>
            {
                Ok(turn)
            }
            _ => Err(OfficeError::Unexpected(
                "a turn the hub's API does not have".into(),
            )),
        }
    }

    /// This PC is done with `klant`: `backed_up` says whether it backed the klant up (the
    /// office's other PCs then skip it within their slot). Whether this PC still had the turn.
    pub async fn end(&self, klant: &KlantId, backed_up: bool) -> OfficeResult<bool> {
        let flag = if backed_up { "true" } else { "false" };
        let answer = self
            .call(
                Method::DELETE,
                &["api", "office", "turns", klant.as_str()],
                Body::None,
                &[("backed_up", flag)],
                MOST_BODY,
            )
            .await?;
        #[derive(Deserialize)]
        struct Ended {
            had_turn: bool,
        }
        Ok(parse::<Ended>(&answer)?.had_turn)
    }

    /// This PC backed `klant` up `ago` ago and could not tell the hub then (it was away): the
    /// office's other PCs skip the klant within their slot from now on. Whether the hub
    /// recorded it (not when it knows of a later backup).
    pub async fn told_done(&self, klant: &KlantId, ago: Duration) -> OfficeResult<bool> {
        let body = serde_json::json!({ "ago_ms": ago.as_millis().min(i64::MAX as u128) as i64 });
        let path = ["api", "office", "turns", klant.as_str(), "done"];
        let answer = (self.call(Method::PUT, &path, Body::Json(body), &[], MOST_BODY)).await?;
        #[derive(Deserialize)]
        struct Recorded {
            recorded: bool,
        }
        Ok(parse::<Recorded>(&answer)?.recorded)
    }

    /// Whether `key` is the office's office key by the check value the hub keeps of it (a
    /// keyed hash: the hub never holds the key): `true` when it is, or when the office had none
    /// and this one is its key from now on (the office's first PC); `false` for another office
    /// key — two PCs that each made one, or a key copied wrong.
    pub async fn check_key(&self, key: &OfficeKey) -> OfficeResult<bool> {
        let body = serde_json::json!({ "check": key.check_value() });
        let path = ["api", "office", "key-check"];
        let put = self.call(Method::PUT, &path, Body::Json(body), &[], MOST_BODY);
        let answer = match put.await {
            Ok(answer) => answer,
            Err(OfficeError::Unexpected(why)) if why == "409 other_office_key" => return Ok(false),
            Err(e) => return Err(e),
        };
        #[derive(Deserialize)]
        struct Checked {
            key_check: String,
        }
        match parse::<Checked>(&answer)?.key_check.as_str() {
            "set" | "same" => Ok(true),
            _ => Err(OfficeError::Unexpected(
                "an office key check outside the hub's API".into(),
            )),
        }
    }

    /// This PC's name at the hub: the one its key was made for.
    pub async fn me(&self) -> OfficeResult<String> {
        let answer = self
            .call(
                Method::GET,
                &["api", "office", "me"],
                Body::None,
                &[],
                MOST_BODY,
            )
            .await?;
        #[derive(Deserialize)]
        struct Me {
            pc: String,
        }
        let pc = parse::<Me>(&answer)?.pc;
        Membership::check_pc_name(&pc)
            .map_err(|_| OfficeError::Unexpected("a PC without a PC's name".into()))?;
        Ok(pc)
    }

    /// The office's PCs (a revoked one too, with when).
    pub async fn pcs(&self) -> OfficeResult<Vec<PcSummary>> {
        let answer = self
            .call(
                Method::GET,
                &["api", "office", "pcs"],
                Body::None,
                &[],
                MOST_BODY,
            )
            .await?;
        #[derive(Deserialize)]
        struct Pcs {
            pcs: Vec<PcSummary>,
        }
        let pcs = parse::<Pcs>(&answer)?.pcs;
        // Names the hub gives are shown on every PC: only PC names are taken.
        match pcs
            .iter()
            .all(|p| Membership::check_pc_name(&p.name).is_ok())
        {
            true => Ok(pcs),
            false => Err(OfficeError::Unexpected("a PC without a PC's name".into())),
        }
    }

    /// This PC's report, sealed ([`crate::sealed`]), kept at the hub in place of its last.
    pub async fn put_report(&self, sealed: Vec<u8>) -> OfficeResult<()> {
        if sealed.len() > MOST_REPORT {
            return Err(OfficeError::Input(format!(
                "This PC's report to the office is {} MiB, more than the hub keeps ({} MiB): it has too many klanten for one PC's report.",
                sealed.len() / (1024 * 1024),
                MOST_REPORT / (1024 * 1024)
            )));
        }
        self.call(
            Method::PUT,
            &["api", "office", "report"],
            Body::Bytes(sealed),
            &[],
            MOST_BODY,
        )
        .await
        .map(drop)
    }

    /// The office's PCs' last reports, sealed: each PC's name, how long ago the hub received
    /// it, whether the PC was revoked since, and the sealed bytes.
    pub async fn reports(&self) -> OfficeResult<Vec<SealedReport>> {
        use base64::Engine as _;
        let answer = self
            .call(
                Method::GET,
                &["api", "office", "reports"],
                Body::None,
                &[],
                MOST_REPORTS,
            )
            .await?;
        #[derive(Deserialize)]
        struct Reports {
            reports: Vec<Wire>,
        }
        #[derive(Deserialize)]
        struct Wire {
            pc: String,
            age_ms: i64,
            revoked: bool,
            sealed: String,
        }
        let reports = parse::<Reports>(&answer)?.reports;
        (reports.into_iter())
            .map(|r| {
                let sealed = base64::engine::general_purpose::STANDARD
                    .decode(r.sealed)
                    .map_err(|_| OfficeError::Unexpected("a report that is not base64".into()))?;
                Membership::check_pc_name(&r.pc).map_err(|_| {
                    OfficeError::Unexpected("a report of a PC without a PC's name".into())
                })?;
                Ok(SealedReport {
                    pc: r.pc,
                    age_ms: r.age_ms.max(0),
                    revoked: r.revoked,
                    sealed,
                })
            })
            .collect()
    }

    /// An invitation for a new PC named `pc`: the hub's one-time enrolment token (it works
    /// once, for a day) — for a join code, with the office key, shown on this PC only.
    pub async fn invite(&self, pc: &str) -> OfficeResult<Secret> {
        Membership::check_pc_name(pc)?;
        let body = serde_json::json!({ "pc": pc });
        let answer = self
            .call(Method::POST, &["api", "office", "invites"], Body::Json(body), &[], MOST_BODY)
            .await
            .map_err(|e| match e {
                OfficeError::Unexpected(why) if why.contains("pc_taken") => OfficeError::Input(format!(
                    "The office has a PC named \"{pc}\" with a working key: choose another name, or revoke that PC first (kluis office revoke)."
                )),
                other => other,
            })?;
        #[derive(Deserialize)]
        struct Invited {
            token: String,
        }
        let token = parse::<Invited>(&answer)?.token;
        match token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()) {
            true => Ok(Secret::new(token)),
            false => Err(OfficeError::Unexpected(
                "an enrolment token of another shape".into(),
            )),
        }
    }

    /// Redeems an enrolment `token` (from a join code): this PC's name and key at the hub.
    pub async fn enrol(&self, token: &Secret) -> OfficeResult<(String, Secret)> {
        let body = serde_json::json!({ "token": token.expose() });
        let answer = self
            .call(Method::POST, &["api", "office", "enrol"], Body::Json(body), &[], MOST_BODY)
            .await
            .map_err(|e| match e {
                OfficeError::Unexpected(why) if why.starts_with("404") => OfficeError::Input(
                    "This join code was used already, ran out (it works a day) or was never made: ask a PC of the office for a new one (kluis office invite, or Settings → Office → Add a PC).".into(),
                ),
                other => other,
            })?;
        #[derive(Deserialize)]
        struct Enrolled {
            pc: String,
            key: String,
        }
        let enrolled = parse::<Enrolled>(&answer)?;
        let key = Secret::new(enrolled.key);
        Membership::check_pc_name(&enrolled.pc)
            .map_err(|_| OfficeError::Unexpected("a PC without a PC's name".into()))?;
        Ok((enrolled.pc, key))
    }

    /// PC `name`'s key works no more (a stolen or retired PC); `false` when the office has
    /// no PC of that name with a working key.
    pub async fn revoke(&self, name: &str) -> OfficeResult<bool> {
        Membership::check_pc_name(name)?;
        match self
            .call(
                Method::DELETE,
                &["api", "office", "pcs", name],
                Body::None,
                &[],
                MOST_BODY,
            )
            .await
        {
            Ok(_) => Ok(true),
            Err(OfficeError::Unexpected(why)) if why.starts_with("404") => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// One call: the path's segments (each escaped), a body, a query; the answer's body (at
    /// most `most` bytes) when the status is a success, otherwise what the status means.
    async fn call(
        &self,
        method: Method,
        segments: &[&str],
        body: Body,
        query: &[(&str, &str)],
        most: usize,
    ) -> OfficeResult<Vec<u8>> {
        let mut url = self.0.base.clone();
        url.path_segments_mut()
            .map_err(|()| OfficeError::Input("The hub's address cannot take a path.".into()))?
            .pop_if_empty()
            .extend(segments);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut request = (self.0.client).request(method, url).timeout(CALL_BOUND);
        if let Some(key) = &self.0.key {
            request = request.bearer_auth(key.expose());
        }
        request = match body {
            Body::None => request,
            Body::Json(json) => request.json(&json),
            Body::Bytes(bytes) => request.body(bytes),
        };
        let unreachable = |why: String| OfficeError::Unreachable {
            hub: self.address(),
            why,
        };
        let mut response = request.send().await.map_err(|e| unreachable(describe(e)))?;
        let status = response.status();
        // Read to a bound: a hub that sends without end is not waited for, nor kept in memory.
        let mut read = Vec::new();
        let reading = async {
            while let Some(chunk) = response.chunk().await? {
                if read.len() + chunk.len() > most {
                    return Ok::<bool, reqwest::Error>(false);
                }
                read.extend_from_slice(&chunk);
            }
            Ok(true)
        };
        match reading.await {
            Ok(true) => {}
            Ok(false) => return Err(OfficeError::Unexpected("an answer too long".into())),
            Err(e) => return Err(unreachable(describe(e))),
        }
        match status {
            s if s.is_success() => Ok(read),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(OfficeError::Refused {
                code: refusal_code(&read).unwrap_or_else(|| status.as_u16().to_string()),
            }),
            s if s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS => {
                Err(unreachable(format!("HTTP {}", s.as_u16())))
            }
            s => Err(OfficeError::Unexpected(format!(
                "{} {}",
                s.as_u16(),
                refusal_code(&read).unwrap_or_default()
            ))),
        }
    }
}

/// A refusal's `code`, when it is one of the hub's own (short, plain): never other text of
/// the body, which a server may fill with anything.
fn refusal_code(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let code = value.get("code")?.as_str()?;
    (code.len() <= 40 && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        .then(|| code.to_string())
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> OfficeResult<T> {
    serde_json::from_slice(body)
        .map_err(|_| OfficeError::Unexpected("an answer that is not the hub's JSON".into()))
}

/// Why a request failed, in words, without its URL (the klant's id is in it).
fn describe(e: reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("no answer within {} s", CALL_BOUND.as_secs());
    }
    let e = e.without_url();
    let mut why = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(inner) = source {
        why = format!("{why}: {inner}");
        source = inner.source();
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a refusal's short, plain code is kept from a body; anything else a hub may send
    /// (long text, markup, another shape, not JSON) is dropped, never quoted.
    #[test]
    fn only_a_plain_refusal_code_is_kept_from_a_body() {
        assert_eq!(
            refusal_code(br#"{"code":"not_a_pc","message":"x"}"#).as_deref(),
            Some("not_a_pc")
        );
        for hostile in [
            &br#"{"code":"<script>alert(1)</script>"}"#[..],
            br#"{"code":"klr_abc_secret-key-echoed"}"#,
            br#"{"code":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#,
            br#"{"code":7}"#,
            br#"["code"]"#,
            b"\xff\xfe not json",
            b"",
        ] {
            assert_eq!(
                refusal_code(hostile),
                None,
                "{:?}",
                String::from_utf8_lossy(hostile)
            );
        }
    }

    /// A turn in another shape than the hub's API is an error, never a panic nor a guess.
    #[test]
    fn a_turn_of_another_shape_is_refused() {
        for hostile in [
            &br#"{"turn":"mine"}"#[..],
            br#"{"turn":"held"}"#,
            br#"{"turn":"done","by":"X","ago_ms":"soon"}"#,
            br#"{"turn":"yours","hold_ms":1e400}"#,
            b"null",
            b"{}",
        ] {
            assert!(
                parse::<TurnAnswer>(hostile).is_err(),
                "{:?}",
                String::from_utf8_lossy(hostile)
            );
        }
        let done: TurnAnswer =
            parse(br#"{"turn":"done","by":"BALIE","ago_ms":5,"extra":1}"#).unwrap();
        assert_eq!(
            done,
            TurnAnswer::Done {
                by: "BALIE".into(),
                ago_ms: 5
            }
        );
    }
}
