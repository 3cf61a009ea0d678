//! One copy of FILE to an S3 bucket, the way Kluis makes it after a backup (for the benchmark
//! `tests/bench/s3-vs-rclone.sh`, never CI):
//!
//! ```sh
//! KLUIS_S3_SECRET_KEY=… s3_upload FILE ENDPOINT BUCKET PREFIX ACCESS_KEY_ID CA_FILE
//! ```
//!
//! The file is recorded as a saved backup in a history in memory (its SHA-256 read first, as a
//! backup's is when it is downloaded), then copied by `copy_missing`: in parts, each checked by
//! the server, the object's length and SHA-256 proven afterwards. Prints the seconds the copy
//! took (the hashing before it not counted: a real backup's digest is known from its download).

use std::sync::Arc;
use std::time::Instant;

use kluis_copies::s3::S3Place;
use kluis_copies::{copy_missing_in_background, CopyTarget, Place};
use kluis_core::download::Saved;
use kluis_core::{History, KlantKey, Secret};
use sha2::{Digest, Sha256};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, endpoint, bucket, prefix, access_key_id, ca] = &args[..] else {
        eprintln!("usage: s3_upload FILE ENDPOINT BUCKET PREFIX ACCESS_KEY_ID CA_FILE (secret key in KLUIS_S3_SECRET_KEY)");
        std::process::exit(2);
    };
    let path = std::path::absolute(file).unwrap();
    let mut hasher = Sha256::new();
    std::io::copy(&mut std::fs::File::open(&path).unwrap(), &mut hasher).unwrap();
    let history = Arc::new(History::in_memory().unwrap());
    let id = uuid::Uuid::new_v4();
    history
        .start(id, &KlantKey::profile("bench"), "relay")
        .unwrap();
    let saved = Saved {
        bytes: std::fs::metadata(&path).unwrap().len(),
        path,
        sha256: hex::encode(hasher.finalize()),
        encrypted: None,
    };
    history.saved(id, &saved).unwrap();
    let place = S3Place {
        endpoint: endpoint.clone(),
        region: "us-east-1".into(),
        bucket: bucket.clone(),
        prefix: prefix.clone(),
        path_style: true,
        access_key_id: access_key_id.clone(),
        lock: None,
        ca_cert: Some(ca.clone()),
    };
    let mut target = CopyTarget::new("bench", Place::S3(place)).unwrap();
    let secret = std::env::var("KLUIS_S3_SECRET_KEY").expect("KLUIS_S3_SECRET_KEY");
    target.secret = Some(Secret::new(secret));
    let started = Instant::now();
    let copied = copy_missing_in_background(history, None, vec![target], None)
        .await
        .unwrap();
    if let Err(e) = &copied[0].outcome {
        eprintln!("s3_upload: {e}");
        std::process::exit(1);
    }
    println!("{:.3}", started.elapsed().as_secs_f64());
}
