//! What every storage engine must do alike: tenants and keys, inboxes owned by a tenant (and
//! invisible to another), callbacks numbered in order, quotas, acknowledgement, deletion,
//! revocation and expiry with the running totals kept, and one callback key. Run on SQLite and on PostgreSQL.

use kluis_relay::storage::{now_ms, Recorded, Refusal, Storage};
use kluis_relay::{Limits, Quota};

fn seq(recorded: Recorded) -> i64 {
    match recorded {
        Recorded::Stored { seq, .. } => seq,
        other => panic!("not stored: {other:?}"),
    }
}

pub async fn storage_contract(store: &dyn Storage) {
    // The callback key is made once: the first one offered stays.
    let first = store.callback_key([1; 32]).await.unwrap();
    assert_eq!(first, [1; 32]);
    assert_eq!(store.callback_key([2; 32]).await.unwrap(), first, "kept");

    let quota = Quota {
        max_inboxes: Some(2),
        max_events: Some(3),
        max_bytes: Some(1000),
        requests_per_sec: Some(5.0),
    };
    let (a, b) = (
        kluis_relay::tenants::new_key(),
        kluis_relay::tenants::new_key(),
    );
    assert!(store.add_tenant("a", quota, &a.id, a.hash).await.unwrap());
    assert!(store.add_tenant("b", quota, &b.id, b.hash).await.unwrap());
    assert!(
        !store.add_tenant("a", quota, &b.id, b.hash).await.unwrap(),
        "a name is taken once"
    );
    let key = store
        .key(&a.id)
        .await
        .unwrap()
        .expect("the key is found by its id");
    assert_eq!(
        (key.tenant.as_str(), key.hash, key.quota),
        ("a", a.hash, quota)
    );

    assert_eq!(
        store.create_inbox("a", &quota, "i1", "t1").await.unwrap(),
        Ok(())
    );
    assert_eq!(
        store.create_inbox("a", &quota, "i2", "t2").await.unwrap(),
        Ok(())
    );
    assert_eq!(
        store.create_inbox("a", &quota, "i3", "t3").await.unwrap(),
        Err(Refusal::TenantInboxes)
    );
    assert_eq!(
        store.create_inbox("b", &quota, "j1", "u1").await.unwrap(),
        Ok(())
    );
    let none = Limits::NONE;
    assert_eq!(
        store.record("i1", "t2", "GET", "id=0", none).await.unwrap(),
        Recorded::NoInbox,
        "another inbox's token"
    );
    assert_eq!(
        store
            .record("i1", "nope", "GET", "id=0", none)
            .await
            .unwrap(),
        Recorded::NoInbox
    );
    let first = seq(store.record("i1", "t1", "GET", "id=1", none).await.unwrap());
    let second = seq(store.record("i1", "t1", "GET", "id=2", none).await.unwrap());
    assert!(second > first, "numbered in order within an inbox");
    seq(store.record("i2", "t2", "GET", "id=3", none).await.unwrap());
    assert_eq!(
        store.record("i2", "t2", "GET", "id=4", none).await.unwrap(),
        Recorded::Refused {
            tenant: "a".into(),
            why: Refusal::TenantEvents
        }
    );
    let per_inbox = Limits {
        max_events_per_inbox: 1,
        max_db_bytes: u64::MAX,
    };
    let stored = store
        .record("j1", "u1", "GET", "id=5", per_inbox)
        .await
        .unwrap();
    assert!(
        matches!(&stored, Recorded::Stored { tenant, .. } if tenant == "b"),
        "{stored:?}"
    );
    assert_eq!(
        store
            .record("j1", "u1", "GET", "id=6", per_inbox)
            .await
            .unwrap(),
        Recorded::Refused {
            tenant: "b".into(),
            why: Refusal::Inbox
        }
    );

    assert_eq!(
        store.events_after("b", "i1", 0, 10).await.unwrap(),
        None,
        "b cannot see a's inbox"
    );
    let events = store.events_after("a", "i1", 0, 10).await.unwrap().unwrap();
    let queries: Vec<&str> = events.iter().map(|e| e.query.as_str()).collect();
    assert_eq!(queries, ["id=1", "id=2"]);
    assert_eq!(
        store
            .events_after("a", "i1", first, 10)
            .await
            .unwrap()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .events_after("a", "i1", 0, 1)
            .await
            .unwrap()
            .unwrap()
            .len(),
        1,
        "limit"
    );

    assert_eq!(
        store.ack("b", "i1", i64::MAX).await.unwrap(),
        None,
        "b cannot acknowledge it"
    );
    assert_eq!(store.ack("a", "i1", first).await.unwrap(), Some(1));
    let totals = |name: &'static str| async move {
        let all = store.tenants().await.unwrap();
        let t = all.iter().find(|t| t.name == name).unwrap();
        (t.inboxes, t.events, t.bytes)
    };
    assert_eq!(
        totals("a").await,
        (2, 2, 14),
        "two callbacks of 7 bytes left"
    );
    let again = store.record("i2", "t2", "GET", "id=7", none).await.unwrap();
    assert!(
        matches!(again, Recorded::Stored { .. }),
        "room again after the ack: {again:?}"
    );

    assert!(
        !store.delete_inbox("b", "i1").await.unwrap(),
        "b cannot delete it"
    );
    assert!(store.delete_inbox("a", "i1").await.unwrap());
    assert_eq!(totals("a").await, (1, 2, 14));
    assert_eq!(
        store.record("i1", "t1", "GET", "id=8", none).await.unwrap(),
        Recorded::NoInbox,
        "a deleted inbox takes no callback"
    );

    // Every key id is listed, and each key change moves the keys version at once.
    let ids = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    let mut expected = vec![a.id.clone(), b.id.clone()];
    expected.sort();
    assert_eq!(ids(store.key_ids().await.unwrap()), expected);
    let version = store.keys_version();
    assert_eq!(store.keys_version(), version, "unmoved without a change");
    let c = kluis_relay::tenants::new_key();
    assert!(store
        .rotate_key("a", &c.id, c.hash, now_ms() + 60_000)
        .await
        .unwrap());
    assert_ne!(store.keys_version(), version, "moved by the rotation");
    assert!(store.key_ids().await.unwrap().contains(&c.id));
    let old = store.key(&a.id).await.unwrap().unwrap();
    assert!(
        old.expires_ms.is_some(),
        "the old key ends after the overlap"
    );
    let version = store.keys_version();
    assert!(store.revoke_tenant("a").await.unwrap());
    assert!(
        store.key(&c.id).await.unwrap().is_none(),
        "a revoked tenant's keys are gone"
    );
    assert_ne!(store.keys_version(), version, "moved by the revocation");
    assert_eq!(
        ids(store.key_ids().await.unwrap()),
        std::slice::from_ref(&b.id)
    );
    assert_eq!(
        store.record("i2", "t2", "GET", "id=9", none).await.unwrap(),
        Recorded::NoInbox,
        "and its inboxes"
    );
    assert_eq!(
        store.create_inbox("a", &quota, "i4", "t4").await.unwrap(),
        Err(Refusal::Revoked)
    );
    assert!(!store.revoke_tenant("a").await.unwrap(), "once");

    let now = now_ms();
    assert_eq!(
        store.expire(now + 1_000, now - 60_000).await.unwrap(),
        (1, 0),
        "b's old callback"
    );
    assert_eq!(totals("b").await, (1, 0, 0));
    assert_eq!(
        store.expire(now, now + 1_000).await.unwrap(),
        (0, 1),
        "b's idle inbox"
    );
    store.ping().await.unwrap();
}
