//! A test server started on a free port of loopback, and started again on another when the
//! port was taken first: a free port is learnt by binding it and letting it go, so another
//! program (another test's server) may take it in between — then the server ends before it
//! listens. Shared by the S3 (moto) and SFTP (OpenSSH) test servers.

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, Command};

/// Its standard error, read on from after the line that said it listens.
pub type Said = Lines<BufReader<ChildStderr>>;

/// `what`, spawned by `command(port)` (its standard error piped) on a free port, until a line
/// of its standard error holds `ready`; tried five times, then a panic with all it said.
pub async fn on_a_free_port(
    what: &str,
    ready: &str,
    mut command: impl FnMut(u16) -> Command,
) -> (Child, u16, Said) {
    let mut said = Vec::new();
    for _ in 0..5 {
        let port = free_port();
        let mut child = command(port)
            .spawn()
            .unwrap_or_else(|e| panic!("{what} starts: {e}"));
        let mut lines =
            BufReader::new(child.stderr.take().expect("its standard error piped")).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains(ready) {
                return (child, port, lines);
            }
            said.push(line);
        }
    }
    panic!(
        "{what} ended before it listened, five times: {}",
        said.join("\n")
    );
}

/// A port nothing listens on now (the server takes it at once).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
