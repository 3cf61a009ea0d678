//! [`Secret`]: a string that never shows itself in `Debug` or `Display`, and that the
//! [scrubber](kluis_private::scrub) removes from every message while it lives.

/// An api_key, password, token, relay secret or webhook id. Formatting it prints a
/// placeholder, so a secret cannot slip into a log line or an error message by accident;
/// [`Secret::expose`] is the one deliberate way out (used only to build requests). Creating
/// one registers its value with the scrubber, so a server that echoes it back (an error page
/// quoting the request) cannot carry it into a message either.
#[derive(Clone)]
pub struct Secret {
    value: String,
    _scrubbed: kluis_private::scrub::Registered,
}

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        let _scrubbed = kluis_private::scrub::register(&value);
        Secret { value, _scrubbed }
    }

    pub fn expose(&self) -> &str {
        &self.value
    }

    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl Eq for Secret {}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(«hidden»)")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("«hidden»")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret::new(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Neither formatter reveals the value.
    #[test]
    fn formatting_hides_the_value() {
        let s = Secret::new("hunter2");
        assert!(!format!("{s:?} {s}").contains("hunter2"));
        assert_eq!(s.expose(), "hunter2");
    }

    /// While a secret lives, the scrubber removes it from any text.
    #[test]
    fn a_live_secret_is_scrubbed() {
        let s = Secret::new("correct horse battery");
        let echoed = "bad request: password=correct+horse+battery";
        assert_eq!(
            kluis_private::scrub::scrub(echoed),
            "bad request: password=«hidden»"
        );
        drop(s);
    }
}
