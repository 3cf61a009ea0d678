//! Copies to an S3 server (moto over TLS on loopback): made and proven, in parts resumed after
//! the server died mid-upload, never over another object, refused for a backup that changed,
//! locked with Object Lock and never deleted before the lock ends, locks renewed; and each
//! fault said with the target's name.

use std::sync::Arc;

use kluis_copies::s3::{LockMode, ObjectLock};
use kluis_copies::{CopyTarget, Place};
use kluis_core::retention::Retention;
use kluis_core::verify::Finding;
use kluis_core::{History, Secret};
use uuid::Uuid;

use crate::moto::{Moto, Relay};
use crate::saved::{bakker, copy, findings, saved};

const MIB: usize = 1024 * 1024;

/// `n` bytes that differ from part to part.
fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 251) as u8).collect()
}

fn target(moto: &Moto, bucket: &str, port: u16) -> CopyTarget {
    let mut target = CopyTarget::new("Bucket", Place::S3(moto.place(bucket, port))).unwrap();
    target.secret = Some(Secret::new(moto.secret.clone()));
    target
}

/// A saved backup is put in the klant's folder under the target's prefix, byte for byte, and
/// recorded with its place; verification finds it whole (read back too); asked again, nothing
/// is sent twice.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn a_backup_is_copied_to_a_bucket_and_proven() {
    let (moto, local) = (Moto::start().await, tempfile::tempdir().unwrap());
    moto.make_bucket("kluis", false).await;
    let history = Arc::new(History::in_memory().unwrap());
    let path = saved(
        &history,
        local.path(),
        "backup 2026-11-25.zip",
        b"the owner's data",
    );
    let target = target(&moto, "kluis", moto.port);

    let copied = copy(&history, &target).await;
    let location = copied[0].outcome.as_ref().expect("copied");
    assert_eq!(
        location,
        "s3://kluis/reception-pc/Bakker/backup 2026-11-25.zip"
    );
    let key = crate::moto::key("reception-pc", &path);
    assert_eq!(key, "reception-pc/Bakker/backup 2026-11-25.zip");
    let stored = moto.object("kluis", &key).await;
    assert_eq!(stored.as_deref(), Some(&b"the owner's data"[..]));
    let record = &history.copies_of(&copied[0].entry.id).unwrap()[0];
    assert!(record.made && record.bytes == Some(16), "{record:?}");
    assert_eq!(findings(&history, &target, true).await, [Finding::Intact]);
    let job = &copied[0].entry.id;
    let back = crate::saved::fetched(&history, &target, job).await.unwrap();
    assert_eq!(
        back, b"the owner's data",
        "fetched back, as a restore test of the copy does"
    );
    assert!(
        copy(&history, &target).await.is_empty(),
        "nothing is copied twice"
    );
}

/// Fault: the server dies mid-upload of a backup in parts (40 MiB, five parts; a relay cuts
/// the connections after 36 MiB and refuses every later one: with at most four parts on their
/// way, at least one was whole by then). The copy fails, naming the target, and nothing is
/// under the copy's name. The next try (the server back) sends only the parts the server did
/// not hold: at least 8 MiB less than the file; the copy is whole.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn an_upload_in_parts_goes_on_after_the_server_died() {
    let (moto, local) = (Moto::start().await, tempfile::tempdir().unwrap());
    moto.make_bucket("kluis", false).await;
    let history = Arc::new(History::in_memory().unwrap());
    let content = data(40 * MIB);
    saved(&history, local.path(), "large.zip", &content);

    let dying = Relay::start(moto.port, Some(36 * MIB as u64)).await;
    let mut target = target(&moto, "kluis", dying.port);
    let first = copy(&history, &target).await;
    assert!(dying.died(), "the relay died mid-upload");
    let error = first[0].outcome.as_ref().unwrap_err().to_string();
    assert!(error.contains("\"Bucket\""), "{error}");
    assert!(
        moto.object("kluis", "reception-pc/Bakker/large.zip")
            .await
            .is_none(),
        "nothing under the copy's name"
    );

    let counting = Relay::start(moto.port, None).await;
    target.place = Place::S3(moto.place("kluis", counting.port));
    let second = copy(&history, &target).await;
    assert!(second[0].outcome.is_ok(), "{:?}", second[0].outcome);
    let sent = counting.sent.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        sent < (40 * MIB - 8 * MIB + MIB) as u64,
        "a held part was not sent again: {sent} bytes went to the server"
    );
    let stored = moto
        .object("kluis", "reception-pc/Bakker/large.zip")
        .await
        .unwrap();
    assert!(stored == content, "the copy is the backup, byte for byte");
    assert_eq!(findings(&history, &target, true).await, [Finding::Intact]);
}

/// Fault: the local file changed after it was saved (the same length, one byte different in
/// its last part). The upload in parts is not completed: nothing is under the copy's name.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn a_changed_backup_is_not_completed() {
    let (moto, local) = (Moto::start().await, tempfile::tempdir().unwrap());
    moto.make_bucket("kluis", false).await;
    let history = Arc::new(History::in_memory().unwrap());
    let mut content = data(9 * MIB);
    let path = saved(&history, local.path(), "backup.zip", &content);
    *content.last_mut().unwrap() ^= 1;
    std::fs::write(&path, &content).unwrap();

    let copied = copy(&history, &target(&moto, "kluis", moto.port)).await;
    let error = copied[0].outcome.as_ref().unwrap_err().to_string();
    assert!(error.contains("did not match"), "{error}");
    assert!(moto
        .object("kluis", "reception-pc/Bakker/backup.zip")
        .await
        .is_none());
    let job = Uuid::parse_str(&copied[0].entry.id).unwrap();
    assert!(
        history
            .copy_upload(job, &copied[0].target.id)
            .unwrap()
            .is_none(),
        "the upload was given up"
    );
}

/// An object of the copy's name already in the bucket, with other content, is never
/// replaced: the copy takes the next free name.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn another_object_of_that_name_is_never_replaced() {
    let (moto, local) = (Moto::start().await, tempfile::tempdir().unwrap());
    moto.make_bucket("kluis", false).await;
    let client = moto.bucket("kluis").client;
    let theirs = "reception-pc/Bakker/backup.zip";
    client
        .put_object()
        .bucket("kluis")
        .key(theirs)
        .body(b"someone else's".to_vec().into())
        .send()
        .await
        .unwrap();
    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "backup.zip", b"new data");

    let copied = copy(&history, &target(&moto, "kluis", moto.port)).await;
    assert_eq!(
        copied[0].outcome.as_deref().unwrap(),
        "s3://kluis/reception-pc/Bakker/backup (1).zip"
    );
    assert_eq!(
        moto.object("kluis", theirs).await.unwrap(),
        b"someone else's"
    );
}

/// Object Lock: each copy is locked for the target's days; a rule that keeps the newest copy
/// only leaves the older one while it is locked (it waits), and the server itself refuses to
/// delete it. A kept copy whose lock has less than half its time left is locked again.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn a_locked_copy_waits_and_a_kept_one_is_locked_again() {
    let (moto, local) = (Moto::start().await, tempfile::tempdir().unwrap());
    moto.make_bucket("locked", true).await;
    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "older.zip", b"older");
    saved(&history, local.path(), "newer.zip", b"newer");
    let mut target = target(&moto, "locked", moto.port);
    if let Place::S3(place) = &mut target.place {
        place.lock = Some(ObjectLock {
            mode: LockMode::Governance,
            days: 30,
        });
    }
    target.keep = Some(Retention {
        keep_last: Some(1),
        ..Retention::default()
    });
    let copied = copy(&history, &target).await;
    assert!(copied.iter().all(|c| c.outcome.is_ok()), "{copied:?}");
    let now = kluis_core::clock::now_ms();
    let records: Vec<_> = copied
        .iter()
        .map(|c| history.copies_of(&c.entry.id).unwrap().remove(0))
        .collect();
    for record in &records {
        let until = record.locked_until_ms.expect("locked");
        assert!(
            (until - now - 30 * 86_400_000).abs() < 3_600_000,
            "locked for 30 days: {record:?}"
        );
        assert!(
            record.version.is_some(),
            "the bucket keeps versions: {record:?}"
        );
    }

    let pruned = kluis_copies::prune_target(history.clone(), &target, &bakker())
        .await
        .unwrap()
        .unwrap();
    assert!(
        pruned.removed.is_empty(),
        "nothing locked is deleted: {pruned:?}"
    );
    assert_eq!(
        pruned.locked.len(),
        1,
        "the older copy waits for its lock: {pruned:?}"
    );
    let older = &pruned.locked[0].0;
    let bucket = moto.bucket("locked");
    let record = history.copies_of(&older.id).unwrap().remove(0);
    let refused = bucket
        .delete(
            record.location.as_deref().unwrap(),
            record.version.as_deref(),
        )
        .await;
    assert!(
        refused.is_err(),
        "the server refuses to delete a locked copy"
    );
    assert!(findings(&history, &target, true)
        .await
        .iter()
        .all(|f| *f == Finding::Intact));

    // The newest copy's lock nearly over: locked again for 30 days from now.
    let newest = &copied
        .iter()
        .find(|c| c.entry.id != older.id)
        .unwrap()
        .entry;
    history
        .copy_lock_renewed(&newest.id, &target.id, now + 3_600_000)
        .unwrap();
    let pruned = kluis_copies::prune_target(history.clone(), &target, &bakker())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pruned.renewed, 1, "{pruned:?}");
    let renewed = history
        .copies_of(&newest.id)
        .unwrap()
        .remove(0)
        .locked_until_ms
        .unwrap();
    assert!(
        renewed > now + 29 * 86_400_000,
        "recorded: locked for 30 days again"
    );
    let key = "reception-pc/Bakker/newer.zip";
    let head = bucket
        .client
        .head_object()
        .bucket("locked")
        .key(key)
        .send()
        .await
        .unwrap();
    let on_server = head
        .object_lock_retain_until_date()
        .unwrap()
        .to_millis()
        .unwrap();
    assert!(
        on_server > now + 29 * 86_400_000,
        "the server holds the new date"
    );
}

/// Faults said with the target's name and what to do: a bucket that does not exist, a target
/// whose secret key is not saved. "Test" on a good bucket leaves nothing behind.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn faults_are_said_and_a_test_leaves_nothing() {
    let (moto, local) = (Moto::start().await, tempfile::tempdir().unwrap());
    moto.make_bucket("kluis", false).await;
    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "backup.zip", b"data");

    let missing = copy(&history, &target(&moto, "no-such-bucket", moto.port)).await;
    let error = missing[0].outcome.as_ref().unwrap_err().to_string();
    assert!(
        error.contains("\"Bucket\"") && error.contains("bucket does not exist"),
        "{error}"
    );

    let mut no_secret = target(&moto, "kluis", moto.port);
    no_secret.secret = None;
    let error = copy(&history, &no_secret).await[0]
        .outcome
        .as_ref()
        .unwrap_err()
        .to_string();
    assert!(error.contains("secret key is not saved"), "{error}");

    kluis_copies::test(&target(&moto, "kluis", moto.port))
        .await
        .unwrap();
    let listed = moto
        .bucket("kluis")
        .client
        .list_objects_v2()
        .bucket("kluis")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.key_count(), Some(0), "the test object is gone");
}

/// Fault: a wrong secret key, against a server that checks signatures. The copy is refused
/// with a message that names the target and says to check the keys (and shows neither); with
/// the right key it is made.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn a_wrong_secret_key_is_said_with_the_target() {
    let (moto, local) = (Moto::start_with_key().await, tempfile::tempdir().unwrap());
    moto.make_bucket("kluis", false).await;
    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "backup.zip", b"data");
    let mut target = target(&moto, "kluis", moto.port);
    target.secret = Some(Secret::new("not-the-secret-key"));

    let refused = copy(&history, &target).await;
    let error = refused[0].outcome.as_ref().unwrap_err();
    assert_eq!(error.code().as_str(), "auth_failed", "{error}");
    let said = error.to_string();
    assert!(
        said.contains("\"Bucket\"") && said.contains("access key or secret key"),
        "{said}"
    );
    assert!(
        !said.contains("not-the-secret-key") && !said.contains(&moto.secret),
        "{said}"
    );

    target.secret = Some(Secret::new(moto.secret.clone()));
    let copied = copy(&history, &target).await;
    assert!(copied[0].outcome.is_ok(), "{:?}", copied[0].outcome);
}

/// Fault: the server's clock is an hour off this computer's (a PC whose clock was never set;
/// either way). S3 refuses a request signed more than 15 minutes off its own time
/// (`RequestTimeTooSkewed`); the SDK then signs by the server's clock (its `Date` header) and
/// tries again, as AWS's SDKs do. So the copy is made, whole, and "Test" passes — after the
/// server refused the first request (its log says so).
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs s3rver and faketime: tests/s3/run.sh"]
async fn a_clock_an_hour_off_is_set_right() {
    for offset in ["+1h", "-1h"] {
        let (skewed, local) = (
            crate::s3rver::S3rver::start_off_by(offset).await,
            tempfile::tempdir().unwrap(),
        );
        let history = Arc::new(History::in_memory().unwrap());
        saved(&history, local.path(), "backup.zip", b"the owner's data");
        let target = skewed.target();
        let copied = copy(&history, &target).await;
        assert!(
            copied[0].outcome.is_ok(),
            "{offset}: {:?}",
            copied[0].outcome
        );
        assert!(
            skewed.refused() >= 1,
            "{offset}: the server refused the skewed request first"
        );
        let job = &copied[0].entry.id;
        let back = crate::saved::fetched(&history, &target, job).await.unwrap();
        assert_eq!(back, b"the owner's data", "{offset}");
        kluis_copies::test(&target).await.unwrap();
    }
}

/// Recovery's small objects beside the copies, in a bucket (see `objects.rs`): a new one is
/// refused by the server when one is there (a conditional write); a copy's key named relative
/// to the prefix.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn small_objects_are_written_new_read_listed_and_removed() {
    let moto = Moto::start().await;
    moto.make_bucket("kluis", false).await;
    crate::objects::round_trip(
        target(&moto, "kluis", moto.port),
        Some((
            "s3://kluis/reception-pc/Bakker/b.zip".into(),
            "Bakker/b.zip".into(),
        )),
    )
    .await;
}

/// On a bucket with Object Lock, recovery's own objects (a catalog here) are locked briefly —
/// governance, for [`kluis_copies::objects::DOCUMENT_LOCK_DAYS`] days rather than the copies'
/// 30 — so that whoever holds the bucket's keys cannot delete the newest catalogs at once.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn recovery_objects_on_a_locked_bucket_are_locked_briefly() {
    let moto = Moto::start().await;
    moto.make_bucket("locked", true).await;
    let mut target = target(&moto, "locked", moto.port);
    if let Place::S3(place) = &mut target.place {
        place.lock = Some(ObjectLock {
            mode: LockMode::Compliance,
            days: 30,
        });
    }
    let at = "kluis-recovery/catalogs/aa01/000000000001.age";
    tokio::task::spawn_blocking(move || {
        kluis_copies::Opened::open(&target, None)
            .unwrap()
            .put(at, b"catalog", false)
            .unwrap()
    })
    .await
    .unwrap();
    let head = (moto.bucket("locked").client.head_object())
        .bucket("locked")
        .key(format!("reception-pc/{at}"))
        .send()
        .await
        .unwrap();
    let now = kluis_core::clock::now_ms();
    let until = head
        .object_lock_retain_until_date()
        .unwrap()
        .to_millis()
        .unwrap();
    let days = i64::from(kluis_copies::objects::DOCUMENT_LOCK_DAYS);
    assert!(
        (until - now - days * 86_400_000).abs() < 3_600_000,
        "locked for {days} days"
    );
    assert_eq!(
        head.object_lock_mode(),
        Some(&aws_sdk_s3::types::ObjectLockMode::Governance),
        "in governance mode: an administrator can still remove it"
    );
}
