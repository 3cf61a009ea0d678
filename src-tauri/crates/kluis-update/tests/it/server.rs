//! A publisher's update server on loopback over TLS (kluis-https, a throw-away CA) and its
//! signing key (minisign, as `tauri signer` makes and uses one) — for kluis-update's tests
//! and the CLI's (`kluis update`), which include this file.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::get;
use axum::Router;
use base64::Engine;
use kluis_update::{platform, Publisher, Target};

/// A publisher's signing key, as `tauri signer generate` makes one.
pub struct Signer(minisign::KeyPair);

impl Signer {
    pub fn new() -> Signer {
        Signer(minisign::KeyPair::generate_unencrypted_keypair().unwrap())
    }

    /// The public key as Tauri's configuration takes it: the .pub file's text in base64.
    pub fn public(&self) -> String {
        b64(&self.0.pk.to_box().unwrap().to_string())
    }

    /// `bytes`' signature as the manifest carries it (the .sig file's text in base64), as
    /// the build of `version` for this program (its platform and install kind): its trusted
    /// comment names them, as tests/update/publish.sh signs.
    pub fn sign(&self, bytes: &[u8], version: &str) -> String {
        let target = Target::this_program();
        let file = target.artifact(&kluis_update::Version::parse(version).unwrap());
        self.sign_for(bytes, version, &target.platform, &file)
    }

    /// `bytes`' signature as the build of `version` for `platform` named `file`.
    pub fn sign_for(&self, bytes: &[u8], version: &str, platform: &str, file: &str) -> String {
        self.sign_with(
            bytes,
            &format!("version:{version}\tplatform:{platform}\tfile:{file}"),
        )
    }

    /// `bytes`' signature with `trusted_comment` as it is.
    pub fn sign_with(&self, bytes: &[u8], trusted_comment: &str) -> String {
        let signed = minisign::sign(
            Some(&self.0.pk),
            &self.0.sk,
            bytes,
            Some(trusted_comment),
            None,
        )
        .unwrap();
        b64(&signed.to_string())
    }
}

pub fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// What the update server serves, changeable by a test; and how often the build and the manifest were asked for.
#[derive(Default)]
pub struct Served {
    pub manifest: Mutex<String>,
    /// What any other path answers, unless `files` has that name.
    pub build: Mutex<Vec<u8>>,
    pub files: Mutex<std::collections::HashMap<String, Vec<u8>>>,
    pub build_asked: AtomicUsize,
    pub manifest_asked: AtomicUsize,
}

/// An update server on loopback serving `served`: its origin and its CA's PEM.
pub async fn server(served: Arc<Served>) -> (String, String) {
    kluis_https::install_crypto_provider();
    let ca = kluis_https::LocalCa::generate("update test CA").unwrap();
    let tls = ca.server_config(&["127.0.0.1"]).unwrap();
    let router = Router::new()
        .route(
            "/manifest.json",
            get(|State(s): State<Arc<Served>>| async move {
                s.manifest_asked
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                s.manifest.lock().unwrap().clone()
            }),
        )
        .route(
            "/{name}",
            get(
                |State(s): State<Arc<Served>>,
                 axum::extract::Path(name): axum::extract::Path<String>| async move {
                    s.build_asked
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let file = s.files.lock().unwrap().get(&name).cloned();
                    file.unwrap_or_else(|| s.build.lock().unwrap().clone())
                },
            ),
        )
        .with_state(served);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(kluis_https::serve_tls(
        listener,
        tls,
        router,
        Default::default(),
        std::future::pending(),
    ));
    (origin, ca.ca_pem())
}

/// A manifest offering `version` for this computer, the build at `origin`, its signature.
pub fn manifest(version: &str, origin: &str, signature: &str) -> String {
    serde_json::json!({
        "version": version,
        "notes": "Sneller importeren.",
        "pub_date": "2026-12-01T10:00:00Z",
        "platforms": { platform(): { "url": format!("{origin}/kluis-9.9.9-x64-setup.exe"), "signature": signature } }
    })
    .to_string()
}

pub struct Setup {
    pub served: Arc<Served>,
    pub origin: String,
    pub ca: String,
    pub signer: Signer,
    pub publisher: Publisher,
}

/// A server, a publisher's key and the [`Publisher`] that follows them.
pub async fn setup() -> Setup {
    let served = Arc::new(Served::default());
    let (origin, ca) = server(served.clone()).await;
    let signer = Signer::new();
    let publisher = Publisher::new(&format!("{origin}/manifest.json"), &signer.public()).unwrap();
    Setup {
        served,
        origin,
        ca,
        signer,
        publisher,
    }
}
