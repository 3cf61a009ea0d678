//! The kept callback transports (`engine::Transports`): one build per key at a time, no key
//! waiting for another's, and a failed build answering its key for a while instead of being
//! tried again by every klant of a batch.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kluis_core::engine::{Transports, FAILED_BUILD_KEPT};
use kluis_core::{CallbackTransport, Error, ListenerTransport};
use tokio::sync::oneshot;

async fn loopback() -> Result<Arc<dyn CallbackTransport>, Error> {
    Ok(Arc::new(ListenerTransport::loopback().await?))
}

/// A build that fails (a cloudflared that never became ready) is the answer for its key for
/// `FAILED_BUILD_KEPT`, given without building again; after it, the next caller tries anew.
/// (Each klant of a batch tried again before: 45 s each, four at a time, for 200 klanten.)
#[tokio::test(start_paused = true)]
async fn a_failed_build_answers_its_key_for_a_while() {
    let kept = Transports::default();
    let builds = AtomicU32::new(0);
    let failing = || async {
        builds.fetch_add(1, Ordering::SeqCst);
        Err::<Arc<dyn CallbackTransport>, _>(Error::Network(
            "cloudflared did not become ready".into(),
        ))
    };
    let first = kept
        .get_or_build("tunnel", true, failing())
        .await
        .err()
        .expect("failed");
    tokio::time::advance(FAILED_BUILD_KEPT - Duration::from_secs(1)).await;
    let meanwhile = kept
        .get_or_build("tunnel", true, failing())
        .await
        .err()
        .expect("failed");
    assert_eq!(meanwhile.to_string(), first.to_string(), "the same failure");
    assert_eq!(
        builds.load(Ordering::SeqCst),
        1,
        "not built again meanwhile"
    );
    let other = kept.get_or_build("relay for a", false, loopback()).await;
    assert!(other.is_ok(), "another key is built as usual");
    // A route whose failure is not kept (fast to fail, or on inputs its key does not name: the
    // demo's webhook.site a moment before it started) is tried again by the next caller.
    let down = async { Err::<Arc<dyn CallbackTransport>, _>(Error::Network("down".into())) };
    assert!(kept
        .get_or_build("webhook-site a", false, down)
        .await
        .is_err());
    assert!(kept
        .get_or_build("webhook-site a", false, loopback())
        .await
        .is_ok());
    tokio::time::advance(Duration::from_secs(2)).await;
    let later = kept.get_or_build("tunnel", true, loopback()).await;
    assert!(later.is_ok(), "tried anew once the failure is old");
    kept.get_or_build("tunnel", true, failing())
        .await
        .expect("the built one is kept");
    assert_eq!(builds.load(Ordering::SeqCst), 1);
    kept.clear();
    assert!(
        kept.get_or_build("tunnel", true, failing()).await.is_err(),
        "built anew after clear (the choice changed)"
    );
    assert_eq!(builds.load(Ordering::SeqCst), 2);
    kept.forget_failure("tunnel");
    assert!(kept.get_or_build("tunnel", true, failing()).await.is_err());
    assert_eq!(
        builds.load(Ordering::SeqCst),
        3,
        "someone at the screen gets a new try, not the kept failure"
    );
}

/// While one key's transport is being built (a tunnel waiting for cloudflared), another key's
/// is built at once, and a second caller of the same key — surely waiting when the build ends —
/// shares its result. (One lock over every key held up every klant's relay client before.)
#[tokio::test]
async fn one_build_per_key_and_no_key_waits_for_another() {
    let kept = Arc::new(Transports::default());
    let builds = Arc::new(AtomicU32::new(0));
    let (release, released) = oneshot::channel::<()>();
    let first = tokio::spawn({
        let (kept, builds) = (kept.clone(), builds.clone());
        let slow = async move {
            builds.fetch_add(1, Ordering::SeqCst);
            released.await.ok();
            loopback().await
        };
        async move { kept.get_or_build("tunnel", true, slow).await }
    });
    while builds.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await; // until the slow build holds its key
    }
    let (asking, asked) = oneshot::channel::<()>();
    let second = tokio::spawn({
        let (kept, builds) = (kept.clone(), builds.clone());
        async move {
            let again = async move {
                builds.fetch_add(1, Ordering::SeqCst);
                loopback().await
            };
            asking.send(()).unwrap();
            // (On this one-thread runtime it runs on from here to its wait for the key.)
            kept.get_or_build("tunnel", true, again).await
        }
    });
    asked.await.unwrap();
    // (Bounded, so that the old behaviour fails instead of waiting forever.)
    let other = kept.get_or_build("relay for b", false, loopback());
    let other = tokio::time::timeout(Duration::from_secs(60), other).await;
    let other = other.expect("not held up by the tunnel's build");
    assert!(other.is_ok(), "built while the tunnel's build waits");
    assert!(!first.is_finished() && !second.is_finished());
    release.send(()).unwrap();
    let (first, second) = (
        first.await.unwrap().unwrap(),
        second.await.unwrap().unwrap(),
    );
    assert!(
        Arc::ptr_eq(&first, &second),
        "the waiting caller shares the one built"
    );
    assert_eq!(builds.load(Ordering::SeqCst), 1, "built once");
}

/// The choice changed (`clear`) while a key's transport is being built: a caller after it
/// waits for that build to end and then builds anew — never two builds of one key at once
/// (two listeners on one address: the second fails), and the old build's result is not kept.
#[tokio::test]
async fn a_clear_during_a_build_makes_no_second_build_beside_it() {
    let kept = Arc::new(Transports::default());
    let (building, most) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let build = |release: Option<oneshot::Receiver<()>>| {
        let (building, most) = (building.clone(), most.clone());
        async move {
            let now = building.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            if let Some(release) = release {
                release.await.ok();
            }
            building.fetch_sub(1, Ordering::SeqCst);
            loopback().await
        }
    };
    let (release, released) = oneshot::channel::<()>();
    let old = tokio::spawn({
        let (kept, slow) = (kept.clone(), build(Some(released)));
        async move { kept.get_or_build("direct", false, slow).await }
    });
    while building.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    kept.clear();
    let (asking, asked) = oneshot::channel::<()>();
    let new = tokio::spawn({
        let (kept, fresh) = (kept.clone(), build(None));
        async move {
            asking.send(()).unwrap();
            kept.get_or_build("direct", false, fresh).await
        }
    });
    asked.await.unwrap();
    release.send(()).unwrap();
    let (old, new) = (old.await.unwrap().unwrap(), new.await.unwrap().unwrap());
    assert!(!Arc::ptr_eq(&old, &new), "built anew for the new choice");
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "one build of the key at a time"
    );
    let weak = Arc::downgrade(&old);
    drop(old);
    assert!(
        weak.upgrade().is_none(),
        "the old choice's transport not kept"
    );
}

/// The choice saved again (`clear`) lets go of what is kept at once: a direct listener's
/// address is its key, and one kept there failed every next klant with "Could not listen on
/// …"; a kept tunnel's cloudflared ran on (its end is the transport's drop). Once nothing else
/// holds it, it is gone — and a failed build's error with it.
#[tokio::test]
async fn a_clear_lets_go_of_what_is_kept() {
    let kept = Transports::default();
    let first = kept
        .get_or_build("direct", false, loopback())
        .await
        .unwrap();
    let weak = Arc::downgrade(&first);
    drop(first);
    assert!(weak.upgrade().is_some(), "kept for the next klant");
    kept.clear();
    assert!(weak.upgrade().is_none(), "let go of at clear");
}

/// A direct listener let go of by `clear` leaves its address to the next one at once: the next
/// backup's listener binds the same address (it failed with "Could not listen on …: Address
/// already in use" while the old one was kept, and right after one was dropped).
#[tokio::test]
async fn the_next_listener_binds_the_address_a_clear_let_go_of() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = free.local_addr().unwrap();
    drop(free);
    let direct = || async move {
        let listener = ListenerTransport::direct("https://office.example/kluis", address).await?;
        Ok::<_, Error>(Arc::new(listener) as Arc<dyn CallbackTransport>)
    };
    let kept = Transports::default();
    kept.get_or_build("direct", false, direct())
        .await
        .expect("bound");
    kept.clear();
    let again = kept.get_or_build("direct", false, direct()).await;
    assert!(
        again.is_ok(),
        "the same address bound again: {:?}",
        again.err()
    );
}

/// A build that ends after the choice changed (`clear` could not reach its key, being built) is
/// its callers' only, not kept: nobody may ask for that key again (a tunnel no longer chosen),
/// and kept it would run on — its cloudflared with it — until the app ends.
#[tokio::test]
async fn a_build_that_ends_after_a_clear_is_not_kept() {
    let kept = Arc::new(Transports::default());
    let (release, released) = oneshot::channel::<()>();
    let (started, began) = oneshot::channel::<()>();
    let build = async move {
        started.send(()).unwrap();
        released.await.ok();
        loopback().await
    };
    let old = tokio::spawn({
        let kept = kept.clone();
        async move { kept.get_or_build("tunnel", true, build).await }
    });
    began.await.unwrap();
    kept.clear();
    release.send(()).unwrap();
    let old = old.await.unwrap().unwrap();
    let weak = Arc::downgrade(&old);
    drop(old);
    assert!(weak.upgrade().is_none(), "not kept for the old choice");
}
