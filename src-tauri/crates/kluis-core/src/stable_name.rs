//! [`stable_names!`]: for enums whose values travel and are stored by a stable name
//! ([`crate::Stage`], [`crate::Code`], the app's codes): `Display` as that name (honouring
//! widths such as `{:<8}`) and comparison with it (`entry.stage == "saved"`).

/// Implements `Display`, `PartialEq<str>` and `PartialEq<&str>` through the type's
/// `as_str(self) -> &'static str`.
#[macro_export]
macro_rules! stable_names {
    ($($ty:ty),+ $(,)?) => {$(
        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl ::std::cmp::PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl ::std::cmp::PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    )+};
}

#[cfg(test)]
mod tests {
    use crate::{Code, Stage};

    /// Each value has one name everywhere — as the history stores it, in JSON (the UI,
    /// `--json`) and printed — and reads back from it; names are exact.
    fn one_name_everywhere<T>(
        all: &[T],
        as_str: fn(T) -> &'static str,
        parse: fn(&str) -> Option<T>,
    ) where
        T: Copy + std::fmt::Debug + PartialEq + std::fmt::Display + serde::Serialize,
        T: serde::de::DeserializeOwned,
    {
        for &value in all {
            let name = as_str(value);
            assert_eq!(serde_json::to_value(value).unwrap(), name);
            assert_eq!(serde_json::from_value::<T>(name.into()).unwrap(), value);
            assert_eq!(value.to_string(), name);
            assert_eq!(parse(name), Some(value));
            assert_eq!(parse(&name.to_uppercase()), None);
        }
    }

    #[test]
    fn stages_have_one_name_everywhere() {
        one_name_everywhere(&Stage::ALL, Stage::as_str, Stage::parse);
    }

    #[test]
    fn codes_have_one_name_everywhere() {
        one_name_everywhere(&Code::ALL, Code::as_str, Code::parse);
    }

    #[test]
    fn findings_have_one_name_everywhere() {
        use crate::verify::Finding;
        one_name_everywhere(&Finding::ALL, Finding::as_str, Finding::parse);
    }
}
