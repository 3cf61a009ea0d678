//! Writes a copy target as a lost computer of a large office leaves it, for the recovery
//! benchmark (`tests/bench/recover-list.sh`): KLANTEN klanten of COPIES copies each (small
//! files: listing reads names and sizes, not bytes), each copy with its record beside it, the
//! computer's catalog naming them all, the office key's public half — sealed to a new recovery
//! key, written to KEY_FILE.
//!
//!     cargo run --release -p kluis-recovery --example office_target -- FOLDER KEY_FILE [KLANTEN] [COPIES]

use std::path::Path;

use kluis_recovery::catalog::{CATALOG_FORMAT, RECORD_FORMAT};
use kluis_recovery::{
    layout, sealed, Catalog, CopyNote, CopyRecord, Encrypted, Klant, KlantNote, Pc, RecoveryKey,
};
use sha2::{Digest, Sha256};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(root), Some(key_file)) = (args.first(), args.get(1)) else {
        eprintln!("usage: office_target FOLDER KEY_FILE [KLANTEN] [COPIES]");
        std::process::exit(2);
    };
    let number = |i: usize, default: usize| {
        args.get(i)
            .map_or(default, |n| n.parse().expect("a number"))
    };
    let (klanten, copies) = (number(2, 200), number(3, 50));
    let root = Path::new(root);
    let key = RecoveryKey::generate();
    let (office, vouch) = (key.office_key(), key.vouch_key());
    std::fs::write(key_file, format!("{}\n", key.to_text().expose())).unwrap();
    let pc = Pc {
        id: "0123456789abcdef0123456789abcdef".into(),
        name: "RECEPTIE".into(),
    };
    let put = |relative: &str, bytes: &[u8]| {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    let day_ms = 86_400_000i64;
    let start_ms = 1_764_000_000_000i64;
    let mut notes = Vec::with_capacity(klanten);
    for k in 0..klanten {
        let name = format!("Klant {k:03} B.V.");
        let klant = Klant {
            name: name.clone(),
            base_url: "https://service.example/webservice_v2".into(),
            username: format!("klant{k:03}"),
            key: format!("{:032x}", k + 1),
        };
        let mut note = KlantNote {
            klant: klant.clone(),
            encrypted: Encrypted::No,
            settings: serde_json::Value::Null,
            copies: Vec::with_capacity(copies),
        };
        for c in 0..copies {
            let saved_ms = start_ms + c as i64 * day_ms;
            let file = format!("{name} {c:04}.zip");
            let location = format!("{name}/{file}");
            let bytes = format!("PK copy {k} {c}").into_bytes();
            put(&location, &bytes);
            let copy = CopyNote {
                job_id: format!("{:08x}-0000-4000-8000-{:012x}", k, c),
                location: location.clone(),
                name: file,
                bytes: bytes.len() as u64,
                sha256: hex::encode(Sha256::digest(&bytes)),
                saved_ms,
                encrypted: false,
                locked_until_ms: None,
                restore_test: None,
            };
            let record = CopyRecord {
                kluis_copy_record: RECORD_FORMAT,
                office: office.fingerprint(),
                pc: pc.clone(),
                klant: klant.clone(),
                encrypted: Encrypted::No,
                copy: copy.clone(),
            };
            put(
                &layout::record(&location),
                &sealed::seal(&record, &office, &vouch).unwrap(),
            );
            note.copies.push(copy);
        }
        notes.push(note);
    }
    let catalog = Catalog {
        kluis_catalog: CATALOG_FORMAT,
        office: office.fingerprint(),
        pc: pc.clone(),
        written_ms: start_ms + copies as i64 * day_ms,
        number: 1,
        klanten: notes,
        adopted: Vec::new(),
    };
    let sealed = sealed::seal(&catalog, &office, &vouch).unwrap();
    put(&layout::catalog(&pc.id, 1), &sealed);
    put(
        layout::OFFICE_KEY,
        format!("{}\n{}\n", office.to_text(), office.fingerprint()).as_bytes(),
    );
    eprintln!(
        "{klanten} klanten × {copies} copies written to {}; the catalog is {} bytes.",
        root.display(),
        sealed.len()
    );
}
