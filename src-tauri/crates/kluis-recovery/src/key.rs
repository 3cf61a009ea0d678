//! The office's recovery key: [`RecoveryKey`], the private half (an age X25519 identity) that
//! only the recovery kit holds — never this computer, so that a thief of the computer does not
//! get it — and [`OfficeKey`], its public half, which the computer keeps and writes to each copy
//! target, and to which every catalog and copy record is sealed.
//!
//! Sealing to the public half says nothing of who wrote a document: the public half is on
//! every target, for anyone who can write there to seal a forged catalog to. So each document
//! also carries a tag under the [`VouchKey`], derived from the recovery key (the kit alone
//! checks it on a new computer) and kept by each computer that writes catalogs in its keyring
//! — never on the target.
//!
//! The private half is shown two ways: as age's own text (`AGE-SECRET-KEY-1…`, which the `age`
//! tool takes too), and as 24 words (BIP-39's English list, with its checksum) to type from a
//! printed kit without a typo going unnoticed. Either is read back.

use std::str::FromStr;

use hmac::Mac;
use kluis_core::{Error, Result, Secret};
use sha2::{Digest, Sha256};

/// See the module's text. Never written to disk by Kluis unless asked (`--key-file`).
pub struct RecoveryKey(age::x25519::Identity);

/// See the module's text.
#[derive(Clone)]
pub struct OfficeKey(age::x25519::Recipient);

impl std::fmt::Debug for RecoveryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecoveryKey(for {})", self.office_key().fingerprint())
    }
}

impl std::fmt::Debug for OfficeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OfficeKey({})", self.fingerprint())
    }
}

/// The human-readable part of age's secret key text.
const SECRET_HRP: &str = "age-secret-key-";

fn not_a_key() -> Error {
    Error::Config(
        "That is not an office recovery key: give the AGE-SECRET-KEY-1… line of the recovery kit, its 24 words, or the kit's key file.".into(),
    )
}

impl RecoveryKey {
    /// A new key, from the operating system's randomness.
    pub fn generate() -> RecoveryKey {
        RecoveryKey(age::x25519::Identity::generate())
    }

    /// The public half.
    pub fn office_key(&self) -> OfficeKey {
        OfficeKey(self.0.to_public())
    }

    pub(crate) fn identity(&self) -> &age::x25519::Identity {
        &self.0
    }

    /// As age writes it: `AGE-SECRET-KEY-1…`.
    pub fn to_text(&self) -> Secret {
        use age::secrecy::ExposeSecret;
        Secret::new(self.0.to_string().expose_secret().to_string())
    }

    /// As 24 words (BIP-39, English), separated by spaces.
    pub fn to_words(&self) -> Secret {
        let bytes = self.secret_bytes();
        let words = bip39::Mnemonic::from_entropy(&bytes).expect("32 bytes are 24 words");
        Secret::new(words.to_string())
    }

    /// The key that vouches for the catalogs and records this office's computers write:
    /// HMAC-SHA256 of a fixed label under the key's secret bytes (one-way: the vouch key does
    /// not give the recovery key back).
    pub fn vouch_key(&self) -> VouchKey {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.secret_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"kluis recovery vouch key v1");
        VouchKey(mac.finalize().into_bytes().into())
    }

    /// The identity's 32 secret bytes.
    fn secret_bytes(&self) -> [u8; 32] {
        use age::secrecy::ExposeSecret;
        let text = self.0.to_string();
        let (_, data) = bech32::decode(text.expose_secret()).expect("age writes valid bech32");
        data.try_into().expect("an X25519 key is 32 bytes")
    }

    /// The key in `text`: age's line (`AGE-SECRET-KEY-1…`, anywhere in it — a kit file, a
    /// paste with other lines), or its 24 words (case and extra spaces aside). A typo is
    /// refused by the checksum age's text and the words carry (the words' misses one typo in
    /// 256: a key mistyped so opens no catalog, and recovery says that it is another key).
    pub fn parse(text: &str) -> Result<RecoveryKey> {
        let line = (text.lines())
            .map(str::trim)
            .find(|l| l.to_ascii_uppercase().starts_with("AGE-SECRET-KEY-1"));
        if let Some(line) = line {
            let upper = line
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            return age::x25519::Identity::from_str(&upper)
                .map(RecoveryKey)
                .map_err(|_| not_a_key());
        }
        let words: Vec<String> = (text.split_whitespace())
            .map(|w| w.trim_matches(|c: char| !c.is_alphabetic()).to_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        match words.len() {
            24 => {}
            n @ 12..=36 => {
                return Err(Error::Config(format!(
                    "Found {n} words; the recovery key is 24: check them against the recovery kit."
                )))
            }
            _ => return Err(not_a_key()),
        }
        let mnemonic = bip39::Mnemonic::parse_in_normalized(bip39::Language::English, &words.join(" "))
            .map_err(|e| match e {
                bip39::Error::InvalidChecksum => Error::Config(
                    "The 24 words do not add up (a word mistyped, or two swapped): check them against the recovery kit.".into(),
                ),
                bip39::Error::UnknownWord(n) => Error::Config(format!(
                    "Word {} of the 24 is not one of the kit's words: check it against the recovery kit.",
                    n + 1
                )),
                _ => not_a_key(),
            })?;
        let bytes = mnemonic.to_entropy();
        let hrp = bech32::Hrp::parse(SECRET_HRP).expect("a valid prefix");
        let text = bech32::encode::<bech32::Bech32>(hrp, &bytes).map_err(|_| not_a_key())?;
        age::x25519::Identity::from_str(&text.to_ascii_uppercase())
            .map(RecoveryKey)
            .map_err(|_| not_a_key())
    }
}

impl OfficeKey {
    /// The public key in `text` (`age1…`, the first such word in it).
    pub fn parse(text: &str) -> Result<OfficeKey> {
        let word = (text.split_whitespace())
            .find(|w| w.starts_with("age1"))
            .ok_or_else(|| Error::Config("No office key (age1…) in that text.".into()))?;
        age::x25519::Recipient::from_str(word)
            .map(OfficeKey)
            .map_err(|_| Error::Config("The office key (age1…) is damaged.".into()))
    }

    /// As age writes it: `age1…`.
    pub fn to_text(&self) -> String {
        self.0.to_string()
    }

    pub(crate) fn recipient(&self) -> &age::x25519::Recipient {
        &self.0
    }

    /// What a person compares with the kit: `KLUIS-` and 16 hexadecimal digits in four groups,
    /// from the SHA-256 of the public key.
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.to_text().as_bytes());
        let hex = hex::encode_upper(&digest[..8]);
        format!(
            "KLUIS-{}-{}-{}-{}",
            &hex[0..4],
            &hex[4..8],
            &hex[8..12],
            &hex[12..16]
        )
    }
}

type HmacSha256 = hmac::Hmac<Sha256>;

/// See the module's text: what tags each catalog and record as written by this office's
/// computers. A secret (whoever holds it can forge a catalog the kit takes).
#[derive(Clone)]
pub struct VouchKey([u8; 32]);

impl std::fmt::Debug for VouchKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("VouchKey(«hidden»)")
    }
}

impl VouchKey {
    /// As the keyring keeps it: 64 hexadecimal digits.
    pub fn to_text(&self) -> Secret {
        Secret::new(hex::encode(self.0))
    }

    pub fn parse(text: &str) -> Result<VouchKey> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text.trim(), &mut bytes).map_err(|_| {
            Error::Config(
                "This computer's recovery vouch key is damaged: make a new recovery kit (kluis recovery-kit).".into(),
            )
        })?;
        Ok(VouchKey(bytes))
    }

    /// The tag of `bytes`.
    pub(crate) fn tag(&self, bytes: &[u8]) -> [u8; 32] {
        self.mac(bytes).finalize().into_bytes().into()
    }

    /// Whether `tag` is the tag of `bytes` (compared in constant time).
    pub(crate) fn vouches(&self, bytes: &[u8], tag: &[u8]) -> bool {
        self.mac(bytes).verify_slice(tag).is_ok()
    }

    fn mac(&self, bytes: &[u8]) -> HmacSha256 {
        let mut mac =
            <HmacSha256 as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(bytes);
        mac
    }
}

impl PartialEq for OfficeKey {
    fn eq(&self, other: &OfficeKey) -> bool {
        self.to_text() == other.to_text()
    }
}

impl Eq for OfficeKey {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key is read back from age's text (also inside a kit's other lines, in lower case)
    /// and from its 24 words (however they are spaced or cased); the public half and its
    /// fingerprint follow; a mistyped word or line, or a word left out, is refused with what to
    /// check; the words as the kit numbers them are read too.
    #[test]
    fn a_key_reads_back_from_its_text_and_its_words() {
        // A key of known bytes, so that the typos below are the same every run.
        let known = bip39::Mnemonic::from_entropy(&(1u8..=32).collect::<Vec<u8>>()).unwrap();
        let key = RecoveryKey::parse(&known.to_string()).unwrap();
        let office = key.office_key();
        let text = key.to_text();
        let words = key.to_words();
        assert_eq!(words.expose(), known.to_string(), "the same 24 words back");
        assert_eq!(words.expose().split(' ').count(), 24);
        let kit = format!(
            "Kluis recovery kit\nOffice key: {}\n\n  {}  \n",
            office.to_text(),
            text.expose().to_lowercase()
        );
        for given in [
            text.expose().to_string(),
            kit,
            words.expose().to_string(),
            format!("  {}\n", words.expose().to_uppercase().replace(' ', "\n ")),
        ] {
            let read = RecoveryKey::parse(&given).unwrap();
            assert_eq!(read.office_key(), office, "{given}");
        }
        assert!(office.fingerprint().starts_with("KLUIS-") && office.fingerprint().len() == 25);
        assert_eq!(OfficeKey::parse(&office.to_text()).unwrap(), office);

        let mut typo: Vec<&str> = words.expose().split(' ').collect();
        typo.swap(3, 4);
        let refused = RecoveryKey::parse(&typo.join(" ")).unwrap_err();
        assert!(refused.to_string().contains("do not add up"), "{refused}");
        typo[7] = "kluisje";
        let refused = RecoveryKey::parse(&typo.join(" ")).unwrap_err();
        assert!(refused.to_string().contains("Word 8"), "{refused}");
        let mut line = text.expose().to_string();
        line.replace_range(20..21, if &line[20..21] == "Q" { "P" } else { "Q" });
        assert!(RecoveryKey::parse(&line).is_err(), "a changed character");
        assert!(RecoveryKey::parse("not a key at all").is_err());
        let all: Vec<&str> = words.expose().split(' ').collect();
        let missing = RecoveryKey::parse(&all[..23].join(" ")).unwrap_err();
        assert!(missing.to_string().contains("Found 23 words"), "{missing}");
        // Typed as the kit numbers them, four to a line.
        let numbered: String = (all.iter().enumerate())
            .map(|(i, w)| {
                format!(
                    "{:>2}. {w:<10}{}",
                    i + 1,
                    if i % 4 == 3 { "\n" } else { "  " }
                )
            })
            .collect();
        assert_eq!(RecoveryKey::parse(&numbered).unwrap().office_key(), office);
    }

    /// What is printed of a key never shows its private half.
    #[test]
    fn a_key_is_never_printed() {
        let key = RecoveryKey::generate();
        let shown = format!("{key:?}");
        assert!(!shown.contains("AGE-SECRET-KEY"), "{shown}");
        assert!(shown.contains(&key.office_key().fingerprint()));
    }
}
