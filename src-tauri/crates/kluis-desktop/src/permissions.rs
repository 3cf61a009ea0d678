//! Which of the endpoints Kluis uses a profile's api key allows: from the service's OpenAPI
//! description (filtered by api key) when its URL is configured, otherwise learnt from the
//! service's answers (an answer: allowed; a 403: denied).

use serde::Serialize;
use serde_json::Value;

pub use kluis_profiles::Endpoint;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    Allowed,
    Denied,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PermissionSource {
    /// From the service's published description for this key.
    Openapi,
    /// From 403 answers seen so far.
    Learnt,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Permissions {
    pub source: PermissionSource,
    pub environment: Access,
    pub backup_owner: Access,
    pub webhook: Access,
}

impl Permissions {
    fn from_fn(source: PermissionSource, access: impl Fn(Endpoint) -> Access) -> Self {
        Permissions {
            source,
            environment: access(Endpoint::Environment),
            backup_owner: access(Endpoint::BackupOwner),
            webhook: access(Endpoint::Webhook),
        }
    }

    /// From an OpenAPI (or Swagger 2) document: an endpoint is allowed when its path is listed
    /// (with or without the base URL's path prefix in front).
    pub fn from_openapi(document: &Value) -> Option<Self> {
        let paths = document.get("paths")?.as_object()?;
        Some(Self::from_fn(PermissionSource::Openapi, |endpoint| {
            if paths
                .keys()
                .any(|p| p.trim_end_matches('/').ends_with(endpoint.path()))
            {
                Access::Allowed
            } else {
                Access::Denied
            }
        }))
    }

    /// From the service's answers seen so far: refused (403) ones denied, answered ones
    /// allowed, the rest unknown.
    pub fn learnt(denied: &[Endpoint], allowed: &[Endpoint]) -> Self {
        Self::from_fn(PermissionSource::Learnt, |e| {
            if denied.contains(&e) {
                Access::Denied
            } else if allowed.contains(&e) {
                Access::Allowed
            } else {
                Access::Unknown
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any JSON the OpenAPI address answers (capped at 1 MiB when read) gives a verdict or
    /// none, never a panic. The long run: `cargo test --release -p kluis-desktop -- --ignored
    /// fuzz`.
    fn fuzz_openapi(cases: u32) {
        use proptest::prelude::*;
        let document = prop_oneof![
            proptest::string::string_regex(
                r#"\{"paths": ?(\{("[^"]{0,24}": ?(\{\}|null|1|\[\]),?){0,5}\}|\[\]|null|"x")\}"#
            )
            .unwrap(),
            any::<String>(),
        ];
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases,
            failure_persistence: None,
            ..Default::default()
        });
        runner
            .run(&document, |text| {
                if let Ok(value) = serde_json::from_str::<Value>(&text) {
                    if let Some(p) = Permissions::from_openapi(&value) {
                        prop_assert_eq!(p.source, PermissionSource::Openapi);
                    }
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn fuzz_openapi_documents() {
        fuzz_openapi(512);
    }

    #[test]
    #[ignore = "long run: cargo test --release -p kluis-desktop -- --ignored fuzz"]
    fn fuzz_openapi_documents_long() {
        fuzz_openapi(100_000);
    }

    /// Paths are matched with or without the base path prefix.
    #[test]
    fn reads_openapi_paths() {
        let doc = serde_json::json!({ "paths": { "/webservice_v2/util/environment": {}, "/authenticate": {} } });
        let p = Permissions::from_openapi(&doc).unwrap();
        assert_eq!(
            (p.environment, p.backup_owner, p.webhook),
            (Access::Allowed, Access::Denied, Access::Denied)
        );
        assert!(Permissions::from_openapi(&serde_json::json!({"no": "paths"})).is_none());
    }
}
