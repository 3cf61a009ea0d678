//! Tenant keys: what an office's Kluis presents as `Authorization: Bearer klr_<id>_<secret>`.
//!
//! A key is made once, printed once and stored only as the SHA-256 of its secret part. The id
//! part finds the stored row (an index lookup that reveals nothing about the secret); the
//! secret's hash is then compared in constant time. The secret carries 244 random bits, so a
//! plain hash is enough: there is no password to brute-force.

use sha2::{Digest, Sha256};

use crate::key_directory::KeyDirectory;
use crate::storage::{now_ms, Quota, Storage, StoreError, StoredKey, SHARED_TENANT};

const PREFIX: &str = "klr_";

/// A freshly made key: `text` is shown to the operator once; the rest is stored.
pub struct NewKey {
    pub id: String,
    pub hash: [u8; 32],
    pub text: String,
}

impl std::fmt::Debug for NewKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NewKey({})", self.id)
    }
}

pub fn new_key() -> NewKey {
    let id = uuid::Uuid::new_v4().simple().to_string()[..16].to_string();
    let secret = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    NewKey {
        hash: hash(&secret),
        text: format!("{PREFIX}{id}_{secret}"),
        id,
    }
}

fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// `(id, secret)` of something shaped like a tenant key.
pub fn parse(text: &str) -> Option<(&str, &str)> {
    let (id, secret) = text.strip_prefix(PREFIX)?.split_once('_')?;
    (!id.is_empty() && id.len() <= 64 && !secret.is_empty()).then_some((id, secret))
}

/// Secrets compared in constant time (`constant_time.rs`, a leaf the stores share too).
pub use crate::constant_time::constant_time_eq;

/// Who a request acts for.
#[derive(Debug, Clone, PartialEq)]
pub struct Tenant {
    pub name: String,
    pub quota: Quota,
    /// The office PC asking, when the key is a PC's (the office hub's calls need one).
    pub pc: Option<String>,
}

impl Tenant {
    pub fn shared() -> Self {
        Tenant {
            name: SHARED_TENANT.into(),
            quota: Quota::UNLIMITED,
            pc: None,
        }
    }
}

/// The tenant whose key `text` is, if it is one that works now.
pub async fn authenticate(
    keys: &KeyDirectory,
    store: &dyn Storage,
    text: &str,
) -> Result<Option<Tenant>, StoreError> {
    let Some((id, secret)) = parse(text) else {
        return Ok(None);
    };
    let Some(StoredKey {
        tenant,
        hash: stored,
        expires_ms,
        revoked,
        quota,
        pc,
    }) = keys.key(store, id).await?
    else {
        return Ok(None);
    };
    let matches = constant_time_eq(&hash(secret), &stored);
    let live = !revoked && expires_ms.is_none_or(|end| end > now_ms());
    Ok((matches && live).then_some(Tenant {
        name: tenant,
        quota,
        pc,
    }))
}

/// Why a tenant name is refused: names show in logs, metrics and `tenant list`.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = (1..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        && name.as_bytes()[0].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{name}' is not a tenant name: use 1 to 63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block;
    use crate::storage::sqlite::SqliteStore;

    /// A key works for its tenant; a changed secret, an unknown id or a revoked tenant does not;
    /// after a rotation both keys work until the overlap ends, then only the new one.
    #[test]
    fn keys_authenticate_their_tenant_until_rotated_or_revoked() {
        block(async {
            let store = SqliteStore::in_memory().unwrap();
            let fresh = KeyDirectory::new(std::time::Duration::ZERO, kluis_https::Clock::system());
            let quota = Quota {
                max_inboxes: Some(3),
                ..Quota::UNLIMITED
            };
            let first = new_key();
            assert!(store
                .add_tenant("acme", quota, &first.id, first.hash)
                .await
                .unwrap());
            assert!(
                !store
                    .add_tenant("acme", quota, &first.id, first.hash)
                    .await
                    .unwrap(),
                "a name is taken once"
            );
            let found = authenticate(&fresh, &store, &first.text)
                .await
                .unwrap()
                .unwrap();
            assert_eq!((found.name.as_str(), found.quota), ("acme", quota));
            let mut forged = first.text.clone();
            forged.pop();
            forged.push('x');
            assert_eq!(authenticate(&fresh, &store, &forged).await.unwrap(), None);
            assert_eq!(
                authenticate(&fresh, &store, "klr_nope_nope").await.unwrap(),
                None
            );
            assert_eq!(
                authenticate(&fresh, &store, "not a key").await.unwrap(),
                None
            );

            let second = new_key();
            let overlap_end = now_ms() + 60_000;
            assert!(store
                .rotate_key("acme", &second.id, second.hash, overlap_end)
                .await
                .unwrap());
            assert!(
                authenticate(&fresh, &store, &first.text)
                    .await
                    .unwrap()
                    .is_some(),
                "old key in the overlap"
            );
            assert!(authenticate(&fresh, &store, &second.text)
                .await
                .unwrap()
                .is_some());
            let third = new_key();
            assert!(store
                .rotate_key("acme", &third.id, third.hash, now_ms() - 1)
                .await
                .unwrap());
            assert_eq!(
                authenticate(&fresh, &store, &first.text).await.unwrap(),
                None,
                "overlap ended"
            );
            assert_eq!(
                authenticate(&fresh, &store, &second.text).await.unwrap(),
                None
            );
            assert!(authenticate(&fresh, &store, &third.text)
                .await
                .unwrap()
                .is_some());

            assert!(store.revoke_tenant("acme").await.unwrap());
            assert_eq!(
                authenticate(&fresh, &store, &third.text).await.unwrap(),
                None,
                "revoked"
            );
            assert!(
                !store.revoke_tenant(SHARED_TENANT).await.unwrap(),
                "the shared secret is no tenant to revoke"
            );
        })
    }

    /// Names are short, lowercase and printable; the shared tenant's '*' is not one.
    #[test]
    fn tenant_names_are_checked() {
        assert!(check_name("office-12.nl").is_ok());
        for bad in ["", "*", "Acme", "-x", "a b", "a/b", &"a".repeat(64)] {
            assert!(check_name(bad).is_err(), "{bad:?} refused");
        }
    }
}
