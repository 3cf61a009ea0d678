//! Copies to an SFTP server (Debian's OpenSSH on loopback, a throw-away host key and user):
//! made and proven by reading back, with a password or a key; a host key other than the
//! pinned one refused before anything is sent; a copy cut off mid-upload going on from its
//! part; a full disk, a missing folder and a wrong login each said with the target's name and
//! nothing lost; never over another file; a copy found changed or missing; a retention rule
//! deleting on the server.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use kluis_copies::sftp::SftpLogin;
use kluis_copies::{CopyTarget, Place};
use kluis_core::retention::Retention;
use kluis_core::verify::Finding;
use kluis_core::{Code, History, Secret};
use sha2::{Digest, Sha256};

use crate::moto::Relay;
use crate::saved::{bakker, copy, findings, saved};
use crate::sshd::{password, Sshd};

const MIB: usize = 1024 * 1024;

/// `n` bytes that differ along the file.
fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 251) as u8).collect()
}

/// The target "NAS" on `sshd`, reached on `port`, logging in with the password.
fn target(sshd: &Sshd, port: u16) -> CopyTarget {
    let place = sshd.place(port, SftpLogin::Password);
    let mut target = CopyTarget::new("NAS", Place::Sftp(place)).unwrap();
    target.secret = Some(Secret::new(password().to_string()));
    target
}

/// The names in `folder`, sorted.
fn names(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = (std::fs::read_dir(folder).map(|d| d.flatten().collect()))
        .unwrap_or_else(|_| Vec::new())
        .into_iter()
        .map(|e: std::fs::DirEntry| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A saved backup goes to the klant's folder on the server, byte for byte, written as the
/// login's user; it is recorded as `sftp://host:port/path`; verification reads it back whole;
/// asked again, nothing is copied twice. "Test" writes and removes a file there.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_backup_is_copied_to_an_sftp_folder_and_proven() {
    let (sshd, local) = (Sshd::start().await, tempfile::tempdir().unwrap());
    let history = Arc::new(History::in_memory().unwrap());
    saved(
        &history,
        local.path(),
        "backup 2026-11-25.zip",
        b"the owner's data",
    );
    let target = target(&sshd, sshd.port);
    kluis_copies::test(&target)
        .await
        .expect("the folder can be written");

    let copied = copy(&history, &target).await;
    let location = copied[0].outcome.as_ref().expect("copied");
    let remote = sshd.folder.join("Bakker/backup 2026-11-25.zip");
    let expected = format!("sftp://127.0.0.1:{}{}", sshd.port, remote.display());
    assert_eq!(location, &expected);
    assert_eq!(std::fs::read(&remote).unwrap(), b"the owner's data");
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata(&remote).unwrap().uid();
    assert_ne!(uid, 0, "written by the server's user, not by this test");
    assert_eq!(
        names(&sshd.folder.join("Bakker")),
        ["backup 2026-11-25.zip"],
        "no part left, no test file"
    );
    assert_eq!(findings(&history, &target, true).await, [Finding::Intact]);
    let job = &copied[0].entry.id;
    let back = crate::saved::fetched(&history, &target, job).await.unwrap();
    assert_eq!(
        back, b"the owner's data",
        "fetched back, as a restore test of the copy does"
    );
    std::fs::write(&remote, b"the owner's dat!").unwrap(); // changed on the server
    let changed = crate::saved::fetched(&history, &target, job)
        .await
        .unwrap_err();
    assert_eq!(changed.code().as_str(), "backups_damaged", "{changed}");
    std::fs::write(&remote, b"the owner's data").unwrap();
    assert!(
        copy(&history, &target).await.is_empty(),
        "nothing is copied twice"
    );
}

/// A key logs in (its fingerprint as ssh-keygen writes it is what `host_key` reads); a key
/// the server does not know, and a wrong password, are refused as a failed login naming the
/// target — and nothing is written.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_key_logs_in_and_a_wrong_key_or_password_is_refused() {
    let (sshd, local) = (Sshd::start().await, tempfile::tempdir().unwrap());
    let shown = kluis_copies::sftp::host_key("NAS", "127.0.0.1", sshd.port)
        .await
        .unwrap();
    assert_eq!(
        shown.fingerprint, sshd.host_key,
        "the fingerprint ssh-keygen -l shows"
    );
    assert_eq!(shown.algorithm, "ssh-ed25519");

    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "backup.zip", b"data");
    let mut wrong = target(&sshd, sshd.port);
    wrong.secret = Some(Secret::new("not the password".to_string()));
    let refused = copy(&history, &wrong).await;
    let error = refused[0].outcome.as_ref().unwrap_err();
    assert_eq!(error.code(), Code::AuthFailed, "{error}");
    assert!(
        error.to_string().contains("\"NAS\"") && error.to_string().contains("password"),
        "{error}"
    );
    assert!(
        !error.to_string().contains("not the password"),
        "the password is never said: {error}"
    );

    let mut stranger = target(&sshd, sshd.port);
    let key_file = sshd.stranger_key().to_string_lossy().into_owned();
    stranger.place = Place::Sftp(sshd.place(sshd.port, SftpLogin::Key { key_file }));
    stranger.secret = None;
    let refused = copy(&history, &stranger).await;
    let error = refused[0].outcome.as_ref().unwrap_err();
    assert_eq!(error.code(), Code::AuthFailed, "{error}");
    assert!(error.to_string().contains("authorized_keys"), "{error}");
    assert!(
        names(&sshd.folder).is_empty(),
        "nothing written: {:?}",
        names(&sshd.folder)
    );

    let mut keyed = stranger;
    keyed.place = Place::Sftp(sshd.place(sshd.port, sshd.key_login()));
    let copied = copy(&history, &keyed).await;
    assert!(copied[0].outcome.is_ok(), "{:?}", copied[0].outcome);
    assert_eq!(
        std::fs::read(sshd.folder.join("Bakker/backup.zip")).unwrap(),
        b"data"
    );
}

/// Fault: the server shows another host key than the pinned one (another machine answering
/// at its address). Refused before logging in — no password goes to it — with both keys named
/// and the target's name; nothing is written.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_changed_host_key_is_refused_before_anything_is_sent() {
    let (sshd, local) = (Sshd::start().await, tempfile::tempdir().unwrap());
    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "backup.zip", b"data");
    let mut target = target(&sshd, sshd.port);
    let pinned = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    if let Place::Sftp(place) = &mut target.place {
        place.host_key = pinned.into();
    }
    let refused = copy(&history, &target).await;
    let error = refused[0].outcome.as_ref().unwrap_err();
    assert_eq!(error.code(), Code::Certificate, "{error}");
    let said = error.to_string();
    assert!(
        said.contains(&sshd.host_key) && said.contains(pinned),
        "both keys named: {said}"
    );
    assert!(
        said.contains("\"NAS\"") && said.contains("nothing was sent"),
        "{said}"
    );
    assert!(names(&sshd.folder).is_empty(), "nothing written");
    let record = &history.copies_of(&refused[0].entry.id).unwrap()[0];
    assert!(!record.made, "recorded as not made: {record:?}");
}

/// Fault: the line dies mid-upload (a relay cuts it after 5 MiB of an 8 MiB backup). The copy
/// fails naming the target; nothing is under the copy's name, the part is kept. The next try
/// sends only what the server did not hold (at least 2 MiB less than the file) and the copy
/// is whole; no part is left.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_copy_cut_off_mid_upload_goes_on_from_its_part() {
    let (sshd, local) = (Sshd::start().await, tempfile::tempdir().unwrap());
    let history = Arc::new(History::in_memory().unwrap());
    let content = data(8 * MIB);
    saved(&history, local.path(), "large.zip", &content);

    let dying = Relay::start(sshd.port, Some(5 * MIB as u64)).await;
    let first = copy(&history, &target(&sshd, dying.port)).await;
    assert!(dying.died(), "the relay died mid-upload");
    let error = first[0].outcome.as_ref().unwrap_err().to_string();
    assert!(error.contains("\"NAS\""), "{error}");
    let klant = sshd.folder.join("Bakker");
    let left = names(&klant);
    assert!(
        left.len() == 1 && left[0].ends_with(".part"),
        "only the part is there: {left:?}"
    );
    let held = std::fs::metadata(klant.join(&left[0])).unwrap().len();
    assert!(
        held > 3 * MIB as u64,
        "the part holds what was sent: {held}"
    );

    let counting = Relay::start(sshd.port, None).await;
    let target = target(&sshd, counting.port);
    let second = copy(&history, &target).await;
    assert!(second[0].outcome.is_ok(), "{:?}", second[0].outcome);
    let sent = counting.sent.load(Ordering::SeqCst);
    assert!(
        sent < (6 * MIB) as u64,
        "what the part held was not sent again: {sent} bytes sent"
    );
    let stored = std::fs::read(klant.join("large.zip")).unwrap();
    assert!(
        Sha256::digest(&stored) == Sha256::digest(&content),
        "the copy is the backup"
    );
    assert_eq!(names(&klant), ["large.zip"], "no part left");
    assert_eq!(findings(&history, &target, true).await, [Finding::Intact]);
}

/// Fault: the server's disk is too small (a 1 MiB tmpfs for a 3 MiB backup). Said as a full
/// disk, naming the target and the room needed, before anything is sent; nothing is under
/// the copy's name, and the copy is pending.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_full_disk_is_said_and_nothing_is_replaced() {
    let (sshd, local) = (
        Sshd::start_with(Some(MIB as u64)).await,
        tempfile::tempdir().unwrap(),
    );
    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "backup.zip", &data(3 * MIB));
    let target = target(&sshd, sshd.port);
    let refused = copy(&history, &target).await;
    let error = refused[0].outcome.as_ref().unwrap_err().to_string();
    assert!(
        error.contains("\"NAS\"") && error.contains("is full") && error.contains("3.0 MiB more"),
        "{error}"
    );
    assert!(
        !sshd.folder.join("Bakker/backup.zip").exists(),
        "nothing under the copy's name"
    );
    assert_eq!(
        history.copies_missing(None, &target.id).unwrap().len(),
        1,
        "still pending"
    );
}

/// Fault: the folder is not on the server (a mistyped path, a volume not mounted there): said
/// with the target's name, and no folder is made in its place.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_missing_folder_is_said() {
    let (sshd, local) = (Sshd::start().await, tempfile::tempdir().unwrap());
    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "backup.zip", b"data");
    let mut target = target(&sshd, sshd.port);
    let missing = sshd.folder.join("volume9");
    if let Place::Sftp(place) = &mut target.place {
        place.path = missing.to_string_lossy().into_owned();
    }
    let refused = copy(&history, &target).await;
    let error = refused[0].outcome.as_ref().unwrap_err();
    assert_eq!(error.code(), Code::Config, "{error}");
    assert!(
        error.to_string().contains("is not on the SFTP server"),
        "{error}"
    );
    assert!(!missing.exists(), "no folder made in its place");
    let tested = kluis_copies::test(&target).await.unwrap_err();
    assert!(tested.to_string().contains("\"NAS\""), "{tested}");
}

/// A file already at the copy's name (someone else's) is never replaced: the copy goes next
/// to it as `name (1).zip`. A copy found shorter is Changed, one removed is Missing — each
/// pending again.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_copy_never_replaces_a_file_and_a_changed_one_is_found() {
    let (sshd, local) = (Sshd::start().await, tempfile::tempdir().unwrap());
    let history = Arc::new(History::in_memory().unwrap());
    saved(&history, local.path(), "backup.zip", b"the owner's data");
    let klant = sshd.folder.join("Bakker");
    std::fs::create_dir(&klant).unwrap();
    std::fs::write(klant.join("backup.zip"), b"someone else's").unwrap();
    sshd.give(&klant);
    let target = target(&sshd, sshd.port);
    let copied = copy(&history, &target).await;
    assert!(copied[0]
        .outcome
        .as_ref()
        .unwrap()
        .ends_with("/Bakker/backup (1).zip"));
    assert_eq!(
        std::fs::read(klant.join("backup.zip")).unwrap(),
        b"someone else's"
    );
    assert_eq!(
        std::fs::read(klant.join("backup (1).zip")).unwrap(),
        b"the owner's data"
    );

    std::fs::write(klant.join("backup (1).zip"), b"the owner").unwrap();
    assert_eq!(findings(&history, &target, false).await, [Finding::Changed]);
    std::fs::remove_file(klant.join("backup (1).zip")).unwrap();
    // (A copy found changed is no longer counted: verification looks at made ones.)
    assert_eq!(
        history.copies_missing(None, &target.id).unwrap().len(),
        1,
        "pending again"
    );
}

/// The target's own rule (keep the last 1) deletes one of two copies on the server — after
/// finding it as made — and keeps the other; the local backups are untouched.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_rule_deletes_older_copies_on_the_server() {
    let (sshd, local) = (Sshd::start().await, tempfile::tempdir().unwrap());
    let history = Arc::new(History::in_memory().unwrap());
    let older = saved(&history, local.path(), "older.zip", b"older data");
    let newer = saved(&history, local.path(), "newer.zip", b"newer data");
    let mut target = target(&sshd, sshd.port);
    target.keep = Some(Retention {
        keep_last: Some(1),
        ..Retention::default()
    });
    let copied = copy(&history, &target).await;
    assert!(copied.iter().all(|c| c.outcome.is_ok()), "{copied:?}");
    let pruned = kluis_copies::prune_target(history.clone(), &target, &bakker())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pruned.removed.len(), 1, "{pruned:?}");
    let removed = Path::new(pruned.removed[0].path.as_deref().unwrap());
    let left = names(&sshd.folder.join("Bakker"));
    assert_eq!(left.len(), 1, "one copy kept: {left:?}");
    assert_ne!(
        Some(left[0].as_str()),
        removed.file_name().and_then(|n| n.to_str()),
        "the removed one is gone"
    );
    assert!(
        older.exists() && newer.exists(),
        "the local backups are untouched"
    );
}

/// A key file that cannot be used is said before any server is asked: one with a passphrase
/// not given, or a wrong one; an RSA key (not supported: Ed25519 and ECDSA are); no file.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs ssh-keygen: tests/sftp/run.sh"]
async fn a_key_file_that_cannot_be_used_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let keygen = |name: &str, kind: &str, passphrase: &str| {
        let path = dir.path().join(name);
        let status = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", kind, "-N", passphrase, "-f"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        path.to_string_lossy().into_owned()
    };
    let said = |key_file: String, passphrase: Option<&str>| {
        let place = kluis_copies::sftp::SftpPlace {
            host: "127.0.0.1".into(),
            port: 9, // nothing is asked
            user: "kluis".into(),
            path: "/srv".into(),
            login: SftpLogin::Key { key_file },
            host_key: "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".into(),
        };
        let secret = passphrase.map(|p| Secret::new(p.to_string()));
        async move {
            let error = kluis_copies::sftp::Server::connect("NAS", &place, secret.as_ref())
                .await
                .err()
                .expect("refused");
            assert_eq!(error.code(), Code::Config, "{error}");
            error.to_string()
        }
    };
    let locked = keygen("locked", "ed25519", "the passphrase");
    let error = said(locked.clone(), None).await;
    assert!(error.contains("protected by a passphrase"), "{error}");
    let error = said(locked, Some("another")).await;
    assert!(error.contains("is the passphrase right"), "{error}");
    assert!(
        !error.contains("another"),
        "the passphrase is never said: {error}"
    );
    let error = said(keygen("rsa", "rsa", ""), None).await;
    assert!(error.contains("RSA"), "{error}");
    let error = said(dir.path().join("none").to_string_lossy().into_owned(), None).await;
    assert!(error.contains("cannot be read"), "{error}");
}

/// Recovery's small objects beside the copies, on an SFTP server (see `objects.rs`); a copy's
/// place named relative to the folder.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn small_objects_are_written_new_read_listed_and_removed() {
    let sshd = Sshd::start().await;
    let copy = sshd.folder.join("Bakker/b.zip");
    let location = format!("sftp://127.0.0.1:{}{}", sshd.port, copy.display());
    crate::objects::round_trip(
        target(&sshd, sshd.port),
        Some((location, "Bakker/b.zip".into())),
    )
    .await;
}
