//! Encryption at rest, end to end against the simulator over TLS: the backup is encrypted as
//! it downloads (no plain copy on disk), decrypts byte for byte to what the service sent,
//! survives a cut connection, is verified as it is on disk, and is refused to a wrong key.

use std::sync::Arc;

use crate::common::*;
use kluis_core::encryption::{decrypt, DecryptKey, Encryption};
use kluis_core::verify::{check_entry, Finding};
use kluis_core::{DownloadOptions, Secret};

const SIZE: u64 = 3 * 1024 * 1024 + 5;

async fn encrypted_harness(encryption: Encryption, cut: bool) -> Harness {
    let sim = sim(|c| {
        c.payload_size = SIZE;
        if cut {
            c.faults.cut_download_after = Some(1_000_003);
            c.faults.cut_download_times = 1;
        }
    })
    .await;
    let config = demo_config(&sim);
    let options = DownloadOptions {
        retry: FAST_RETRY,
        encryption: Some(Arc::new(encryption)),
        ..DownloadOptions::default()
    };
    Harness::with(sim, config, options).await
}

/// With a passphrase: the saved file is an age file named `….age`, nowhere in it (nor in its
/// folder) are the plain bytes, the history records the plain and the encrypted digests, it
/// decrypts to exactly the service's file, and a wrong passphrase is refused.
#[tokio::test]
async fn a_passphrase_backup_decrypts_byte_for_byte() {
    let passphrase = Secret::new("correct horse battery staple");
    let h = encrypted_harness(Encryption::passphrase(&passphrase).unwrap(), false).await;
    let (saved, _) = h.backup().await;
    let saved = saved.expect("saved encrypted");
    assert_eq!(saved.bytes, SIZE, "the plain stream's length");
    assert_eq!(
        saved.sha256,
        expected_sha(SIZE),
        "the plain stream's digest"
    );
    assert!(
        saved.path.to_string_lossy().ends_with(".age"),
        "{:?}",
        saved.path
    );
    let on_disk = std::fs::read(&saved.path).unwrap();
    assert!(on_disk.starts_with(b"age-encryption.org/v1\n"));
    let encrypted = saved
        .encrypted
        .clone()
        .expect("the encrypted file is described");
    assert_eq!(encrypted.bytes, on_disk.len() as u64);
    assert_eq!(encrypted.sha256, sha256_of(&saved.path));
    let plain_start = kluis_sim::payload::slice(4096, 64);
    assert!(
        !on_disk.windows(64).any(|w| w == &plain_start[..]),
        "no plain bytes on disk"
    );
    assert_eq!(
        h.out_entries(),
        std::slice::from_ref(&saved.path),
        "no plain copy beside it"
    );

    let mut plain = Vec::new();
    let (bytes, sha256) = decrypt(
        on_disk.as_slice(),
        &DecryptKey::Passphrase(passphrase),
        &mut plain,
    )
    .unwrap();
    assert_eq!((bytes, hex::encode(sha256)), (SIZE, expected_sha(SIZE)));
    let expected: Vec<u8> = (0..SIZE)
        .step_by(65536)
        .flat_map(|at| {
            kluis_sim::payload::file_slice(SIZE, at, (SIZE - at).min(65536) as usize).to_vec()
        })
        .collect();
    assert!(plain == expected, "decrypted byte for byte");

    let wrong = DecryptKey::Passphrase(Secret::new("not the passphrase at all"));
    let err = decrypt(on_disk.as_slice(), &wrong, std::io::sink()).unwrap_err();
    assert!(err.to_string().contains("does not open"), "{err}");

    let entry = &h.history.list(None, 1).unwrap()[0];
    assert_eq!(
        entry.encrypted.as_ref(),
        Some(&encrypted),
        "recorded in the history"
    );
    assert_eq!(
        check_entry(entry).finding,
        Finding::Intact,
        "verified as on disk"
    );
    let mut damaged = on_disk.clone();
    damaged[100_000] ^= 1;
    std::fs::write(&saved.path, &damaged).unwrap();
    assert_eq!(check_entry(entry).finding, Finding::Changed);
    let err = decrypt(
        damaged.as_slice(),
        &DecryptKey::Passphrase(Secret::new("correct horse battery staple")),
        std::io::sink(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");
}

/// To an X25519 recipient, across a cut connection (resumed with Range in the same stream):
/// the identity decrypts it to the service's exact digest.
#[tokio::test]
async fn a_recipient_backup_survives_a_cut() {
    let identity = age::x25519::Identity::generate();
    let recipient = identity.to_public().to_string();
    let h = encrypted_harness(Encryption::recipient(&recipient).unwrap(), true).await;
    let (saved, _) = h.backup().await;
    let saved = saved.expect("saved encrypted after a cut");
    assert_eq!(h.sim.stats().downloads, 2, "one cut, one resume");
    let file = std::fs::File::open(&saved.path).unwrap();
    use age::secrecy::ExposeSecret;
    let key = DecryptKey::Identity(Secret::new(identity.to_string().expose_secret()));
    let (bytes, sha256) = decrypt(file, &key, std::io::sink()).unwrap();
    assert_eq!((bytes, hex::encode(sha256)), (SIZE, expected_sha(SIZE)));
    assert!(Encryption::recipient("age1notarecipient").is_err());
    assert!(
        Encryption::passphrase(&Secret::new("short")).is_err(),
        "a short passphrase is refused"
    );
}
