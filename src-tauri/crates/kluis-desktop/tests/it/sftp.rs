//! An SFTP server as copy target in the app, against Debian's OpenSSH on loopback (run by
//! `tests/sftp/run.sh`, as root): "Connect" reads the server's key, "Trust and add" pins it,
//! refuses a wrong password before anything is saved, keeps the right one in the keyring only,
//! copies each saved backup there; a key login takes its file from the native dialog.

use std::sync::Arc;

use kluis_copies::sftp::SftpLogin;
use kluis_desktop::secrets::{MemoryStore, SecretKind, SecretStore};
use kluis_desktop::{DesktopApp, SftpInput, SftpServer};

use crate::common;
use crate::sshd::{password, Sshd};

/// The key shown is ssh-keygen's fingerprint of the server's; a wrong password is refused and
/// nothing is saved; the right one goes to the keyring and nowhere in the settings; a backup
/// is then on the server before the window hears "saved"; Remove deletes the password.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn an_sftp_server_from_the_form_gets_each_saved_backup() {
    let (sshd, dir, folder) = (
        Sshd::start().await,
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let keyring = Arc::new(MemoryStore::default());
    let app = DesktopApp::builder(crate::common::english_under(dir.path()), keyring.clone())
        .save_folder(Some(folder.path().to_path_buf()))
        .open()
        .unwrap();
    let server = SftpServer {
        host: "127.0.0.1".into(),
        port: sshd.port,
    };
    let shown = app.settings.sftp_host_key(server).await.unwrap();
    assert_eq!(shown.fingerprint, sshd.host_key);
    let input = |secret: &str| SftpInput {
        name: "NAS".into(),
        place: sshd.place(sshd.port, SftpLogin::Password),
        secret: secret.into(),
    };
    let wrong = app
        .settings
        .add_copy_sftp(input("wrong"))
        .await
        .unwrap_err();
    assert_eq!(wrong.code().as_str(), "auth_failed", "{wrong}");
    assert!(
        app.settings.current().copy_targets.is_empty(),
        "nothing saved"
    );

    let settings = app.settings.add_copy_sftp(input(password())).await.unwrap();
    let target = settings.copy_targets[0].clone();
    let kept = keyring
        .get(&target.id, SecretKind::CopyTargetSecret)
        .unwrap();
    assert_eq!(
        kept.map(|s| s.expose().to_string()).as_deref(),
        Some(password())
    );
    let json = serde_json::to_string(&app.settings.current()).unwrap();
    assert!(
        !json.contains(password()),
        "the settings hold no password: {json}"
    );
    assert!(json.contains(&sshd.host_key), "the key is pinned: {json}");
    app.settings.test_copy_target(&target.id).await.unwrap();

    let (saved, _) = common::demo_backup_saved(&app).await;
    let klant = saved.parent().unwrap().file_name().unwrap();
    let remote = sshd.folder.join(klant).join(saved.file_name().unwrap());
    let copied = std::fs::read(&remote).expect("copied before the window heard \"saved\"");
    assert!(
        copied == std::fs::read(&saved).unwrap(),
        "the copy is the backup"
    );

    app.settings.remove_copy_target(&target.id).await.unwrap();
    let gone = keyring
        .get(&target.id, SecretKind::CopyTargetSecret)
        .unwrap();
    assert!(gone.is_none(), "the password went with the target");
}

/// A key login: the file comes from the native dialog (not the page's `key_file`), no secret
/// is kept for a key without a passphrase, and the target can be written.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs sshd as root: tests/sftp/run.sh"]
async fn a_key_login_takes_its_file_from_the_dialog() {
    let (sshd, dir) = (Sshd::start().await, tempfile::tempdir().unwrap());
    let keyring = Arc::new(MemoryStore::default());
    let app = DesktopApp::builder(crate::common::english_under(dir.path()), keyring.clone())
        .open()
        .unwrap();
    app.set_dialogs(common::Chooses::new(&sshd.client_key));
    let login = SftpLogin::Key {
        key_file: "/etc/the-page-names-no-file".into(),
    };
    let input = SftpInput {
        name: "NAS".into(),
        place: sshd.place(sshd.port, login),
        secret: String::new(),
    };
    let settings = app.settings.add_copy_sftp(input).await.unwrap();
    let target = &settings.copy_targets[0];
    let kluis_copies::Place::Sftp(place) = &target.place else {
        panic!("an SFTP server: {target:?}")
    };
    let picked = sshd.client_key.to_string_lossy().into_owned();
    assert_eq!(
        place.login,
        SftpLogin::Key { key_file: picked },
        "the dialog's file"
    );
    let kept = keyring
        .get(&target.id, SecretKind::CopyTargetSecret)
        .unwrap();
    assert!(kept.is_none(), "no secret for a key without a passphrase");
    app.settings.test_copy_target(&target.id).await.unwrap();
}
