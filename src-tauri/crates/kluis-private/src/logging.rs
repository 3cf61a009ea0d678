//! Logging set-up shared by Kluis's programs: `KLUIS_LOG` (an env-filter) to stderr, with the
//! HTTP and TLS libraries capped at `info` whatever `KLUIS_LOG` asks — at debug and trace they
//! print request lines and headers, which carry tokens, api keys and webhook ids. Every line
//! passes through the [`crate::scrub`]ber on its way to stderr, so a secret that slipped into a
//! field is still not written.

const LIBRARIES: [&str; 8] = [
    "hyper",
    "hyper_util",
    "reqwest",
    "rustls",
    "h2",
    "axum",
    "tower",
    "tokio_rustls",
];

/// The filter for `KLUIS_LOG`, or `default` when it is unset or invalid.
pub fn filter(default: &str) -> tracing_subscriber::EnvFilter {
    let mut filter =
        tracing_subscriber::EnvFilter::try_from_env("KLUIS_LOG").unwrap_or_else(|_| default.into());
    for library in LIBRARIES {
        if let Ok(directive) = format!("{library}=info").parse() {
            filter = filter.add_directive(directive);
        }
    }
    filter
}

/// Installs the subscriber (once per process).
pub fn init(default: &str) {
    let _ = tracing_subscriber::fmt()
        .with_writer(|| ScrubbedLine(Vec::new()))
        .with_env_filter(filter(default))
        .try_init();
}

/// Installs a subscriber writing one JSON object a line (for a log collector), scrubbed alike.
pub fn init_json(default: &str) {
    let _ = tracing_subscriber::fmt()
        .json()
        .with_writer(|| ScrubbedLine(Vec::new()))
        .with_env_filter(filter(default))
        .try_init();
}

/// One formatted event, scrubbed of secrets and written to stderr when it is complete.
struct ScrubbedLine(Vec<u8>);

impl std::io::Write for ScrubbedLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for ScrubbedLine {
    fn drop(&mut self) {
        let line = String::from_utf8_lossy(&self.0);
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            crate::scrub::scrub(&line).as_bytes(),
        );
    }
}

#[cfg(test)]
mod tests {
    /// Even `KLUIS_LOG=trace` leaves the HTTP and TLS libraries at info.
    #[test]
    fn http_libraries_are_capped() {
        std::env::set_var("KLUIS_LOG", "trace");
        let filter = super::filter("warn").to_string();
        assert!(filter.contains("trace"), "{filter}");
        for library in super::LIBRARIES {
            assert!(
                filter.contains(&format!("{library}=info")),
                "{library} not capped: {filter}"
            );
        }
    }
}
