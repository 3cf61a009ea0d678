//! A bucket as copy target from the command line, against moto's S3 server over TLS (run by
//! `tests/s3/run.sh`): the secret key given on standard input is kept in `KLUIS_SECRETS_DIR`
//! only, each backup is copied to the bucket, and removing the target removes the key.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use crate::common::*;
use crate::moto::{Moto, Relay, SECRET};

/// `kluis copy-target add Cloud --s3-…` (bucket "office", prefix "pc1") reaching moto on
/// `port`, the secret key written to its standard input.
async fn add_bucket(e: &Env, moto: &Moto, port: u16, secrets: &str) -> Output {
    let endpoint = format!("https://127.0.0.1:{port}");
    let ca = moto.ca_file.to_str().unwrap();
    let mut add = e.command(&[
        "copy-target",
        "add",
        "Cloud",
        "--s3-endpoint",
        &endpoint,
        "--s3-bucket",
        "office",
        "--s3-path-style",
        "--s3-access-key-id",
        "AKIAKLUISTEST",
        "--s3-prefix",
        "pc1",
        "--s3-ca-cert",
        ca,
        "--stdin",
    ]);
    add.env("KLUIS_SECRETS_DIR", secrets)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let mut child = add.spawn().unwrap();
        writeln!(child.stdin.take().unwrap(), "{SECRET}").unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// `kluis copy-target add Cloud --s3-…` with the secret key on standard input, then a backup:
/// the copy is in the bucket, byte for byte; the key is in the secrets folder and nowhere
/// else (not the profiles file, not any output); `remove` deletes it.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn a_backup_is_copied_to_a_bucket_and_its_key_stays_secret() {
    let (moto, e) = (Moto::start().await, env(|c| c.payload_size = 50_000).await);
    moto.make_bucket("office", false).await;
    let secrets = e.dir.path().join("secrets");
    let secrets_var = ("KLUIS_SECRETS_DIR", secrets.to_str().unwrap());
    let added = add_bucket(&e, &moto, moto.port, secrets_var.1).await;
    assert_succeeded(&added);
    assert_no_secrets(&added, &[SECRET]);

    let out = e.out();
    let backup = e
        .demo_with(
            &[
                "backup",
                "--out",
                out.to_str().unwrap(),
                "--profile",
                "bakker",
                "--json",
            ],
            &[secrets_var],
        )
        .await;
    assert_succeeded(&backup);
    let said = String::from_utf8_lossy(&backup.stderr);
    assert!(said.contains("copied to \"Cloud\""), "{said}");
    let line: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&backup.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_no_secrets_except(&backup, &[SECRET], &[line["job"].as_str().unwrap()]);
    let local = PathBuf::from(line["path"].as_str().unwrap());
    let key = crate::moto::key("pc1", &local);
    let stored = moto.object("office", &key).await.expect("copied");
    assert!(
        stored == std::fs::read(&local).unwrap(),
        "the copy is the backup"
    );

    let profiles = std::fs::read_to_string(e.dir.path().join("profiles.json")).unwrap();
    assert!(
        !profiles.contains(SECRET),
        "the profiles file holds no secret key"
    );
    let kept: Vec<_> = std::fs::read_dir(&secrets).unwrap().flatten().collect();
    assert_eq!(kept.len(), 1, "the key is in the secrets folder: {kept:?}");
    assert_eq!(
        std::fs::read_to_string(kept[0].path()).unwrap().trim(),
        SECRET
    );

    let removed = e
        .demo_with(&["copy-target", "remove", "Cloud"], &[secrets_var])
        .await;
    assert_succeeded(&removed);
    assert_eq!(
        std::fs::read_dir(&secrets).unwrap().count(),
        0,
        "the key went with the target"
    );
}

/// kill -9 of `kluis copy --pending` mid-upload of a 40 MiB backup in 8 MiB parts (one part's
/// connection hung after 36 MiB went to the server; the others go on, so the process is surely
/// mid-copy): nothing is under the copy's name. Run again, it goes on from the parts the
/// server holds (the upload journalled in the history): at least 8 MiB less than the file is
/// sent, and the copy is whole.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn a_copy_killed_mid_upload_goes_on_from_the_parts_held() {
    const MIB: u64 = 1024 * 1024;
    let (moto, e) = (
        Moto::start().await,
        env(|c| c.payload_size = 40 * MIB).await,
    );
    moto.make_bucket("office", false).await;
    let secrets = e.dir.path().join("secrets");
    let secrets = secrets.to_str().unwrap();
    let out = e.out();
    let args = [
        "backup",
        "--out",
        out.to_str().unwrap(),
        "--profile",
        "bakker",
        "--json",
    ];
    let backup = e.demo_with(&args, &[("KLUIS_SECRETS_DIR", secrets)]).await;
    assert_succeeded(&backup);
    let stdout = String::from_utf8_lossy(&backup.stdout);
    let line: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    let local = PathBuf::from(line["path"].as_str().unwrap());

    let relay = Relay::stalling(moto.port, 36 * MIB).await;
    assert_succeeded(&add_bucket(&e, &moto, relay.port, secrets).await);
    let mut copying = e.command(&["copy", "--pending"]);
    copying
        .env("KLUIS_SECRETS_DIR", secrets)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = copying.spawn().unwrap();
    relay.spent.notified().await;
    let status = stop(child, "KILL").await;
    assert!(!status.success(), "killed mid-upload");
    let key = crate::moto::key("pc1", &local);
    assert!(
        moto.object("office", &key).await.is_none(),
        "nothing under the copy's name"
    );

    let before = relay.sent.load(std::sync::atomic::Ordering::SeqCst);
    let again = e
        .demo_with(&["copy", "--pending"], &[("KLUIS_SECRETS_DIR", secrets)])
        .await;
    assert_succeeded(&again);
    let sent = relay.sent.load(std::sync::atomic::Ordering::SeqCst) - before;
    assert!(
        sent < 33 * MIB,
        "held parts were not sent again: {sent} bytes sent"
    );
    let stored = moto.object("office", &key).await.expect("copied");
    assert!(
        stored == std::fs::read(&local).unwrap(),
        "the copy is the backup"
    );
}
