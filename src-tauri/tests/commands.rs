//! The Tauri commands through the IPC layer on Tauri's mock runtime: arguments are named and
//! shaped as the UI sends them, and errors cross as `{code, message}`.

use std::sync::Arc;

use kluis_app::LaunchInfo;
use kluis_desktop::{AppPaths, DesktopApp, MemoryStore};
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, MockRuntime};
use tauri::webview::InvokeRequest;
use tauri::Manager;
use tauri::WebviewWindow;

fn window(dir: &tempfile::TempDir) -> (tauri::App<MockRuntime>, WebviewWindow<MockRuntime>) {
    let desktop = DesktopApp::open(
        AppPaths::under(dir.path()),
        Arc::new(MemoryStore::default()),
        None,
    )
    .unwrap();
    let app = kluis_app::builder::<MockRuntime>(desktop, LaunchInfo { demo: true })
        // The app's own context: its capabilities and app manifest, so the grants are enforced
        // here as in the app (a mock context allows every command).
        .build(tauri::generate_context!())
        .unwrap();
    let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, window)
}

/// Where the app's own pages are served from, as the capabilities' "local" URL means it:
/// Tauri's scheme on Linux and macOS, a host of its own on Windows (WebView2 serves custom
/// schemes as http://<scheme>.localhost).
const APP_URL: &str = if cfg!(windows) {
    "http://tauri.localhost"
} else {
    "tauri://localhost"
};

fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: APP_URL.parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: window.app_handle().invoke_key().to_string(),
    };
    get_ipc_response(window, request).map(|body| body.deserialize::<Value>().unwrap())
}

/// Simple commands answer with the shapes the UI's bindings describe.
#[test]
fn commands_answer_over_ipc() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = window(&dir);
    assert_eq!(
        invoke(&window, "launch_info", json!({})).unwrap(),
        json!({ "demo": true })
    );
    assert_eq!(invoke(&window, "profiles", json!({})).unwrap(), json!([]));
    assert_eq!(
        invoke(&window, "settings", json!({})).unwrap(),
        json!({ "save_folder": null, "callback": { "kind": "loopback" }, "relay_secret_saved": false, "unattended_at_once": 2, "notify_desktop": true, "paused_together": [], "file_name_template": null, "bandwidth": null, "min_free_mib": null, "copy_targets": [], "install_updates": false, "recovery": null })
    );
    assert_eq!(
        invoke(&window, "mail", json!({})).unwrap(),
        json!(null),
        "e-mail is asked for on its own (Settings keep it uninterpreted)"
    );
    assert_eq!(invoke(&window, "dashboard", json!({})).unwrap(), json!([]));
    let update = invoke(&window, "update_view", json!({})).unwrap();
    assert_eq!(
        (&update["state"]["kind"], &update["current"]),
        (&json!("not_looked"), &json!(env!("CARGO_PKG_VERSION"))),
        "{update}"
    );
    assert_eq!(
        invoke(&window, "history", json!({ "profileId": null })).unwrap(),
        json!([])
    );
}

/// The tray's actions answer over the command path the tests and the UI use (no tray host
/// shows the icon under Xvfb): Open shows the window, pausing with no plan pauses nothing,
/// an unknown action is refused, and start at login says what it can.
#[test]
fn tray_actions_answer_over_ipc() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = window(&dir);
    window.hide().unwrap();
    invoke(&window, "tray_action", json!({ "action": "open" })).unwrap();
    assert!(window.is_visible().unwrap(), "Open brings the window back");
    invoke(&window, "tray_action", json!({ "action": "pause_plans" })).unwrap();
    let settings = invoke(&window, "settings", json!({})).unwrap();
    assert_eq!(
        settings["paused_together"],
        json!([]),
        "no plan, nothing paused"
    );
    invoke(&window, "tray_action", json!({ "action": "resume_plans" })).unwrap();
    assert!(invoke(&window, "tray_action", json!({ "action": "rm -rf /" })).is_err());
    assert_eq!(
        invoke(&window, "start_at_login", json!({})).unwrap(),
        json!(false)
    );
    let err = invoke(&window, "set_start_at_login", json!({ "on": true })).unwrap_err();
    assert_eq!(err["code"], "config", "{err}");
}

/// Errors reach the UI as `{code, message}`, with the message telling what to do.
#[test]
fn errors_cross_as_code_and_message() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = window(&dir);
    let err = invoke(&window, "sign_in", json!({ "profileId": "nobody" })).unwrap_err();
    assert_eq!(err["code"], "not_found");
    assert!(err["message"]
        .as_str()
        .unwrap()
        .contains("Choose or add another"));
    let err = invoke(
        &window,
        "save_profile",
        json!({ "input": { "id": null, "name": "x", "base_url": "http://example.com/x", "username": "u",
                           "api_key": "123e4567-e89b-42d3-a456-426614174000", "password": "p", "openapi_url": null } }),
    )
    .unwrap_err();
    assert_eq!(err["code"], "config", "plain http is refused: {err}");
}

/// Attack (a compromised webview): no command takes a path or a program. The old
/// path-taking command is gone, a path sent along is ignored, and the folder comes only from
/// the Rust-side dialog (none here, so nothing changes).
#[test]
fn the_webview_cannot_hand_over_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = window(&dir);
    assert!(invoke(&window, "set_save_folder", json!({ "folder": "/tmp" })).is_err());
    let settings = invoke(&window, "choose_save_folder", json!({ "folder": "/tmp" })).unwrap();
    assert_eq!(settings["save_folder"], Value::Null);
    let err = invoke(
        &window,
        "save_backup",
        json!({ "jobId": uuid::Uuid::new_v4().to_string(), "path": "/etc/passwd" }),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid_state");
    let err = invoke(
        &window,
        "set_callback",
        json!({ "input": { "setting": { "kind": "tunnel", "program": "/bin/sh" }, "relay_secret": null } }),
    )
    .unwrap_err();
    assert_eq!(err["code"], "config");
}

/// Commands are declared in one list (`command_names.rs`, from which `build.rs` writes the app
/// manifest and the main window's grants); the handler, the grants and the UI's `api.ts` must
/// name exactly the same commands — this fails when one is changed without the others.
#[test]
fn the_four_command_lists_agree() {
    use std::collections::BTreeSet;
    let declared: BTreeSet<String> = kluis_app::command_names::ALL
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        declared.len(),
        kluis_app::command_names::ALL.len(),
        "no name twice"
    );

    let capability: Value =
        serde_json::from_str(include_str!("../capabilities/default.json")).unwrap();
    assert_eq!(
        capability["permissions"],
        json!(["main-window"]),
        "the main window is granted the set build.rs writes, and nothing else"
    );
    let set: toml::Table = include_str!("../permissions/main-window.toml")
        .parse()
        .unwrap();
    let granted: BTreeSet<String> = set["set"][0]["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let p = p.as_str().unwrap();
            let own = p
                .strip_prefix("allow-")
                .unwrap_or_else(|| panic!("the set grants more than the app's commands: {p}"));
            own.replace('-', "_")
        })
        .collect();
    assert_eq!(granted, declared, "permissions/main-window.toml");

    let api = include_str!("../../ui/src/api.ts");
    let called: BTreeSet<String> = api
        .split("invoke<")
        .skip(1)
        .filter_map(|rest| {
            rest.split_once("(\"")?
                .1
                .split_once('"')
                .map(|(n, _)| n.to_string())
        })
        .collect();
    assert_eq!(called, declared, "ui/src/api.ts");

    // Each is granted (the app's context enforces its grants) and handled: called without
    // arguments, it answers, or says what is missing — never that it is not allowed, nor
    // what the handler says of a name it does not know.
    let dir = tempfile::tempdir().unwrap();
    let (_app, window) = window(&dir);
    let unknown = invoke(&window, "no_such_command", json!({})).unwrap_err();
    assert!(
        unknown.to_string().contains("not allowed"),
        "a name no grant names is refused: {unknown}"
    );
    for name in &declared {
        if let Err(error) = invoke(&window, name, json!({})) {
            let text = error.to_string();
            assert!(
                !text.contains("not allowed"),
                "{name} is not granted: {text}"
            );
            let not_found = format!("Command {name} not found");
            assert_ne!(error, json!(not_found), "the handler lacks {name}");
        }
    }
}

/// Windows: the verified setup goes to Tauri's updater plugin (registered from the app's own
/// configuration), which takes the manifest it came with again, binds the signature to the
/// announced version and verifies the bytes with the publisher's key; a setup changed after
/// signing, or signed for another version, does not get past it. (Running the setup ends the
/// process, so this stops short of it.)
#[cfg(windows)]
#[test]
fn the_updater_plugin_checks_a_setup_before_it_runs_it() {
    use base64::Engine;
    let b64 = |text: String| base64::engine::general_purpose::STANDARD.encode(text);
    let dir = tempfile::tempdir().unwrap();
    let (app, _window) = window(&dir);
    let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    let setup = dir.path().join("kluis-9.9.9-x64-setup.exe");
    std::fs::write(&setup, b"MZ the next Kluis").unwrap();
    let signed_as = |bytes: &[u8], version: &str| {
        let comment = format!(
            "version:{version}\tplatform:windows-x86_64\tfile:kluis-{version}-x64-setup.exe"
        );
        let signature =
            minisign::sign(Some(&keys.pk), &keys.sk, bytes, Some(&comment), None).unwrap();
        kluis_desktop::VerifiedSetup {
            file: setup.clone(),
            version: "9.9.9".into(),
            manifest_url: "https://updates.example/kluis.json".into(),
            manifest: json!({
                "version": "9.9.9",
                "platforms": { "windows-x86_64": {
                    "url": "https://updates.example/kluis-9.9.9-x64-setup.exe",
                    "signature": b64(signature.to_string()) } }
            }),
            tauri_pubkey: b64(keys.pk.to_box().unwrap().to_string()),
        }
    };
    let installer = kluis_app::updater::PluginInstaller::new(app.handle().clone());
    let (update, bytes) = installer
        .checked(&signed_as(b"MZ the next Kluis", "9.9.9"))
        .unwrap();
    assert_eq!(
        (update.version.as_str(), &bytes[..]),
        ("9.9.9", &b"MZ the next Kluis"[..])
    );
    assert!(
        installer
            .checked(&signed_as(b"MZ another Kluis", "9.9.9"))
            .is_err(),
        "a changed setup"
    );
    assert!(
        installer
            .checked(&signed_as(b"MZ the next Kluis", "0.0.5"))
            .is_err(),
        "signed for 0.0.5"
    );
}

/// The window's update tells the setup the install's folder (`/D=`); msiexec, which refuses a
/// command line with an option it does not know, is told nothing more. (A Windows test: the
/// updater is Windows's.)
#[cfg(windows)]
#[test]
fn only_the_setup_is_told_its_folder() {
    use kluis_app::updater::installer_arguments;
    use kluis_desktop::InstallKind;
    let exe = std::path::Path::new("Kluis").join("kluis-app.exe");
    assert_eq!(
        installer_arguments(InstallKind::Setup, &exe),
        [kluis_desktop::setup_folder_argument(&exe)]
    );
    for kind in [InstallKind::Msi, InstallKind::MachineMsi, InstallKind::Deb] {
        assert!(installer_arguments(kind, &exe).is_empty(), "{kind:?}");
    }
}
