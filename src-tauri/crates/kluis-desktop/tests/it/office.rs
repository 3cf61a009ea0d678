//! Settings → *Office* and the dashboard's *Office* in two apps (two PCs: each its own files
//! and keyring) around one office hub (a kluis-relay over TLS on 127.0.0.1, its CA picked in
//! the dialog as the office's own): the first PC joins and makes the office key, the second
//! joins with it, each sees the other's klanten in the office view; a mistyped office key is
//! refused; leaving keeps nothing.

use kluis_desktop::{DesktopApp, Flag, OfficeJoinInput};

use crate::common::{app, office, Chooses};
use crate::test_hub::TestHub;

/// A hub with a PC key for each of `pcs`: the hub, the file of its CA, the keys.
async fn hub(dir: &tempfile::TempDir, pcs: &[&str]) -> (TestHub, std::path::PathBuf, Vec<String>) {
    let hub = TestHub::in_memory().await;
    let mut keys = Vec::new();
    for pc in pcs {
        keys.push(hub.pc_key(pc).await);
    }
    let ca_file = dir.path().join("office-ca.pem");
    std::fs::write(&ca_file, &hub.ca_pem).unwrap();
    (hub, ca_file, keys)
}

fn join(hub: &str, pc: &str, pc_key: &str, office_key: Option<&str>) -> OfficeJoinInput {
    OfficeJoinInput {
        code: None,
        hub: hub.into(),
        pc: pc.into(),
        pc_key: pc_key.into(),
        office_key: office_key.map(str::to_string),
        own_ca: true,
    }
}

/// A PC's app, its dialogs picking `ca` as the hub's CA.
fn pc(dir: &tempfile::TempDir, ca: &std::path::Path) -> DesktopApp {
    let app = app(dir, Some(dir.path().join("backups")));
    app.set_dialogs(Chooses::new(ca));
    app
}

/// Two PCs join the office from their Settings; each one's klant shows in the office view of
/// either, flagged (not planned); the office key is shown once, to the first; a key that is
/// not the office's is refused; leaving leaves no membership.
#[tokio::test]
async fn two_apps_join_the_office_and_see_each_other_s_klanten() {
    let sim = kluis_sim::Sim::start(kluis_sim::SimConfig::default())
        .await
        .unwrap();
    let (hub_dir, receptie_dir, balie_dir) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (hub, ca, keys) = hub(&hub_dir, &["RECEPTIE", "BALIE"]).await;
    let url = hub.url.clone();
    let receptie = pc(&receptie_dir, &ca);
    let balie = pc(&balie_dir, &ca);
    receptie
        .accounts
        .save_profile(office(&sim, None))
        .await
        .unwrap();
    assert!(receptie.office.membership().is_none());

    let first = receptie
        .office
        .join(join(&url, "RECEPTIE", &keys[0], None))
        .await
        .unwrap()
        .unwrap();
    let made = first
        .made_key
        .expect("the office's first PC makes the office key");
    assert_eq!(first.membership.pc, "RECEPTIE");
    let wrong = kluis_office::OfficeKey::generate().unwrap();
    let refused = balie
        .office
        .join(join(&url, "BALIE", &keys[1], Some(wrong.text().expose())))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("not this office's"),
        "{refused}"
    );
    assert!(
        balie.office.membership().is_none(),
        "a refused join keeps nothing"
    );
    let second = balie
        .office
        .join(join(&url, "BALIE", &keys[1], Some(&made)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.made_key, None, "shown once, to the PC that made it");

    // A third PC joins with a join code BALIE made (Add a PC): no key from the operator.
    let laptop_dir = tempfile::tempdir().unwrap();
    let laptop = pc(&laptop_dir, &ca);
    let invite = balie.office.invite("LAPTOP").await.unwrap();
    assert!(invite.code.starts_with("KLUIS-JOIN-"));
    let by_code = OfficeJoinInput {
        code: Some(invite.code.clone()),
        ..join("", "", "", None)
    };
    let third = laptop.office.join(by_code).await.unwrap().unwrap();
    assert_eq!(
        (third.membership.pc.as_str(), third.made_key),
        ("LAPTOP", None)
    );

    let view = balie.office.view().await.unwrap();
    let names: Vec<&str> = view.pcs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["BALIE", "LAPTOP", "RECEPTIE"]);

    // A plan set on RECEPTIE reaches the office soon, not at the next hourly report.
    let telling = receptie.office.clone();
    let hourly = tokio::spawn(async move {
        telling
            .keep_telling_every(std::time::Duration::from_secs(3600))
            .await
    });
    // (This test's runtime has one thread: yielding lets the reporter start and wait for
    // changes — the wake-ups left by the klant saved and the joins above are none of this
    // test's.)
    tokio::task::yield_now().await;
    let id = receptie.accounts.list()[0].id.clone();
    let daily = kluis_desktop::PlanInput {
        schedule: kluis_core::plan::Schedule::Daily {
            at: kluis_core::plan::ClockTime::parse("02:00").unwrap(),
        },
        paused: false,
    };
    receptie.plans.set_plan(&id, daily).unwrap();
    let planned = || async {
        let view = balie.office.view().await.unwrap();
        let klant = view.klanten.iter().find(|k| k.names == ["Office"]).cloned();
        klant.is_some_and(|k| k.on[0].plan.is_some())
    };
    let told = async {
        while !planned().await {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), told)
        .await
        .expect("the office hears of the plan within seconds");
    hourly.abort();
    let klant = view
        .klanten
        .iter()
        .find(|k| k.names == ["Office"])
        .expect("RECEPTIE's klant");
    assert_eq!(klant.on[0].pc, "RECEPTIE");
    assert_eq!(klant.flags, [Flag::NotPlanned]);

    assert_eq!(
        receptie.office.leave().await.unwrap(),
        None,
        "its key revoked at the hub"
    );
    assert!(receptie.office.membership().is_none());
    let view = balie.office.view().await.unwrap();
    assert!(view.pcs.iter().any(|p| p.name == "RECEPTIE" && p.revoked));
    let klant = view.klanten.iter().find(|k| k.names == ["Office"]).unwrap();
    assert!(
        klant.flags.contains(&Flag::OnRevokedPc {
            pc: "RECEPTIE".into()
        }),
        "{:?}",
        klant.flags
    );
    assert!(receptie.office.view().await.is_err(), "in no office now");
}
