//! [`gather`]: every backup a copy target holds, as recovery lists it — from each computer's
//! newest catalog that opens (an older one when the newest is damaged, changed or for another
//! key: said), checked against each copy's own record; from the records alone for copies no
//! catalog names (no catalog written yet, or deleted); and a copy with neither, by its name and
//! size only, as unverified. Nothing is taken on one document's word where two disagree: such a
//! copy is listed as in doubt, and restore checks every copy's bytes against its SHA-256 anyway.

use std::collections::{BTreeMap, HashMap};

use crate::catalog::{Catalog, CopyNote, CopyRecord, Encrypted, Klant, Pc, CATALOG_FORMAT};
use crate::key::RecoveryKey;
use crate::layout;
use crate::sealed::{open, Unreadable};

/// An object on the target, read whole: where, and its bytes.
pub struct Stored {
    pub location: String,
    pub bytes: Vec<u8>,
}

/// An object the target lists: where, and its size.
pub struct Present {
    pub location: String,
    pub bytes: u64,
}

/// What a listed backup is known by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// Its computer's catalog, and its own record, agree.
    CatalogAndRecord,
    /// Its computer's catalog (its record is missing or does not open).
    Catalog,
    /// Its own record alone (no catalog names it).
    Record,
    /// Catalog and record disagree: restored only after its bytes match one of them.
    InDoubt,
    /// Neither: a file by its name and size, nothing known of whose it is.
    Unverified,
}

/// One backup on the target.
#[derive(Debug, Clone)]
pub struct Backup {
    /// Who it is of, and from which computer (none: unverified).
    pub klant: Option<Klant>,
    pub pc: Option<Pc>,
    pub encrypted: Encrypted,
    pub copy: CopyNote,
    pub proof: Proof,
}

/// A klant as a computer's newest catalog names it, with the settings that computer kept:
/// what a computer that carries on for it takes over.
#[derive(Debug, Clone)]
pub struct KlantOf {
    pub pc: Pc,
    pub klant: Klant,
    pub encrypted: Encrypted,
    pub settings: serde_json::Value,
}

/// Everything on the target: its backups, newest first within each klant, and what recovery
/// met on the way (a damaged catalog, one for another key), each said once.
#[derive(Debug, Default)]
pub struct Listing {
    pub backups: Vec<Backup>,
    /// Each computer's catalog used: its computer, number and date.
    pub catalogs: Vec<(Pc, u64, i64)>,
    /// The klanten of those catalogs.
    pub klanten: Vec<KlantOf>,
    /// Computers another took over from, as that one's catalog says: the lost one, the one
    /// that carries on, and when.
    pub adopted: Vec<(Pc, Pc, i64)>,
    /// Each copy's place, with the ids of every computer whose catalog or record names it
    /// (whichever the listing shows it under): a computer carrying on for a lost one takes only
    /// copies no other computer claims.
    pub named_by: HashMap<String, std::collections::BTreeSet<String>>,
    pub problems: Vec<String>,
}

/// See the module's text. `catalogs` are the catalog objects, `records` the records beside the
/// copies, `present` every other object (the copies themselves).
pub fn gather(
    catalogs: Vec<Stored>,
    records: Vec<Stored>,
    present: Vec<Present>,
    key: &RecoveryKey,
) -> Listing {
    let mut listing = Listing::default();
    let mut by_place: HashMap<String, Vec<u8>> = (catalogs.into_iter())
        .map(|c| (c.location, c.bytes))
        .collect();
    let places: Vec<String> = by_place.keys().cloned().collect();
    let read = |location: &str| Ok(by_place.remove(location));
    let chosen = newest_catalogs(
        places.iter().map(String::as_str),
        read,
        key,
        None,
        &mut listing,
    );
    let mut opened = HashMap::new();
    for stored in records {
        match record_in(&stored, key) {
            Ok((copy, record)) => {
                opened.insert(copy, record);
            }
            Err(Some(why)) => listing.problems.push(why),
            Err(None) => listing.met_other_key(),
        }
    }
    list(chosen, opened, present, listing)
}

/// The listing made of documents already opened: `chosen`, each computer's newest catalog
/// that [`catalog_in`] took; `records`, by the copy each is beside, as [`record_in`] took them;
/// `present`, every object on the target; `listing`, what was said on the way.
pub fn list(
    chosen: Vec<Catalog>,
    mut records: HashMap<String, CopyRecord>,
    present: Vec<Present>,
    mut listing: Listing,
) -> Listing {
    for catalog in &chosen {
        for note in &catalog.klanten {
            for copy in &note.copies {
                let by = listing.named_by.entry(copy.location.clone()).or_default();
                by.insert(catalog.pc.id.clone());
            }
        }
    }
    for (location, record) in &records {
        let by = listing.named_by.entry(location.clone()).or_default();
        by.insert(record.pc.id.clone());
    }
    // A computer that carries on for a lost one names the lost one's copies too: each copy is
    // listed once, under the computer that carries on (its catalog read first). A claim to
    // have taken over a computer that wrote a catalog after it is not believed: a computer
    // taken over writes no more.
    let newest: HashMap<&str, i64> = (chosen.iter())
        .map(|c| (c.pc.id.as_str(), c.written_ms))
        .collect();
    let adopted: std::collections::HashSet<String> = (chosen.iter())
        .flat_map(|c| c.adopted.iter())
        .filter(|a| newest.get(a.pc.id.as_str()).is_none_or(|w| *w <= a.at_ms))
        .map(|a| a.pc.id.clone())
        .collect();
    let mut chosen = chosen;
    chosen.sort_by_key(|c| adopted.contains(&c.pc.id));
    let mut named = std::collections::HashSet::new();
    let on_target: std::collections::HashSet<String> =
        present.iter().map(|p| p.location.clone()).collect();
    for catalog in chosen {
        for adoption in catalog
            .adopted
            .iter()
            .filter(|a| adopted.contains(&a.pc.id))
        {
            let by = catalog.pc.clone();
            listing
                .adopted
                .push((adoption.pc.clone(), by, adoption.at_ms));
        }
        for note in &catalog.klanten {
            listing.klanten.push(KlantOf {
                pc: catalog.pc.clone(),
                klant: note.klant.clone(),
                encrypted: note.encrypted.clone(),
                settings: note.settings.clone(),
            });
            // A lost computer's catalog is not written again: of its copies, those the target
            // no longer holds (removed by the one that carries on) are left out.
            let stale = |c: &&CopyNote| {
                adopted.contains(&catalog.pc.id) && !on_target.contains(c.location.as_str())
            };
            for copy in (note.copies.iter())
                .filter(|c| !stale(c))
                .filter(|c| named.insert(c.location.clone()))
            {
                let proof = match records.remove(&copy.location) {
                    None => Proof::Catalog,
                    Some(record) if record.copy == *copy && record.klant == note.klant => {
                        Proof::CatalogAndRecord
                    }
                    Some(_) => Proof::InDoubt,
                };
                listing.backups.push(Backup {
                    klant: Some(note.klant.clone()),
                    pc: Some(catalog.pc.clone()),
                    encrypted: note.encrypted.clone(),
                    copy: copy.clone(),
                    proof,
                });
            }
        }
        listing
            .catalogs
            .push((catalog.pc.clone(), catalog.number, catalog.written_ms));
    }
    // Copies no catalog names: from their own records.
    let listed: std::collections::HashSet<String> = listing
        .backups
        .iter()
        .map(|b| b.copy.location.clone())
        .collect();
    for (_, record) in records.into_iter().filter(|(at, _)| !listed.contains(at)) {
        listing.backups.push(Backup {
            klant: Some(record.klant),
            pc: Some(record.pc),
            encrypted: record.encrypted,
            copy: record.copy,
            proof: Proof::Record,
        });
    }
    // Files neither names.
    let listed: std::collections::HashSet<String> = listing
        .backups
        .iter()
        .map(|b| b.copy.location.clone())
        .collect();
    for file in present {
        if listed.contains(&file.location) || layout::is_kluis_own(&file.location) {
            continue;
        }
        listing.backups.push(Backup {
            klant: None,
            pc: None,
            encrypted: Encrypted::No,
            copy: CopyNote {
                job_id: String::new(),
                name: file.location.rsplit('/').next().unwrap_or("").to_string(),
                location: file.location,
                bytes: file.bytes,
                sha256: String::new(),
                saved_ms: 0,
                encrypted: false,
                locked_until_ms: None,
                restore_test: None,
            },
            proof: Proof::Unverified,
        });
    }
    let klant_name = |b: &Backup| b.klant.as_ref().map(|k| k.name.to_lowercase());
    listing.backups.sort_by(|a, b| {
        (klant_name(a), std::cmp::Reverse(a.copy.saved_ms))
            .cmp(&(klant_name(b), std::cmp::Reverse(b.copy.saved_ms)))
    });
    listing
}

/// How many of a computer's catalogs are read at most, newest first: a computer keeps its
/// newest 10, and each catalog planted under its name would be read (and decrypted) whole.
pub const CATALOGS_TRIED: usize = 12;

/// Each computer's newest catalog that [`catalog_in`] takes, among the catalogs at
/// `locations` (other names are passed by): read with `read` newest first, until one is taken
/// — older ones are not read at all. Those passed over, and those `read` could not read, are
/// said in `listing`.
pub fn newest_catalogs<'a>(
    locations: impl IntoIterator<Item = &'a str>,
    mut read: impl FnMut(&str) -> Result<Option<Vec<u8>>, String>,
    key: &RecoveryKey,
    before_ms: Option<i64>,
    listing: &mut Listing,
) -> Vec<Catalog> {
    let mut by_pc: BTreeMap<String, Vec<(u64, &str)>> = BTreeMap::new();
    for location in locations {
        if let (Some(pc), Some(number)) = (
            layout::pc_of_catalog(location),
            layout::number_of_catalog(location),
        ) {
            by_pc.entry(pc).or_default().push((number, location));
        }
    }
    let mut chosen = Vec::new();
    let mut passed_over = 0;
    for (pc, mut numbered) in by_pc {
        numbered.sort_by_key(|(number, _)| std::cmp::Reverse(*number));
        if numbered.len() > CATALOGS_TRIED {
            // (A computer keeps its newest 10: more is someone's planting, each read whole.)
            listing.problems.push(format!(
                "kluis-recovery/catalogs/{pc}: only its {CATALOGS_TRIED} newest of {} catalogs are read.",
                numbered.len()
            ));
            numbered.truncate(CATALOGS_TRIED);
        }
        for (_, location) in numbered {
            let bytes = match read(location) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => continue, // (gone since it was listed)
                Err(e) => {
                    listing
                        .problems
                        .push(format!("{location} is not read: {e}"));
                    continue;
                }
            };
            let stored = Stored {
                location: location.to_string(),
                bytes,
            };
            match catalog_in(&stored, key) {
                // (Going back to before a date: a catalog written since is passed over.)
                Ok(catalog) if before_ms.is_some_and(|before| catalog.written_ms >= before) => {
                    passed_over += 1;
                }
                Ok(catalog) => {
                    chosen.push(catalog);
                    break;
                }
                Err(None) => listing.met_other_key(),
                Err(Some(why)) => listing.problems.push(why),
            }
        }
    }
    if passed_over > 0 {
        listing.problems.push(format!(
            "{passed_over} catalogs written since the date given are passed over: each computer's newest before it is used."
        ));
    }
    chosen
}

impl Listing {
    /// Notes that a document of another key was met (said once).
    pub fn met_other_key(&mut self) {
        if !self.met_other_key_yet() {
            self.problems.push(OTHER_KEY.into());
        }
    }

    /// Whether a document of another key was met.
    pub fn met_other_key_yet(&self) -> bool {
        self.problems.iter().any(|p| p == OTHER_KEY)
    }
}

/// What the listing says once when catalogs or records of another key were met.
pub const OTHER_KEY: &str = "Some catalogs on this target were written for another recovery key (another office's, or one made before a new kit): they are not read.";

/// The catalog in `stored`, when recovery uses it: it opens with `key`, this office vouched
/// for it, it is in a format this Kluis reads, for this office's key, and where its computer
/// wrote it (one copied under a higher number, or into another computer's folder, would pass
/// for newer). Else why not, in words for the listing (none: it is for another key).
pub fn catalog_in(stored: &Stored, key: &RecoveryKey) -> Result<Catalog, Option<String>> {
    let (pc, number) = (
        layout::pc_of_catalog(&stored.location),
        layout::number_of_catalog(&stored.location),
    );
    let why = match open::<Catalog>(&stored.bytes, key) {
        Ok(catalog) if catalog.kluis_catalog > CATALOG_FORMAT => format!(
            "it was written by a newer Kluis (format {})",
            catalog.kluis_catalog
        ),
        Ok(catalog) if catalog.office != key.office_key().fingerprint() => {
            "it names another office key than the one it opens with".into()
        }
        Ok(catalog) if Some(&catalog.pc.id) != pc.as_ref() || Some(catalog.number) != number => {
            format!(
                "it is catalog {} of computer {}, put in another place",
                catalog.number, catalog.pc.name
            )
        }
        Ok(catalog) => return Ok(catalog),
        Err(Unreadable::OtherKey) => return Err(None),
        Err(why) => why.to_string(),
    };
    Err(Some(passed_over(&stored.location, &why)))
}

/// The words for a catalog at `location` that is not used, and why.
pub fn passed_over(location: &str, why: &str) -> String {
    format!("The catalog {location} is not used: {why}; an earlier one, and the copies' own records, are.")
}

/// The record in `stored` and the copy it is beside, when recovery uses it (it opens, this
/// office vouched for it, and it names the copy it is beside); else why not (none: it is for
/// another key).
pub fn record_in(
    stored: &Stored,
    key: &RecoveryKey,
) -> Result<(String, CopyRecord), Option<String>> {
    let Some(copy_at) = layout::copy_of_record(&stored.location) else {
        return Err(Some(format!("{} is not a record's name.", stored.location)));
    };
    match open::<CopyRecord>(&stored.bytes, key) {
        Ok(record) if record.copy.location == copy_at => Ok((copy_at, record)),
        Ok(_) => Err(Some(format!(
            "The record {} names another copy than its own; it is not used.",
            stored.location
        ))),
        Err(Unreadable::OtherKey) => Err(None),
        Err(why) => Err(Some(format!(
            "The record {} is not read: {why}.",
            stored.location
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{KlantNote, RECORD_FORMAT};
    use crate::sealed::seal;

    fn klant(name: &str) -> Klant {
        Klant {
            name: name.into(),
            base_url: "https://service.example/webservice_v2".into(),
            username: name.to_lowercase(),
            key: format!("id-{name}"),
        }
    }

    fn copy(at: &str, saved_ms: i64) -> CopyNote {
        CopyNote {
            job_id: format!("job-{at}"),
            location: at.into(),
            name: at.rsplit('/').next().unwrap().into(),
            bytes: 100,
            sha256: "ab".repeat(32),
            saved_ms,
            encrypted: false,
            locked_until_ms: None,
            restore_test: None,
        }
    }

    fn catalog(pc: &Pc, number: u64, office: &str, klanten: Vec<KlantNote>) -> Catalog {
        Catalog {
            kluis_catalog: CATALOG_FORMAT,
            office: office.into(),
            pc: pc.clone(),
            written_ms: 1_000 * number as i64,
            number,
            klanten,
            adopted: Vec::new(),
        }
    }

    fn note(klant: Klant, copies: Vec<CopyNote>) -> KlantNote {
        KlantNote {
            klant,
            encrypted: Encrypted::No,
            settings: serde_json::Value::Null,
            copies,
        }
    }

    /// A computer whose folder holds more catalogs than any computer keeps (planted ones, each
    /// read and decrypted whole) has only its newest [`CATALOGS_TRIED`] read, and that is said.
    #[test]
    fn only_a_computers_newest_catalogs_are_read() {
        let key = RecoveryKey::generate();
        let places: Vec<String> = (1..=40).map(|n| layout::catalog("aa01", n)).collect();
        let mut read = Vec::new();
        let mut listing = Listing::default();
        let chosen = newest_catalogs(
            places.iter().map(String::as_str),
            |location| {
                read.push(location.to_string());
                Ok(Some(b"not a catalog".to_vec()))
            },
            &key,
            None,
            &mut listing,
        );
        assert!(chosen.is_empty());
        assert_eq!(read.len(), CATALOGS_TRIED, "{read:?}");
        assert_eq!(read[0], layout::catalog("aa01", 40), "newest first");
        assert!(
            (listing.problems.iter()).any(|p| p.contains("only its 12 newest of 40")),
            "{:?}",
            listing.problems
        );
    }

    /// A computer that carries on for a lost one names the lost one's copies in its own
    /// catalog: each copy is listed once, under it, the adoption is said, the lost one's copies
    /// it does not name stay listed under the lost one — but not those the target no longer
    /// holds (the lost one's catalog is not written again when one is removed).
    #[test]
    fn a_copy_adopted_by_another_computer_is_listed_once_under_it() {
        let key = RecoveryKey::generate();
        let (office, vouch) = (key.office_key(), key.vouch_key());
        let fingerprint = office.fingerprint();
        let lost = Pc {
            id: "aa01".into(),
            name: "OUD".into(),
        };
        let new = Pc {
            id: "bb02".into(),
            name: "NIEUW".into(),
        };
        let bakker = klant("Bakker");
        let old_catalog = catalog(
            &lost,
            4,
            &fingerprint,
            vec![note(
                bakker.clone(),
                vec![
                    copy("Bakker/0.zip", 0),
                    copy("Bakker/1.zip", 1),
                    copy("Bakker/2.zip", 2),
                ],
            )],
        );
        let mut new_catalog = catalog(
            &new,
            1,
            &fingerprint,
            vec![note(
                bakker,
                vec![copy("Bakker/1.zip", 1), copy("Bakker/3.zip", 3)],
            )],
        );
        // A computer still writing (its catalog 9 is newer than the claim) is not taken over.
        let live = Pc {
            id: "cc03".into(),
            name: "LEVEND".into(),
        };
        let live_catalog = catalog(
            &live,
            9,
            &fingerprint,
            vec![note(klant("Visser"), vec![copy("Bakker/2.zip", 2)])],
        );
        new_catalog.adopted = [&lost, &live]
            .map(|pc| crate::catalog::Adoption {
                pc: pc.clone(),
                at_ms: 5_000,
            })
            .to_vec();
        let stored = |pc: &str, number, c: &Catalog| Stored {
            location: layout::catalog(pc, number),
            bytes: seal(c, &office, &vouch).unwrap(),
        };
        let listing = gather(
            vec![
                stored("aa01", 4, &old_catalog),
                stored("bb02", 1, &new_catalog),
                stored("cc03", 9, &live_catalog),
            ],
            vec![],
            (1..=3)
                .map(|n| Present {
                    location: format!("Bakker/{n}.zip"),
                    bytes: 100,
                })
                .collect(),
            &key,
        );
        let by: Vec<(&str, &str)> = (listing.backups.iter())
            .map(|b| {
                (
                    b.copy.location.as_str(),
                    b.pc.as_ref().unwrap().name.as_str(),
                )
            })
            .collect();
        assert_eq!(
            by,
            [
                ("Bakker/3.zip", "NIEUW"),
                ("Bakker/1.zip", "NIEUW"),
                ("Bakker/2.zip", "LEVEND")
            ],
            "newest first, each once; a copy a computer still writing names is its own"
        );
        assert_eq!(listing.adopted, [(lost, new, 5_000)], "LEVEND is not");
        let by: Vec<&str> = listing.named_by["Bakker/2.zip"]
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(
            by,
            ["aa01", "cc03"],
            "every computer that names a copy is known"
        );
        assert_eq!(
            listing.klanten.len(),
            3,
            "each computer's klant, with its settings"
        );
    }

    /// Two computers' catalogs and the copies' records: the newest catalog that opens is used
    /// (a damaged newer one said), each copy proven by catalog and record together where both
    /// agree, by one of them where the other is missing, in doubt where they disagree, and a
    /// file neither names listed as unverified; another office's catalog is not read, nor one
    /// moved to another place, nor one sealed by someone without the office's vouch key.
    #[test]
    fn the_listing_takes_each_document_for_what_it_proves() {
        let key = RecoveryKey::generate();
        let office = key.office_key();
        let fingerprint = office.fingerprint();
        let (reception, back) = (
            Pc {
                id: "aa01".into(),
                name: "RECEPTIE".into(),
            },
            Pc {
                id: "bb02".into(),
                name: "ACHTER".into(),
            },
        );
        let bakker = klant("Bakker");
        let older = note(bakker.clone(), vec![copy("Bakker/1.zip", 1)]);
        let newer = note(
            bakker.clone(),
            vec![
                copy("Bakker/1.zip", 1),
                copy("Bakker/2.zip", 2),
                copy("Bakker/3.zip", 3),
            ],
        );
        let vouch = key.vouch_key();
        let sealed = |c: &Catalog| seal(c, &office, &vouch).unwrap();
        let mut damaged = sealed(&catalog(&reception, 3, &fingerprint, vec![newer.clone()]));
        let at = damaged.len() - 20;
        damaged[at] ^= 1;
        let catalogs = vec![
            Stored {
                location: layout::catalog("aa01", 1),
                bytes: sealed(&catalog(&reception, 1, &fingerprint, vec![older])),
            },
            Stored {
                location: layout::catalog("aa01", 2),
                bytes: sealed(&catalog(&reception, 2, &fingerprint, vec![newer])),
            },
            Stored {
                location: layout::catalog("aa01", 3),
                bytes: damaged,
            },
            Stored {
                location: layout::catalog("bb02", 1),
                bytes: sealed(&catalog(
                    &back,
                    1,
                    &fingerprint,
                    vec![note(klant("Visser"), vec![copy("Visser/1.zip", 5)])],
                )),
            },
            Stored {
                location: layout::catalog("cc03", 1),
                bytes: seal(
                    &catalog(&back, 1, "other", vec![]),
                    &RecoveryKey::generate().office_key(),
                    &vouch,
                )
                .unwrap(),
            },
            // Catalog 1 of RECEPTIE copied in as ACHTER's number 7.
            Stored {
                location: layout::catalog("bb02", 7),
                bytes: sealed(&catalog(&reception, 1, &fingerprint, vec![])),
            },
            // Sealed to the office key (it is on the target) by someone without its vouch key.
            Stored {
                location: layout::catalog("bb02", 9),
                bytes: seal(
                    &catalog(&back, 9, &fingerprint, vec![]),
                    &office,
                    &RecoveryKey::generate().vouch_key(),
                )
                .unwrap(),
            },
        ];
        let record = |copy: CopyNote, klant: &Klant| CopyRecord {
            kluis_copy_record: RECORD_FORMAT,
            office: fingerprint.clone(),
            pc: reception.clone(),
            klant: klant.clone(),
            encrypted: Encrypted::No,
            copy,
        };
        let mut lying = copy("Bakker/2.zip", 2);
        lying.sha256 = "cd".repeat(32);
        let records = vec![
            Stored {
                location: layout::record("Bakker/1.zip"),
                bytes: seal(&record(copy("Bakker/1.zip", 1), &bakker), &office, &vouch).unwrap(),
            },
            Stored {
                location: layout::record("Bakker/2.zip"),
                bytes: seal(&record(lying, &bakker), &office, &vouch).unwrap(),
            },
            Stored {
                location: layout::record("Jansen/9.zip"),
                bytes: seal(
                    &record(copy("Jansen/9.zip", 9), &klant("Jansen")),
                    &office,
                    &vouch,
                )
                .unwrap(),
            },
        ];
        let present = vec![
            Present {
                location: "Bakker/1.zip".into(),
                bytes: 100,
            },
            Present {
                location: "Onbekend/owner backup (7).zip".into(),
                bytes: 4242,
            },
            Present {
                location: layout::OFFICE_KEY.into(),
                bytes: 80,
            },
        ];
        let listing = gather(catalogs, records, present, &key);
        let proof = |at: &str| {
            listing
                .backups
                .iter()
                .find(|b| b.copy.location == at)
                .map(|b| b.proof)
        };
        assert_eq!(proof("Bakker/1.zip"), Some(Proof::CatalogAndRecord));
        assert_eq!(
            proof("Bakker/2.zip"),
            Some(Proof::InDoubt),
            "the record says another SHA-256"
        );
        assert_eq!(proof("Bakker/3.zip"), Some(Proof::Catalog));
        assert_eq!(proof("Jansen/9.zip"), Some(Proof::Record));
        assert_eq!(
            proof("Visser/1.zip"),
            Some(Proof::Catalog),
            "the other computer's"
        );
        assert_eq!(
            proof("Onbekend/owner backup (7).zip"),
            Some(Proof::Unverified)
        );
        assert_eq!(
            listing.backups.len(),
            6,
            "recovery's own objects are no backups"
        );
        let used: Vec<(String, u64)> = listing
            .catalogs
            .iter()
            .map(|(pc, n, _)| (pc.name.clone(), *n))
            .collect();
        assert_eq!(
            used,
            [("RECEPTIE".to_string(), 2), ("ACHTER".to_string(), 1)]
        );
        let said = listing.problems.join("\n");
        assert!(
            said.contains("000000000003.age is not used: it was changed"),
            "{said}"
        );
        assert!(said.contains("another recovery key"), "{said}");
        assert!(
            said.contains("000000000007.age is not used: it is catalog 1 of computer RECEPTIE, put in another place"),
            "{said}"
        );
        assert!(
            said.contains("000000000009.age is not used: no computer of this office wrote it"),
            "{said}"
        );
        let bakkers: Vec<i64> = (listing.backups.iter())
            .filter(|b| b.klant.as_ref().is_some_and(|k| k.name == "Bakker"))
            .map(|b| b.copy.saved_ms)
            .collect();
        assert_eq!(bakkers, [3, 2, 1], "newest first");
    }
}
