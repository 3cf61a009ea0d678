//! An SFTP server as copy target from the command line, against Debian's OpenSSH on loopback
//! (run by `tests/sftp/run.sh`, as root): the host key shown and pinned at `add`, the password
//! on standard input kept in `KLUIS_SECRETS_DIR` only; a key other than the one given refused;
//! and `kluis copy --pending` killed with -9 mid-upload, then run again, going on from its part.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use crate::common::*;
use crate::moto::Relay;
use crate::sshd::{password, Sshd, USER};

/// `kluis copy-target add NAS --sftp-… [EXTRA] --stdin` reaching the server on `port`, the
/// password written to its standard input.
async fn add(e: &Env, sshd: &Sshd, port: u16, extra: &[&str], secrets: &str) -> Output {
    let port = port.to_string();
    let folder = sshd.folder.to_str().unwrap();
    let mut args = vec!["copy-target", "add", "NAS", "--sftp-host", "127.0.0.1"];
    args.extend([
        "--sftp-port",
        &port,
        "--sftp-user",
        USER,
        "--sftp-path",
        folder,
    ]);
    args.extend(extra);
    args.push("--stdin");
    let mut add = e.command(&args);
    add.env("KLUIS_SECRETS_DIR", secrets)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let mut child = add.spawn().unwrap();
        writeln!(child.stdin.take().unwrap(), "{}", password()).unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// `kluis backup --profile bakker --json`, succeeded: its output, job id and saved file.
async fn backup(e: &Env, secrets: &str) -> (Output, String, PathBuf) {
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
    let job = line["job"].as_str().unwrap().to_string();
    (backup, job, PathBuf::from(line["path"].as_str().unwrap()))
}

/// `add` shows the server's host key (ssh-keygen's fingerprint) and pins it; a backup is then
/// copied to the server, byte for byte; the password is in the secrets folder and nowhere else
/// (not the profiles file, not any output); `remove` deletes it.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_backup_is_copied_to_an_sftp_server_and_its_password_stays_secret() {
    let (sshd, e) = (Sshd::start().await, env(|c| c.payload_size = 50_000).await);
    let secrets = e.dir.path().join("secrets");
    let secrets = secrets.to_str().unwrap();
    let added = add(&e, &sshd, sshd.port, &[], secrets).await;
    assert_succeeded(&added);
    assert_no_secrets(&added, &[password()]);
    let said = String::from_utf8_lossy(&added.stderr);
    assert!(
        said.contains(&sshd.host_key) && said.contains("pinned"),
        "{said}"
    );
    let profiles = std::fs::read_to_string(e.dir.path().join("profiles.json")).unwrap();
    assert!(
        profiles.contains(&sshd.host_key),
        "the key is pinned in the settings"
    );
    assert!(
        !profiles.contains(password()),
        "the profiles file holds no password"
    );

    let (backup, job, local) = backup(&e, secrets).await;
    let said = String::from_utf8_lossy(&backup.stderr);
    assert!(said.contains("copied to \"NAS\""), "{said}");
    assert_no_secrets_except(&backup, &[password()], &[&job]);
    let klant = local.parent().unwrap().file_name().unwrap();
    let remote = sshd.folder.join(klant).join(local.file_name().unwrap());
    assert!(
        std::fs::read(&remote).unwrap() == std::fs::read(&local).unwrap(),
        "the copy is the backup"
    );

    let kept: Vec<_> = std::fs::read_dir(secrets).unwrap().flatten().collect();
    assert_eq!(
        kept.len(),
        1,
        "the password is in the secrets folder: {kept:?}"
    );
    let removed = e
        .demo_with(
            &["copy-target", "remove", "NAS"],
            &[("KLUIS_SECRETS_DIR", secrets)],
        )
        .await;
    assert_succeeded(&removed);
    assert_eq!(
        std::fs::read_dir(secrets).unwrap().count(),
        0,
        "the password went with the target"
    );
}

/// `--sftp-host-key` other than the key the server shows: refused (exit code of an untrusted
/// server), nothing saved, the password never sent (no target, no secret kept).
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_host_key_other_than_the_one_given_is_refused_at_add() {
    let (sshd, e) = (Sshd::start().await, env(|_| {}).await);
    let secrets = e.dir.path().join("secrets");
    let secrets = secrets.to_str().unwrap();
    let wrong = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let refused = add(&e, &sshd, sshd.port, &["--sftp-host-key", wrong], secrets).await;
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains(&sshd.host_key) && said.contains(wrong),
        "{said}"
    );
    let listed = e.demo(&["copy-target", "list"]).await;
    assert!(
        String::from_utf8_lossy(&listed.stdout).trim().is_empty(),
        "nothing saved"
    );
    assert!(
        std::fs::read_dir(secrets).map_or(true, |d| d.count() == 0),
        "no secret kept"
    );

    let given = add(
        &e,
        &sshd,
        sshd.port,
        &["--sftp-host-key", &sshd.host_key],
        secrets,
    )
    .await;
    assert_succeeded(&given);
}

/// kill -9 of `kluis copy --pending` mid-upload (the line hung after 5 MiB of an 8 MiB backup,
/// so the process is surely mid-copy): nothing is under the copy's name, only its part. Run
/// again, it goes on from the part (sending at least 2 MiB less than the file) and the copy
/// is whole.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_copy_killed_mid_upload_goes_on_from_its_part() {
    const MIB: u64 = 1024 * 1024;
    let (sshd, e) = (Sshd::start().await, env(|c| c.payload_size = 8 * MIB).await);
    let secrets = e.dir.path().join("secrets");
    let secrets = secrets.to_str().unwrap();
    let (_, _, local) = backup(&e, secrets).await;

    let relay = Relay::stalling(sshd.port, 5 * MIB).await;
    assert_succeeded(&add(&e, &sshd, relay.port, &[], secrets).await);
    let mut copying = e.command(&["copy", "--pending"]);
    copying
        .env("KLUIS_SECRETS_DIR", secrets)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = copying.spawn().unwrap();
    relay.spent.notified().await;
    let status = stop(child, "KILL").await;
    assert!(!status.success(), "killed mid-upload");
    let klant = sshd
        .folder
        .join(local.parent().unwrap().file_name().unwrap());
    let left: Vec<String> = (std::fs::read_dir(&klant).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.len() == 1 && left[0].ends_with(".part"),
        "only the part: {left:?}"
    );

    let before = relay.sent.load(std::sync::atomic::Ordering::SeqCst);
    let again = e
        .demo_with(&["copy", "--pending"], &[("KLUIS_SECRETS_DIR", secrets)])
        .await;
    assert_succeeded(&again);
    let sent = relay.sent.load(std::sync::atomic::Ordering::SeqCst) - before;
    assert!(
        sent < 6 * MIB,
        "the part was not sent again: {sent} bytes sent"
    );
    let remote = klant.join(local.file_name().unwrap());
    assert!(
        std::fs::read(&remote).unwrap() == std::fs::read(&local).unwrap(),
        "the copy is the backup"
    );
}
