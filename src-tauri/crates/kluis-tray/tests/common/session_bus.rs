// A private D-Bus session bus for one test, ended with it: shared by kluis-tray's tests and the
// window's single-instance tests (src-tauri/src/instance.rs includes this file).

/// A `dbus-daemon --session` of the test's own, and its address.
pub struct SessionBus {
    daemon: std::process::Child,
    pub address: String,
}

impl SessionBus {
    /// Starts one (Debian's dbus package); nothing uses it until given its address.
    pub fn start() -> SessionBus {
        use std::io::BufRead;
        let mut daemon = std::process::Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("dbus-daemon (Debian's dbus package) runs");
        let mut address = String::new();
        let stdout = daemon.stdout.take().expect("piped");
        std::io::BufReader::new(stdout)
            .read_line(&mut address)
            .unwrap();
        SessionBus {
            daemon,
            address: address.trim().to_string(),
        }
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
