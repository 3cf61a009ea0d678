//! A bucket as copy target from the command line, against moto's S3 server over TLS (run by
//! `tests/s3/run.sh`): the secret key given on standard input is kept in `KLUIS_SECRETS_DIR`
//! only, each backup is copied to the bucket, and removing the target removes the key.

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;

use crate::common::*;
use crate::moto::{Moto, SECRET};

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
    let endpoint = format!("https://127.0.0.1:{}", moto.port);
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
    add.env(secrets_var.0, secrets_var.1)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let added = tokio::task::spawn_blocking(move || {
        let mut child = add.spawn().unwrap();
        writeln!(child.stdin.take().unwrap(), "{SECRET}").unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
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
