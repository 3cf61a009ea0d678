//! What every storage engine must do alike for the office hub: PCs added to a live tenant only,
//! one live PC per name, revoked at once and apart from the tenant's own keys (which a rotation
//! ends without ending the PCs'); a klant's turn held by one PC at a time, renewed by its
//! holder, taken over once it ran out, a backup within the asker's slot said, offices apart,
//! and an office's klanten bounded. Run on SQLite and on PostgreSQL.

use kluis_relay::storage::{now_ms, KeyCheck, Storage, Turn};
use kluis_relay::tenants::new_key;
use kluis_relay::Quota;

/// A klant's id as the PCs make it (64 hex digits).
pub fn klant(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

pub async fn office_contract(store: &dyn Storage) {
    let office = new_key();
    assert!(store
        .add_tenant("office", Quota::default(), &office.id, office.hash)
        .await
        .unwrap());
    let (a, b, again) = (new_key(), new_key(), new_key());
    assert!(store
        .add_pc("office", "RECEPTIE", &a.id, a.hash)
        .await
        .unwrap());
    assert!(store
        .add_pc("office", "Laptop Jan", &b.id, b.hash)
        .await
        .unwrap());
    assert!(
        !store
            .add_pc("office", "RECEPTIE", &again.id, again.hash)
            .await
            .unwrap(),
        "one live PC of a name"
    );
    assert!(
        !store
            .add_pc("nobody", "X", &again.id, again.hash)
            .await
            .unwrap(),
        "no PC of a tenant that is not there"
    );
    let key = store.key(&a.id).await.unwrap().expect("a PC key is a key");
    assert_eq!(
        (key.tenant.as_str(), key.pc.as_deref()),
        ("office", Some("RECEPTIE"))
    );
    assert_eq!(store.key(&office.id).await.unwrap().unwrap().pc, None);
    assert!(
        store.key_ids().await.unwrap().contains(&b.id),
        "the key directory sees PC keys"
    );

    // A turn: one PC at a time; its holder renews it; another is told who has it.
    let k = klant(1);
    let hour = 3_600_000;
    let mine = store
        .take_turn("office", "RECEPTIE", &k, hour, 0)
        .await
        .unwrap();
    assert_eq!(mine, Turn::Yours { hold_ms: hour });
    match store
        .take_turn("office", "Laptop Jan", &k, hour, 0)
        .await
        .unwrap()
    {
        Turn::Held { by, left_ms } => {
            assert_eq!(by, "RECEPTIE");
            assert!(left_ms > 0 && left_ms <= hour, "{left_ms}");
        }
        other => panic!("held by RECEPTIE: {other:?}"),
    }
    assert_eq!(
        store
            .take_turn("office", "RECEPTIE", &k, hour, 0)
            .await
            .unwrap(),
        Turn::Yours { hold_ms: hour },
        "renewed by its holder"
    );
    // Done: said to the other PC while its slot began before; a new slot backs up again.
    assert!(store
        .end_turn("office", "RECEPTIE", &k, true)
        .await
        .unwrap());
    match store
        .take_turn("office", "Laptop Jan", &k, hour, hour)
        .await
        .unwrap()
    {
        Turn::Done { by, ago_ms } => assert!(by == "RECEPTIE" && (0..hour).contains(&ago_ms)),
        other => panic!("done by RECEPTIE within the slot: {other:?}"),
    }
    assert_eq!(
        store
            .take_turn("office", "Laptop Jan", &k, 0, 0)
            .await
            .unwrap(),
        Turn::Yours { hold_ms: 0 },
        "a slot begun after that backup: Laptop Jan's turn"
    );
    // A turn that ran out (held for no time at all) is taken over.
    assert_eq!(
        store
            .take_turn("office", "RECEPTIE", &k, hour, 0)
            .await
            .unwrap(),
        Turn::Yours { hold_ms: hour },
        "Laptop Jan's turn ran out"
    );
    // A PC whose turn was taken over still records its backup, and gives up nothing of the
    // other's turn.
    assert!(!store
        .end_turn("office", "Laptop Jan", &k, true)
        .await
        .unwrap());
    match store
        .take_turn("office", "RECEPTIE", &k, hour, hour)
        .await
        .unwrap()
    {
        Turn::Done { by, .. } => assert_eq!(by, "Laptop Jan"),
        other => panic!("Laptop Jan's backup recorded: {other:?}"),
    }
    // Given up without a backup: the next may take it.
    assert!(store
        .end_turn("office", "RECEPTIE", &k, false)
        .await
        .unwrap());

    // Told later (made while the hub was away): recorded with its own time, unless a later
    // backup is known; a turn held now is left alone.
    let k4 = klant(4);
    assert!(
        store
            .record_done("office", "Laptop Jan", &k4, 2 * hour)
            .await
            .unwrap(),
        "a klant the hub had not seen"
    );
    let done_by_laptop = |turn: Turn| match turn {
        Turn::Done { by, ago_ms } => {
            assert!(
                by == "Laptop Jan" && (2 * hour..3 * hour).contains(&ago_ms),
                "{by} {ago_ms}"
            )
        }
        other => panic!("Laptop Jan's backup of two hours ago: {other:?}"),
    };
    done_by_laptop(
        (store.take_turn("office", "RECEPTIE", &k4, hour, 3 * hour))
            .await
            .unwrap(),
    );
    assert!(
        !store
            .record_done("office", "RECEPTIE", &k4, 4 * hour)
            .await
            .unwrap(),
        "an older backup told later does not hide a later one"
    );
    done_by_laptop(
        (store.take_turn("office", "RECEPTIE", &k4, hour, 3 * hour))
            .await
            .unwrap(),
    );
    assert_eq!(
        (store.take_turn("office", "RECEPTIE", &k4, hour, 0))
            .await
            .unwrap(),
        Turn::Yours { hold_ms: hour }
    );
    assert!(store
        .record_done("office", "Laptop Jan", &k4, 0)
        .await
        .unwrap());
    match (store.take_turn("office", "Laptop Jan", &k4, hour, 0))
        .await
        .unwrap()
    {
        Turn::Held { by, .. } => assert_eq!(by, "RECEPTIE", "a turn held is left alone"),
        other => panic!("still held by RECEPTIE: {other:?}"),
    }
    assert!(store
        .end_turn("office", "RECEPTIE", &k4, false)
        .await
        .unwrap());

    // Another office knows nothing of this one's klant.
    let other = new_key();
    assert!(store
        .add_tenant("other", Quota::default(), &other.id, other.hash)
        .await
        .unwrap());
    let pc = new_key();
    assert!(store
        .add_pc("other", "RECEPTIE", &pc.id, pc.hash)
        .await
        .unwrap());
    let k2 = klant(2);
    store
        .take_turn("office", "RECEPTIE", &k2, hour, 0)
        .await
        .unwrap();
    assert_eq!(
        store
            .take_turn("other", "RECEPTIE", &k2, hour, hour)
            .await
            .unwrap(),
        Turn::Yours { hold_ms: hour },
        "offices apart"
    );

    // Revoked: the PC's key ends now, the tenant's own and the other PC's do not; what it said
    // stops counting (its backup skips nobody, its turn is free); a new key may then be given
    // to that name. A rotation of the tenant's keys leaves the PCs' alone.
    let k3 = klant(3);
    store
        .take_turn("office", "Laptop Jan", &k3, hour, 0)
        .await
        .unwrap();
    assert!(store.revoke_pc("office", "Laptop Jan").await.unwrap());
    assert!(
        !store
            .record_done("office", "Laptop Jan", &k4, 0)
            .await
            .unwrap(),
        "a revoked PC's word counts no more"
    );
    assert_eq!(
        store
            .take_turn("office", "RECEPTIE", &k, hour, hour)
            .await
            .unwrap(),
        Turn::Yours { hold_ms: hour },
        "the revoked PC's backup skips nobody"
    );
    assert_eq!(
        store
            .take_turn("office", "RECEPTIE", &k3, hour, 0)
            .await
            .unwrap(),
        Turn::Yours { hold_ms: hour },
        "the revoked PC's turn is free"
    );
    assert!(
        !store.revoke_pc("office", "Laptop Jan").await.unwrap(),
        "once"
    );
    let ended = store.key(&b.id).await.unwrap().unwrap();
    assert!(ended.expires_ms.is_some_and(|end| end <= now_ms()));
    assert_eq!(store.key(&a.id).await.unwrap().unwrap().expires_ms, None);
    let pcs = store.pcs("office").await.unwrap();
    let names: Vec<(&str, bool)> = pcs
        .iter()
        .map(|p| (p.name.as_str(), p.revoked_ms.is_some()))
        .collect();
    assert_eq!(names, [("Laptop Jan", true), ("RECEPTIE", false)]);
    assert!(store
        .add_pc("office", "Laptop Jan", &again.id, again.hash)
        .await
        .unwrap());
    let rotated = new_key();
    assert!(store
        .rotate_key("office", &rotated.id, rotated.hash, now_ms() + 1000)
        .await
        .unwrap());
    assert_eq!(
        store.key(&a.id).await.unwrap().unwrap().expires_ms,
        None,
        "PCs' keys kept"
    );
    assert!(store
        .key(&office.id)
        .await
        .unwrap()
        .unwrap()
        .expires_ms
        .is_some());
    let summary = store.tenants().await.unwrap();
    let office_row = summary.iter().find(|t| t.name == "office").unwrap();
    assert_eq!(
        office_row.live_keys, 2,
        "the tenant's own keys, not its PCs'"
    );

    // A revoked tenant's PCs and turns are gone with it.
    assert!(store.revoke_tenant("office").await.unwrap());
    assert!(store.key(&a.id).await.unwrap().is_none());
    assert!(store.pcs("office").await.unwrap().is_empty());
}

/// Each PC's last report: replaced by its next, kept per PC and per office, its age by the
/// store's clock, a revoked PC's kept and marked, and gone with a revoked tenant; the office
/// key's check value set once per office (of two at once, one), anew only when no other PC
/// that checked it is left (revoked ones are not).
pub async fn reports_contract(store: &dyn Storage) {
    for tenant in ["reports", "elsewhere"] {
        let key = new_key();
        assert!(store
            .add_tenant(tenant, Quota::default(), &key.id, key.hash)
            .await
            .unwrap());
    }
    for (tenant, pc) in [
        ("reports", "RECEPTIE"),
        ("reports", "BALIE"),
        ("reports", "KASSA"),
        ("elsewhere", "RECEPTIE"),
        ("elsewhere", "BALIE"),
        ("elsewhere", "KASSA"),
        ("elsewhere", "LAPTOP"),
    ] {
        let key = new_key();
        assert!(store.add_pc(tenant, pc, &key.id, key.hash).await.unwrap());
    }
    assert!(store.reports("reports").await.unwrap().is_empty());
    store
        .put_report("reports", "RECEPTIE", b"first")
        .await
        .unwrap();
    store
        .put_report("reports", "RECEPTIE", b"second")
        .await
        .unwrap();
    store
        .put_report("reports", "BALIE", &[0u8, 255, 7])
        .await
        .unwrap();
    store
        .put_report("elsewhere", "RECEPTIE", b"other office")
        .await
        .unwrap();
    let reports = store.reports("reports").await.unwrap();
    let seen: Vec<(&str, &[u8], bool)> = (reports.iter())
        .map(|r| (r.pc.as_str(), r.sealed.as_slice(), r.revoked))
        .collect();
    assert_eq!(
        seen,
        [
            ("BALIE", &[0u8, 255, 7][..], false),
            ("RECEPTIE", &b"second"[..], false)
        ],
        "the last of each PC, this office's only"
    );
    assert!(
        reports.iter().all(|r| (0..60_000).contains(&r.age_ms)),
        "{reports:?}"
    );
    assert!(store.revoke_pc("reports", "BALIE").await.unwrap());
    let reports = store.reports("reports").await.unwrap();
    assert!(
        reports.iter().any(|r| r.pc == "BALIE" && r.revoked),
        "kept, marked: {reports:?}"
    );
    // The office key's check value: the first sets it, the same key is the office's, another
    // is refused while another PC that checked the office's has a working key; a PC alone
    // behind it may set it anew (its join failed and it tries again); each office has its own;
    // of two first PCs at once one sets it; once the PCs behind it are revoked, another may.
    let check = |tenant, pc, value| store.check_office_key(tenant, pc, [value; 32]);
    assert_eq!(
        check("reports", "RECEPTIE", 1).await.unwrap(),
        KeyCheck::Set
    );
    assert_eq!(
        check("reports", "RECEPTIE", 3).await.unwrap(),
        KeyCheck::Set,
        "alone behind it"
    );
    assert_eq!(check("reports", "KASSA", 3).await.unwrap(), KeyCheck::Same);
    assert_eq!(check("reports", "KASSA", 2).await.unwrap(), KeyCheck::Other);
    assert_eq!(
        check("reports", "RECEPTIE", 1).await.unwrap(),
        KeyCheck::Other,
        "KASSA stands behind the office's key too"
    );
    let (a, b) = tokio::join!(
        check("elsewhere", "RECEPTIE", 2),
        check("elsewhere", "BALIE", 3)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let mut raced = [a, b].map(|c| format!("{c:?}"));
    raced.sort();
    assert_eq!(
        raced,
        ["Other", "Set"],
        "one first PC's key is the office's"
    );
    let (setter, other, others_key) = match a {
        KeyCheck::Set => ("RECEPTIE", "BALIE", 3),
        _ => ("BALIE", "RECEPTIE", 2),
    };
    assert_eq!(
        check("elsewhere", other, others_key).await.unwrap(),
        KeyCheck::Other
    );
    assert!(store.revoke_pc("elsewhere", setter).await.unwrap());
    assert_eq!(
        check("elsewhere", other, others_key).await.unwrap(),
        KeyCheck::Set,
        "a check no live PC stands behind locks nobody out"
    );
    // A PC that checked the office's key stands behind it until it is revoked, so a key leaked
    // later cannot set another meanwhile.
    assert_eq!(
        check("elsewhere", "KASSA", others_key).await.unwrap(),
        KeyCheck::Same
    );
    assert_eq!(
        check("elsewhere", "LAPTOP", 9).await.unwrap(),
        KeyCheck::Other,
        "KASSA and the setter stand behind it"
    );
    assert!(store.revoke_pc("elsewhere", other).await.unwrap());
    assert_eq!(
        check("elsewhere", "LAPTOP", 9).await.unwrap(),
        KeyCheck::Other,
        "KASSA still stands behind it"
    );
    assert!(store.revoke_pc("elsewhere", "KASSA").await.unwrap());
    assert_eq!(
        check("elsewhere", "LAPTOP", 9).await.unwrap(),
        KeyCheck::Set
    );
    assert!(store.revoke_tenant("reports").await.unwrap());
    assert!(store.reports("reports").await.unwrap().is_empty());
    assert_eq!(store.reports("elsewhere").await.unwrap().len(), 1);
}

/// Invitations: one works once, for its name only while no live PC has it, within its time,
/// while the PC that made it is not revoked; a new one of a name replaces the last; an
/// office's open invitations are bounded; a redeemed one's PC has a key of the office;
/// invitations go with a revoked tenant.
pub async fn invites_contract(store: &dyn Storage) {
    use kluis_relay::storage::office::{InviteMade, MAX_OPEN_INVITES};
    let office = new_key();
    assert!(store
        .add_tenant("invites", Quota::default(), &office.id, office.hash)
        .await
        .unwrap());
    let receptie = new_key();
    assert!(store
        .add_pc("invites", "RECEPTIE", &receptie.id, receptie.hash)
        .await
        .unwrap());
    let token = |n: u8| [n; 32];
    let hour = 3_600_000;
    let made = store
        .add_invite("invites", "BALIE", "RECEPTIE", token(1), hour)
        .await
        .unwrap();
    assert!(
        matches!(made, InviteMade::Made { expires_ms } if expires_ms > now_ms()),
        "{made:?}"
    );
    assert_eq!(
        store
            .add_invite("invites", "RECEPTIE", "RECEPTIE", token(2), hour)
            .await
            .unwrap(),
        InviteMade::Taken,
        "a live PC's name"
    );
    // A second invitation of BALIE replaces the first.
    store
        .add_invite("invites", "BALIE", "RECEPTIE", token(3), hour)
        .await
        .unwrap();
    let key = new_key();
    assert_eq!(
        store
            .redeem_invite(token(1), &key.id, key.hash)
            .await
            .unwrap(),
        None,
        "replaced"
    );
    let redeemed = store
        .redeem_invite(token(3), &key.id, key.hash)
        .await
        .unwrap();
    assert_eq!(redeemed, Some(("invites".to_string(), "BALIE".to_string())));
    let balie = store.key(&key.id).await.unwrap().expect("BALIE has a key");
    assert_eq!(
        (balie.tenant.as_str(), balie.pc.as_deref()),
        ("invites", Some("BALIE"))
    );
    let again = new_key();
    assert_eq!(
        store
            .redeem_invite(token(3), &again.id, again.hash)
            .await
            .unwrap(),
        None,
        "once"
    );
    assert!(store.key(&again.id).await.unwrap().is_none());

    // One that ran out works no more (a time of 0 ms runs out at once).
    store
        .add_invite("invites", "LAPTOP", "RECEPTIE", token(4), 0)
        .await
        .unwrap();
    assert_eq!(
        store
            .redeem_invite(token(4), &again.id, again.hash)
            .await
            .unwrap(),
        None,
        "ran out"
    );
    // A name a PC took meanwhile (by the operator) is not given twice.
    store
        .add_invite("invites", "KANTOOR", "RECEPTIE", token(5), hour)
        .await
        .unwrap();
    let operator = new_key();
    assert!(store
        .add_pc("invites", "KANTOOR", &operator.id, operator.hash)
        .await
        .unwrap());
    assert_eq!(
        store
            .redeem_invite(token(5), &again.id, again.hash)
            .await
            .unwrap(),
        None,
        "taken meanwhile"
    );

    // A revoked PC's invitations work no more (a thief cannot come back through them).
    store
        .add_invite("invites", "GAST", "BALIE", token(7), hour)
        .await
        .unwrap();
    assert!(store.revoke_pc("invites", "BALIE").await.unwrap());
    assert_eq!(
        store
            .redeem_invite(token(7), &again.id, again.hash)
            .await
            .unwrap(),
        None,
        "inviter revoked"
    );
    store
        .add_invite("invites", "GAST", "BALIE", token(8), hour)
        .await
        .unwrap();
    assert_eq!(
        store
            .redeem_invite(token(8), &again.id, again.hash)
            .await
            .unwrap(),
        None,
        "made by a revoked PC"
    );

    for n in 0..MAX_OPEN_INVITES {
        let name = format!("pc-{n}");
        let made = store.add_invite("invites", &name, "RECEPTIE", [n as u8 ^ 0x80; 32], hour);
        assert!(matches!(made.await.unwrap(), InviteMade::Made { .. }));
    }
    assert_eq!(
        store
            .add_invite("invites", "one-more", "RECEPTIE", token(6), hour)
            .await
            .unwrap(),
        InviteMade::Full
    );
    assert!(store.revoke_tenant("invites").await.unwrap());
    assert_eq!(
        store
            .redeem_invite([0x80; 32], &again.id, again.hash)
            .await
            .unwrap(),
        None
    );
}
