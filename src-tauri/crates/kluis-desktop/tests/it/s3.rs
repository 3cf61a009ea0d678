//! A bucket as copy target in the app, against moto's S3 server over TLS (run by
//! `tests/s3/run.sh`): "Add a bucket" tests it with the key typed, keeps the key in the
//! keyring only, copies each saved backup there, and Remove deletes the key.

use std::sync::Arc;

use kluis_desktop::secrets::{MemoryStore, SecretKind, SecretStore};
use kluis_desktop::{BucketInput, DesktopApp};

use crate::common;
use crate::moto::{Moto, SECRET};

/// The CA's certificate comes from the native dialog (the page names no file); a wrong key is
/// refused before anything is saved; the right one goes to the keyring and nowhere in the
/// settings; a backup is then in the bucket before the window hears "saved"; Remove deletes
/// the key.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs moto_server: tests/s3/run.sh"]
async fn a_bucket_from_the_form_gets_each_saved_backup() {
    let (moto, dir, folder) = (
        Moto::start().await,
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    moto.make_bucket("office", false).await;
    let keyring = Arc::new(MemoryStore::default());
    let app = DesktopApp::builder(crate::common::english_under(dir.path()), keyring.clone())
        .save_folder(Some(folder.path().to_path_buf()))
        .open()
        .unwrap();
    app.set_dialogs(common::Chooses::new(&moto.ca_file));
    let input = |secret_key: &str| BucketInput {
        name: "Cloud".into(),
        place: kluis_copies::s3::S3Place {
            ca_cert: Some("/etc/the-page-names-no-file.pem".into()),
            ..moto.place("office", moto.port)
        },
        secret_key: secret_key.into(),
        own_ca: true,
    };
    let no_key = app.settings.add_copy_bucket(input("")).await.unwrap_err();
    assert_eq!(no_key.code().as_str(), "config", "{no_key}");

    let settings = app.settings.add_copy_bucket(input(SECRET)).await.unwrap();
    let target = settings.copy_targets[0].clone();
    let kluis_copies::Place::S3(place) = &target.place else {
        panic!("a bucket: {target:?}")
    };
    assert_eq!(
        place.ca_cert.as_deref(),
        moto.ca_file.to_str(),
        "the dialog's file, not the page's"
    );
    let kept = keyring
        .get(&target.id, SecretKind::CopyTargetSecret)
        .unwrap();
    assert_eq!(
        kept.map(|s| s.expose().to_string()).as_deref(),
        Some(SECRET)
    );
    let json = serde_json::to_string(&app.settings.current()).unwrap();
    assert!(!json.contains(SECRET), "the settings hold no key: {json}");
    app.settings.test_copy_target(&target.id).await.unwrap();

    let (saved, _) = common::demo_backup_saved(&app).await;
    let key = crate::moto::key("reception-pc", &saved);
    let stored =
        (moto.object("office", &key).await).expect("copied before the window heard \"saved\"");
    assert!(
        stored == std::fs::read(&saved).unwrap(),
        "the copy is the backup"
    );

    app.settings.remove_copy_target(&target.id).await.unwrap();
    assert!(
        keyring
            .get(&target.id, SecretKind::CopyTargetSecret)
            .unwrap()
            .is_none(),
        "the key went with the target"
    );
}
