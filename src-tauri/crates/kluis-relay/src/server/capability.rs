//! An inbox's callback path `/cb/<inbox>/<token>`, checked without the database where it can
//! be.
//!
//! Whoever can reach the relay can send it callback paths by the thousand; each used to cost a
//! write transaction before the relay knew it was junk. Now:
//! - a path whose inbox or token is not an id the relay makes (lowercase hex, 32 to 64
//!   characters — no NUL, no other byte PostgreSQL refuses) is junk before any query;
//! - the token of an inbox made by this version is an HMAC of the inbox id under the relay's
//!   callback key ([`token_for`], the key kept in the database and the same for every
//!   instance on it), so the relay tells a path it made ([`is_minted`]) from a guess without
//!   asking the database: only a path it made goes to the database without first spending the
//!   shared budget for junk, so a flood of junk never costs the real callback its answer.
//!
//! An inbox made before (a random token) still works: its callbacks spend the junk budget
//! first, as any path the relay cannot vouch for. Inboxes expire after 30 days unused, so
//! within a month every live inbox has a minted token.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::tenants::constant_time_eq;

/// How long a token is, in hex characters (160 bits).
const TOKEN_LEN: usize = 40;

/// Whether `text` could be an inbox id or token the relay made: lowercase hex, 32 to 64
/// characters.
pub fn is_id(text: &str) -> bool {
    (32..=64).contains(&text.len()) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The token of `inbox` under `key`.
pub fn token_for(key: &[u8; 32], inbox: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(inbox.as_bytes());
    let tag = hex::encode(mac.finalize().into_bytes());
    tag[..TOKEN_LEN].to_string()
}

/// Whether `token` is `inbox`'s token under `key` (compared in constant time).
pub fn is_minted(key: &[u8; 32], inbox: &str, token: &str) -> bool {
    constant_time_eq(token_for(key, inbox).as_bytes(), token.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token is the inbox's under one key only, an id is only what the relay makes, and a
    /// path with a NUL or an upper-case letter is no id.
    #[test]
    fn a_minted_token_is_told_from_a_guess() {
        let (key, other) = ([7; 32], [8; 32]);
        let inbox = "0123456789abcdef0123456789abcdef01234567";
        let token = token_for(&key, inbox);
        assert!(is_id(&token) && token.len() == TOKEN_LEN);
        assert!(is_minted(&key, inbox, &token));
        assert!(!is_minted(&other, inbox, &token), "another relay's key");
        assert!(
            !is_minted(&key, &inbox.replace('0', "1"), &token),
            "another inbox"
        );
        assert!(!is_minted(&key, inbox, &token[..39]));
        for junk in [
            "",
            "abc",
            "\0",
            &"A".repeat(40),
            &"g".repeat(40),
            &"a".repeat(65),
        ] {
            assert!(!is_id(junk), "{junk:?}");
        }
        assert!(is_id(inbox) && is_id(&"f".repeat(32)) && is_id(&"0".repeat(64)));
    }
}
