//! The desktop app's commands against its in-process demo simulator over real TLS.

use std::sync::Arc;

use kluis_desktop::permissions::{Access, PermissionSource};
use kluis_desktop::{
    AppJobEvent, AppPaths, CallbackChoice, CallbackInput, DesktopApp, MemoryStore, ProfileInput,
};
use tokio::sync::mpsc;

use crate::common;
use crate::common::{app, Chooses};

/// The app with its demo started, saving straight to `folder` (no save dialog).
async fn demo_saving_to(dir: &tempfile::TempDir, folder: &tempfile::TempDir) -> DesktopApp {
    let app = app(dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    app
}

/// Runs a backup and returns its events up to the first final one (staged, saved, failed).
async fn backup(app: &DesktopApp, profile: &str) -> (uuid::Uuid, Vec<AppJobEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let job = app
        .backups
        .start_backup(
            profile,
            Arc::new(move |e| {
                let _ = tx.send(e);
            }),
        )
        .await
        .unwrap();
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        let last = matches!(
            event,
            AppJobEvent::Staged { .. } | AppJobEvent::Saved { .. } | AppJobEvent::Failed { .. }
        );
        events.push(event);
        if last {
            break;
        }
    }
    (job, events)
}

/// Demo: sign in, environment, backup staged, saved where the "dialog" said, history updated.
#[tokio::test(flavor = "multi_thread")]
async fn demo_backup_is_staged_then_saved_where_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    let demo = app.accounts.start_demo().await.unwrap();
    assert_eq!(demo.profiles.len(), kluis_demo::DEMO_ACCOUNTS.len());
    assert!(demo.profiles.iter().all(|p| p.demo));
    let info = app.accounts.sign_in("demo").await.unwrap();
    assert_eq!(info.username, "demo");
    assert_eq!(
        app.accounts.environment("demo").await.unwrap()["username"],
        "demo"
    );

    let (job, events) = backup(&app, "demo").await;
    let Some(AppJobEvent::Staged {
        file_name,
        bytes,
        sha256,
    }) = events.last().cloned()
    else {
        panic!("expected a staged file, got {events:?}")
    };
    assert_eq!(file_name, "owner-backup.zip");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AppJobEvent::Progress { .. })),
        "progress is streamed"
    );
    let target = dir.path().join("chosen.zip");
    let user = Chooses::new(&target);
    app.set_dialogs(user.clone());
    let saved = app
        .backups
        .save_backup(job)
        .await
        .unwrap()
        .expect("a place was chosen");
    assert_eq!(
        *user.asked.lock().unwrap(),
        ["owner-backup.zip"],
        "the dialog proposed the name"
    );
    assert_eq!(
        (saved.path.clone(), saved.bytes, saved.sha256.clone()),
        (target.clone(), bytes, sha256)
    );
    assert_eq!(std::fs::metadata(&target).unwrap().len(), bytes);
    let row = &app.backups.history(Some("demo")).unwrap()[0];
    assert_eq!(row.path.as_deref(), Some(target.to_str().unwrap()));
    assert_eq!(row.stage, "saved");
    assert!(
        std::fs::read_dir(dir.path().join("staging"))
            .unwrap()
            .next()
            .is_none(),
        "staging is emptied"
    );
}

/// With a save folder set, the file goes straight there.
#[tokio::test(flavor = "multi_thread")]
async fn save_folder_skips_the_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = demo_saving_to(&dir, &folder).await;
    let (_, events) = backup(&app, "demo").await;
    let Some(AppJobEvent::Saved { path, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(std::path::Path::new(path).parent(), Some(folder.path()));
}

/// Cancelling a staged backup removes the file and records the cancellation.
#[tokio::test(flavor = "multi_thread")]
async fn cancel_staged_backup_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    app.accounts.start_demo().await.unwrap();
    let (job, _) = backup(&app, "demo").await;
    app.backups.cancel_backup(job).await.unwrap();
    assert!(std::fs::read_dir(dir.path().join("staging"))
        .unwrap()
        .next()
        .is_none());
    let row = &app.backups.history(None).unwrap()[0];
    assert_eq!(
        (
            row.stage.as_str(),
            row.error_code.map(kluis_core::Code::as_str)
        ),
        ("failed", Some("cancelled"))
    );
    app.set_dialogs(Chooses::new(dir.path().join("x.zip")));
    assert_eq!(
        app.backups.save_backup(job).await.unwrap_err().code(),
        "invalid_state"
    );
}

/// Cancelling while the job runs ends it: no file, history and events say cancelled.
#[tokio::test(flavor = "multi_thread")]
async fn cancel_running_backup() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    app.accounts.start_demo().await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let job = app
        .backups
        .start_backup(
            "demo",
            Arc::new(move |e| {
                let _ = tx.send(e);
            }),
        )
        .await
        .unwrap();
    // Wait for the download to begin, then cancel.
    while let Some(event) = rx.recv().await {
        if matches!(event, AppJobEvent::Progress { .. }) {
            break;
        }
    }
    app.backups.cancel_backup(job).await.unwrap();
    // The job ends itself as cancelled, says so, and its sink is dropped: the channel closes.
    let mut last = None;
    while let Some(event) = rx.recv().await {
        last = Some(event);
    }
    assert!(
        matches!(&last, Some(AppJobEvent::Failed { code, .. }) if code == "cancelled"),
        "{last:?}"
    );
    let row = &app.backups.history(None).unwrap()[0];
    assert_eq!(
        row.error_code.map(kluis_core::Code::as_str),
        Some("cancelled")
    );
    assert!(!dir
        .path()
        .join("staging")
        .join(job.simple().to_string())
        .exists());
}

/// The restricted demo key: permission denied, and the permissions view says so beforehand.
#[tokio::test(flavor = "multi_thread")]
async fn denied_key_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    app.accounts.start_demo().await.unwrap();
    let permissions = app.accounts.permissions("demo-restricted").await.unwrap();
    assert_eq!(permissions.source, PermissionSource::Openapi);
    assert_eq!(
        (permissions.environment, permissions.backup_owner),
        (Access::Allowed, Access::Denied)
    );
    let (_, events) = backup(&app, "demo-restricted").await;
    let Some(AppJobEvent::Failed { code, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(code, "permission_denied");
}

/// A wrong password fails sign-in with auth_failed, and the password is not echoed.
#[tokio::test(flavor = "multi_thread")]
async fn wrong_password_fails_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    let demo = app.accounts.start_demo().await.unwrap();
    app.accounts.sign_in("demo").await.unwrap();
    let edited = app
        .accounts
        .save_profile(ProfileInput {
            id: Some("demo".into()),
            name: "Demo".into(),
            base_url: demo.base_url.clone(),
            username: "demo".into(),
            api_key: None, // kept
            password: Some("Not-The-Password".into()),
            openapi_url: None,
            tags: None,
        })
        .await
        .unwrap();
    assert!(edited.demo, "editing keeps a demo profile a demo");
    let err = app.accounts.sign_in("demo").await.unwrap_err();
    assert_eq!(err.code(), "auth_failed");
    assert!(!err.to_string().contains("Not-The-Password"));
}

/// A saved profile's file holds no secret; forgetting removes profile and secrets.
#[tokio::test(flavor = "multi_thread")]
async fn profiles_file_holds_no_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryStore::default());
    let app = DesktopApp::open(AppPaths::under(dir.path()), keyring.clone(), None).unwrap();
    let key = "123e4567-e89b-42d3-a456-426614174000";
    let profile = app
        .accounts
        .save_profile(ProfileInput {
            id: None,
            name: "Klant A".into(),
            base_url: "https://service.example/webservice_v2".into(),
            username: "klant-a".into(),
            api_key: Some(key.into()),
            password: Some("S3cret-pass".into()),
            openapi_url: Some("https://evil.example/openapi.json".into()),
            tags: None,
        })
        .await
        .unwrap_err();
    assert_eq!(
        profile.code(),
        "config",
        "an OpenAPI URL on another host would receive the api key"
    );
    let profile = app
        .accounts
        .save_profile(ProfileInput {
            id: None,
            name: "Klant A".into(),
            base_url: "https://service.example/webservice_v2".into(),
            username: "klant-a".into(),
            api_key: Some(key.into()),
            password: Some("S3cret-pass".into()),
            openapi_url: None,
            tags: None,
        })
        .await
        .unwrap();
    let file = std::fs::read_to_string(dir.path().join("profiles.json")).unwrap();
    assert!(file.contains("klant-a"));
    assert!(
        !file.contains("S3cret-pass") && !file.contains(key),
        "{file}"
    );
    use kluis_desktop::secrets::{SecretKind, SecretStore};
    assert_eq!(
        keyring
            .get(&profile.id, SecretKind::Password)
            .unwrap()
            .unwrap()
            .expose(),
        "S3cret-pass"
    );
    app.accounts.forget_profile(&profile.id).await.unwrap();
    assert!(keyring
        .get(&profile.id, SecretKind::Password)
        .unwrap()
        .is_none());
    assert!(keyring
        .get(&profile.id, SecretKind::ApiKey)
        .unwrap()
        .is_none());
    assert!(app.accounts.list().is_empty());
}

/// Settings → webhook.site (the demo's stand-in): "Test connection" reports the round trip,
/// and a backup then travels through it.
#[tokio::test(flavor = "multi_thread")]
async fn webhook_site_setting_is_tested_and_used() {
    let dir = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let app = app(&dir, Some(folder.path().to_path_buf()));
    app.accounts.start_demo().await.unwrap();
    let settings = app
        .settings
        .set_callback(CallbackInput {
            setting: CallbackChoice::WebhookSite,
            relay_secret: None,
        })
        .await
        .unwrap();
    assert_eq!(settings.callback, CallbackChoice::WebhookSite);
    let tested = app.settings.test_callback("demo").await.unwrap();
    assert_eq!(tested.transport, "webhook-site");
    let (_, events) = backup(&app, "demo").await;
    assert!(
        matches!(events.last(), Some(AppJobEvent::Saved { .. })),
        "{events:?}"
    );
    assert_eq!(
        app.backups.history(None).unwrap()[0].transport,
        "webhook-site"
    );
}

/// A relay needs its secret, which goes to the keyring and never to the settings file; a
/// direct address must be a socket address.
#[tokio::test(flavor = "multi_thread")]
async fn relay_secret_goes_to_the_keyring() {
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryStore::default());
    let app = DesktopApp::open(AppPaths::under(dir.path()), keyring.clone(), None).unwrap();
    let relay = CallbackChoice::Relay {
        url: "https://relay.example".into(),
    };
    let missing = app
        .settings
        .set_callback(CallbackInput {
            setting: relay.clone(),
            relay_secret: None,
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), "config");
    let settings = app
        .settings
        .set_callback(CallbackInput {
            setting: relay.clone(),
            relay_secret: Some("relay-secret-0123456789abcdef".into()),
        })
        .await
        .unwrap();
    assert!(settings.relay_secret_saved);
    use kluis_desktop::secrets::{SecretKind, SecretStore, APP};
    assert_eq!(
        keyring
            .get(APP, SecretKind::RelaySecret)
            .unwrap()
            .unwrap()
            .expose(),
        "relay-secret-0123456789abcdef"
    );
    let file = std::fs::read_to_string(dir.path().join("profiles.json")).unwrap();
    assert!(
        file.contains("relay.example") && !file.contains("relay-secret"),
        "{file}"
    );
    let bad = app
        .settings
        .set_callback(CallbackInput {
            setting: CallbackChoice::Direct {
                public_url: "https://office.example/kluis".into(),
                listen: "anywhere".into(),
            },
            relay_secret: None,
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), "config");
    assert_eq!(
        app.settings.current().callback,
        relay,
        "a refused setting changes nothing"
    );
}

/// Two profiles with a direct address share its one listener: the second is not refused for
/// an address in use (the test call then fails for want of a proxy, as a network error).
#[tokio::test(flavor = "multi_thread")]
async fn profiles_share_the_direct_listener() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    app.accounts.start_demo().await.unwrap();
    let listen = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    app.settings
        .set_callback(CallbackInput {
            setting: CallbackChoice::Direct {
                public_url: "https://127.0.0.1:1/kluis".into(),
                listen: listen.to_string(),
            },
            relay_secret: None,
        })
        .await
        .unwrap();
    for profile in ["demo", "demo-restricted"] {
        let err = app.settings.test_callback(profile).await.unwrap_err();
        assert_eq!(err.code(), "network", "{profile}: {err}");
    }
}

/// Attack (a compromised webview): the tunnel program is `cloudflared` from PATH or the one
/// the user picked in the Rust-side dialog — any other program is refused (on 197df1f any
/// path became "cloudflared"); the save folder comes only from the folder dialog.
#[tokio::test(flavor = "multi_thread")]
async fn the_webview_names_no_program_and_no_folder() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    let tunnel = |program: &str| CallbackInput {
        setting: CallbackChoice::Tunnel {
            program: program.into(),
        },
        relay_secret: None,
    };
    let refused = app
        .settings
        .set_callback(tunnel("/bin/sh"))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "config", "{refused}");
    app.settings
        .set_callback(tunnel("cloudflared"))
        .await
        .expect("from PATH");

    let picked = dir.path().join("tools/cloudflared");
    app.set_dialogs(Chooses::new(&picked));
    let settings = app.settings.choose_tunnel_program().await.unwrap();
    assert_eq!(
        settings.callback,
        CallbackChoice::Tunnel {
            program: picked.to_string_lossy().into_owned()
        }
    );
    app.settings
        .set_callback(tunnel(&picked.to_string_lossy()))
        .await
        .expect("the picked program, unchanged, may be saved again");
    assert_eq!(
        app.settings
            .set_callback(tunnel("/usr/bin/python3"))
            .await
            .unwrap_err()
            .code(),
        "config"
    );

    let folder = tempfile::tempdir().unwrap();
    app.set_dialogs(Chooses::new(folder.path()));
    let settings = app.settings.choose_save_folder().await.unwrap();
    assert_eq!(settings.save_folder.as_deref(), folder.path().to_str());
    assert_eq!(app.settings.clear_save_folder().unwrap().save_folder, None);
}

/// The window's sink for resumed jobs outlives a start with nothing to resume, and is let go
/// only for the next window's: a sink let go ends the UI's channel by script evaluated in the
/// page, which makes WebKitGTK start a JavaScript engine in the app's process (5.8 MiB an idle
/// window would hold for nothing; `tests/bench/window-idle.sh`).
#[tokio::test(flavor = "multi_thread")]
async fn the_resume_sink_is_kept_while_nothing_is_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    let sink: kluis_desktop::ResumeSink = Arc::new(|_| {});
    let first = Arc::downgrade(&sink);
    let offered = app.backups.resume_backups(sink).await.unwrap();
    assert!(offered.is_empty(), "{offered:?}");
    assert!(
        first.upgrade().is_some(),
        "the sink was let go when nothing was resumed"
    );

    let again: kluis_desktop::ResumeSink = Arc::new(|_| {});
    app.backups.resume_backups(again).await.unwrap();
    assert!(
        first.upgrade().is_none(),
        "a reloaded page's new sink replaces the old one"
    );
}

/// A verified backup that waited for the save dialog when the app was closed is still there
/// at the next start and offered again (on 197df1f the start deleted it although the history
/// listed it as saved).
#[tokio::test(flavor = "multi_thread")]
async fn a_staged_backup_survives_a_restart_and_is_offered_again() {
    let dir = tempfile::tempdir().unwrap();
    let first = app(&dir, None);
    first.accounts.start_demo().await.unwrap();
    let (job, events) = backup(&first, "demo").await;
    assert!(
        matches!(events.last(), Some(AppJobEvent::Staged { .. })),
        "{events:?}"
    );
    first.shutdown().await;
    drop(first);

    let second = app(&dir, None);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let offered = second
        .backups
        .resume_backups(Arc::new(move |e| {
            let _ = tx.send(e);
        }))
        .await
        .unwrap();
    assert_eq!(offered.len(), 1);
    assert_eq!(offered[0].job_id, job.to_string());
    let event = rx.recv().await.unwrap();
    assert!(
        matches!(event.event, AppJobEvent::Staged { .. }),
        "{event:?}"
    );
    let target = dir.path().join("kept.zip");
    second.set_dialogs(Chooses::new(&target));
    let saved = second
        .backups
        .save_backup(job)
        .await
        .unwrap()
        .expect("saved");
    assert_eq!(saved.path, target);
    assert_eq!(
        saved.sha256,
        hex::encode(kluis_sim::payload::sha256(saved.bytes))
    );
}

/// Without an OpenAPI description, what a key allows is learnt from the service's answers:
/// unknown at first, allowed once an endpoint has answered, denied after its 403 (on 197df1f
/// it stayed "not known yet" after every call had succeeded).
#[tokio::test(flavor = "multi_thread")]
async fn permissions_are_learnt_from_answers() {
    use kluis_desktop::permissions::Permissions;
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let app = demo_saving_to(&dir, &out).await;
    for view in app.accounts.list() {
        let input = ProfileInput {
            id: Some(view.id.clone()),
            name: view.name,
            base_url: view.base_url,
            username: view.username,
            api_key: None,
            password: None,
            openapi_url: None,
            tags: None,
        };
        app.accounts.save_profile(input).await.unwrap();
    }
    let learnt = |p: Permissions| (p.source, p.environment, p.backup_owner, p.webhook);
    let all = |access| (PermissionSource::Learnt, access, access, access);
    assert_eq!(
        learnt(app.accounts.permissions("demo").await.unwrap()),
        all(Access::Unknown)
    );
    app.accounts.environment("demo").await.unwrap();
    let (_, events) = backup(&app, "demo").await;
    assert!(
        matches!(events.last(), Some(AppJobEvent::Saved { .. })),
        "{events:?}"
    );
    assert_eq!(
        learnt(app.accounts.permissions("demo").await.unwrap()),
        all(Access::Allowed)
    );
    let (_, events) = backup(&app, "demo-restricted").await;
    assert!(
        matches!(events.last(), Some(AppJobEvent::Failed { .. })),
        "{events:?}"
    );
    let restricted = app.accounts.permissions("demo-restricted").await.unwrap();
    assert_eq!(restricted.backup_owner, Access::Denied);
}

/// "Start a backup: allowed" is known as soon as the service accepts one — before the job
/// ends (on 197df1f it said "not known yet" while a backup it had accepted ran).
#[tokio::test(flavor = "multi_thread")]
async fn a_backup_accepted_is_allowed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let app = demo_saving_to(&dir, &out).await;
    let input = ProfileInput {
        id: Some("demo".into()),
        name: "Demo".into(),
        base_url: app.accounts.list()[0].base_url.clone(),
        username: "demo".into(),
        api_key: None,
        password: None,
        openapi_url: None,
        tags: None,
    };
    app.accounts.save_profile(input).await.unwrap(); // no OpenAPI URL: permissions are learnt
    common::start_until_accepted(&app, "demo").await;
    let p = app.accounts.permissions("demo").await.unwrap();
    assert_eq!(p.backup_owner, Access::Allowed, "allowed once accepted");
}

/// A service with a private CA (or behind a TLS-inspecting proxy): sign-in fails as an
/// untrusted certificate; the CA's certificate picked in the Rust-side dialog is shown by
/// subject and fingerprint, kept with the profile (also for the next start), and sign-in then
/// works; a file that is no certificate is refused and changes nothing; "Stop trusting" undoes
/// it (on 197df1f only an environment variable could do this).
#[tokio::test(flavor = "multi_thread")]
async fn a_private_ca_is_trusted_from_a_file() {
    let sim = kluis_sim::Sim::start(kluis_sim::SimConfig::default())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryStore::default());
    let open = || DesktopApp::open(AppPaths::under(dir.path()), keyring.clone(), None).unwrap();
    let app = open();
    let profile = app
        .accounts
        .save_profile(common::office(&sim, None))
        .await
        .unwrap();
    assert!(profile.trusted_cas.is_empty());
    let refused = app.accounts.sign_in(&profile.id).await.unwrap_err();
    assert_eq!(refused.code(), "certificate", "{refused}");

    let ca_file = dir.path().join("office-ca.pem");
    std::fs::write(&ca_file, sim.ca_pem()).unwrap();
    app.set_dialogs(Chooses::new(&ca_file));
    let trusted = app.accounts.choose_profile_ca(&profile.id).await.unwrap();
    let [ca] = trusted.trusted_cas.as_slice() else {
        panic!("{trusted:?}")
    };
    assert!(!ca.subject.is_empty() && ca.sha256.len() == 95, "{ca:?}");
    app.accounts
        .sign_in(&profile.id)
        .await
        .expect("the CA is trusted now");
    let next_start = open();
    next_start
        .accounts
        .sign_in(&profile.id)
        .await
        .expect("kept with the profile");

    let not_a_certificate = dir.path().join("notes.txt");
    std::fs::write(&not_a_certificate, "hello").unwrap();
    app.set_dialogs(Chooses::new(&not_a_certificate));
    let wrong = app
        .accounts
        .choose_profile_ca(&profile.id)
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), "config", "{wrong}");
    let unchanged = app
        .accounts
        .list()
        .into_iter()
        .find(|p| p.id == profile.id)
        .unwrap();
    assert_eq!(unchanged.trusted_cas, trusted.trusted_cas);

    let cleared = app.accounts.clear_profile_ca(&profile.id).unwrap();
    assert!(cleared.trusted_cas.is_empty());
    let again = app.accounts.sign_in(&profile.id).await.unwrap_err();
    assert_eq!(again.code(), "certificate");
}

/// The profile form's tags are saved cleaned (trimmed, no repeats) and shown; a tag that is
/// not a label is refused with the form's other fields unsaved; no tags given keeps them.
#[tokio::test(flavor = "multi_thread")]
async fn a_profile_keeps_its_tags() {
    let sim = kluis_sim::Sim::start(kluis_sim::SimConfig::default())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = app(&dir, None);
    let tagged = |id: Option<String>, tags: Option<&[&str]>| ProfileInput {
        tags: tags.map(|t| t.iter().map(|s| s.to_string()).collect()),
        ..common::office(&sim, id)
    };
    let saved = (app
        .accounts
        .save_profile(tagged(None, Some(&[" Jan", "jan", "Bakkers"]))))
    .await
    .unwrap();
    assert_eq!(saved.tags, ["Jan", "Bakkers"]);
    let refused = (app.accounts)
        .save_profile(ProfileInput {
            name: "Renamed".into(),
            ..tagged(Some(saved.id.clone()), Some(&["two\nlines"]))
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "config");
    assert_eq!(
        app.accounts.list()[0].name,
        "Office",
        "nothing of the refused form saved"
    );
    let kept = (app.accounts)
        .save_profile(tagged(Some(saved.id.clone()), None))
        .await
        .unwrap();
    assert_eq!(
        (kept.name.as_str(), kept.tags.as_slice()),
        ("Office", &["Jan".to_string(), "Bakkers".to_string()][..])
    );
}
