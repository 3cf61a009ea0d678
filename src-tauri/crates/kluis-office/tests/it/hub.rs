//! This PC's side of the office hub against a real kluis-relay over TLS on 127.0.0.1: turns
//! asked, renewed while held and ended; a dropped turn given back; a revoked key refused; a hub
//! that is not there said within the bound.

use std::time::Duration;

use crate::test_hub::TestHub;
use kluis_core::Secret;
use kluis_office::{Hub, KlantId, Lease, Membership, OfficeError, OfficeKey, TurnAnswer};
use kluis_relay::tenants::new_key;

/// A hub with its PCs RECEPTIE and BALIE: the hub, a client for each PC, its URL and CA.
async fn office() -> (TestHub, Hub, Hub, String, String) {
    let hub = TestHub::in_memory().await;
    let mut clients = Vec::new();
    for pc in ["RECEPTIE", "BALIE"] {
        let membership = Membership {
            hub: hub.url.clone(),
            pc: pc.into(),
            hub_ca_pem: Some(hub.ca_pem.clone()),
            joined_ms: 0,
        };
        clients.push(Hub::new(&membership, Secret::new(hub.pc_key(pc).await)).unwrap());
    }
    let balie = clients.pop().unwrap();
    let receptie = clients.pop().unwrap();
    let (url, ca) = (hub.url.clone(), hub.ca_pem.clone());
    (hub, receptie, balie, url, ca)
}

fn klant() -> KlantId {
    KlantId::of(
        &OfficeKey::generate().unwrap(),
        "https://api.example.nl/webservice_v2",
        "devries",
    )
    .unwrap()
}

const HOUR: Duration = Duration::from_secs(3600);

/// Waits (a 30 s bound) until `check` holds, asking again between tries.
async fn until<F: std::future::Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !check().await {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::task::yield_now().await;
    }
}

/// One PC holds the turn and the other is told so; once the holder says it backed the klant
/// up, the other is told by whom and that it was within its slot — and a PC whose slot began
/// only now is given the turn (a backup before its slot does not count).
#[tokio::test]
async fn a_turn_is_one_pc_s_and_a_backup_is_told_to_the_other() {
    let (_store, receptie, balie, _, _) = office().await;
    let k = klant();
    assert!(matches!(
        receptie.take(&k, HOUR, HOUR).await.unwrap(),
        TurnAnswer::Yours { .. }
    ));
    let held = balie.take(&k, HOUR, HOUR).await.unwrap();
    assert!(
        matches!(&held, TurnAnswer::Held { by, .. } if by == "RECEPTIE"),
        "{held:?}"
    );
    let lease = Lease::hold(receptie.clone(), k.clone());
    assert!(
        lease.end(true).await.unwrap(),
        "RECEPTIE still had the turn"
    );
    let done = balie.take(&k, HOUR, HOUR).await.unwrap();
    assert!(
        matches!(&done, TurnAnswer::Done { by, ago_ms } if by == "RECEPTIE" && *ago_ms >= 0),
        "{done:?}"
    );
    let fresh = balie.take(&k, HOUR, Duration::ZERO).await.unwrap();
    assert!(
        matches!(fresh, TurnAnswer::Yours { .. }),
        "a slot that began now: {fresh:?}"
    );
}

/// A held turn is renewed while its lease lives (the time left grows again), and a lease
/// dropped without being ended gives the turn back.
#[tokio::test]
async fn a_held_turn_is_renewed_and_a_dropped_one_given_back() {
    let (_store, receptie, balie, _, _) = office().await;
    let k = klant();
    let hold = Duration::from_secs(600);
    assert!(matches!(
        receptie.take(&k, hold, Duration::ZERO).await.unwrap(),
        TurnAnswer::Yours { .. }
    ));
    let left = |answer: TurnAnswer| match answer {
        TurnAnswer::Held { left_ms, .. } => left_ms,
        other => panic!("held by RECEPTIE, not {other:?}"),
    };
    let first = left(balie.take(&k, hold, Duration::ZERO).await.unwrap());
    let lease = Lease::renewed_every(receptie.clone(), k.clone(), hold, Duration::from_millis(20));
    until("the turn was renewed", || async {
        left(balie.take(&k, hold, Duration::ZERO).await.unwrap()) > first
    })
    .await;
    assert_eq!(lease.taken_over_by(), None);
    drop(lease);
    until("the dropped turn was given back", || async {
        matches!(
            balie.take(&k, hold, Duration::ZERO).await.unwrap(),
            TurnAnswer::Yours { .. }
        )
    })
    .await;
}

/// A revoked PC's key is refused with a code that says so (and the message says what to do);
/// the office's PCs are listed with the revocation.
#[tokio::test]
async fn a_revoked_pc_is_refused() {
    let (_store, receptie, balie, _, _) = office().await;
    assert!(receptie.revoke("BALIE").await.unwrap());
    assert!(!receptie.revoke("BALIE").await.unwrap(), "revoked once");
    let refused = balie.take(&klant(), HOUR, HOUR).await.unwrap_err();
    assert!(
        matches!(refused, OfficeError::Refused { .. }),
        "{refused:?}"
    );
    assert!(
        refused.to_string().contains("kluis office join"),
        "{refused}"
    );
    let pcs = receptie.pcs().await.unwrap();
    let balie = pcs.iter().find(|p| p.name == "BALIE").unwrap();
    assert!(balie.revoked_ms.is_some(), "{pcs:?}");
}

/// A hub that is not listening, or whose certificate this PC does not trust, is said as out of
/// reach at once (bounded), in words that name no key or klant.
#[tokio::test]
async fn a_hub_out_of_reach_is_said() {
    let (_store, _, _, url, _) = office().await;
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_url = format!("https://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    let secret = new_key().text;
    for (hub, ca) in [(closed_url, None), (url, None)] {
        let membership = Membership {
            hub,
            pc: "RECEPTIE".into(),
            hub_ca_pem: ca,
            joined_ms: 0,
        };
        let hub = Hub::new(&membership, Secret::new(secret.clone())).unwrap();
        let k = klant();
        let error = hub.take(&k, HOUR, HOUR).await.unwrap_err();
        assert_eq!(error.code(), "OFFICE_HUB_UNREACHABLE", "{error}");
        let said = error.to_string();
        assert!(
            !said.contains(&secret) && !said.contains(k.as_str()),
            "{said}"
        );
    }
}

/// This PC checks a PC's name exactly as the hub does (the rule is written in both, so that a
/// PC says a bad name before asking, and reads the hub's answers with the hub's rule).
#[test]
fn a_pc_name_is_checked_as_the_hub_checks_it() {
    let names = [
        "RECEPTIE",
        "pc-2",
        "Balie 1",
        "a",
        "9",
        "a.b_c-d",
        "",
        " x",
        "x ",
        "-x",
        ".x",
        "a/b",
        "é",
        "tab\t",
        "nul\0",
        &"x".repeat(63),
        &"x".repeat(64),
    ];
    for name in names {
        assert_eq!(
            Membership::check_pc_name(name).is_ok(),
            kluis_relay::storage::office::check_pc_name(name).is_ok(),
            "{name:?}"
        );
    }
}

/// A hub that accepts connections and never answers is given up on within the call's bound
/// (a backup waits on it no longer), said as out of reach.
#[tokio::test]
async fn a_hub_that_never_answers_is_given_up_on() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    // Accepted and kept open, never read nor answered.
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let membership = Membership {
        hub: url,
        pc: "RECEPTIE".into(),
        hub_ca_pem: None,
        joined_ms: 0,
    };
    let hub = Hub::new(&membership, Secret::new(new_key().text)).unwrap();
    let asked = tokio::time::timeout(
        kluis_office::hub::CALL_BOUND * 3,
        hub.take(&klant(), HOUR, HOUR),
    )
    .await
    .expect("given up on within the bound");
    assert_eq!(asked.unwrap_err().code(), "OFFICE_HUB_UNREACHABLE");
}

/// A hub that redirects to another origin is not followed: this PC's key never reaches it.
#[tokio::test]
async fn a_redirect_elsewhere_is_not_followed() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let ca = kluis_https::LocalCa::generate("hubs CA").unwrap();
    let serve = |router: axum::Router| {
        let tls = ca.server_config(&["127.0.0.1"]).unwrap();
        async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            tokio::spawn(kluis_https::serve_tls(
                listener,
                tls,
                router,
                Default::default(),
                std::future::pending(),
            ));
            format!("https://127.0.0.1:{port}")
        }
    };
    let reached = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = reached.clone();
    let elsewhere = serve(axum::Router::new().fallback(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async { "{\"pcs\":[]}" }
    }))
    .await;
    let target = format!("{elsewhere}/api/office/pcs");
    let redirecting = serve(axum::Router::new().fallback(move || {
        let target = target.clone();
        async move { axum::response::Redirect::temporary(&target) }
    }))
    .await;
    let membership = Membership {
        hub: redirecting,
        pc: "RECEPTIE".into(),
        hub_ca_pem: Some(ca.ca_pem()),
        joined_ms: 0,
    };
    let hub = Hub::new(&membership, Secret::new(new_key().text)).unwrap();
    assert!(
        hub.pcs().await.is_err(),
        "a redirect to another origin is an error"
    );
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the other origin was never asked"
    );
}
