//! A Kluis started while another is on its way out (its window closed a moment ago, an update
//! restarting it) must start, not fail: the single-instance plugin would hand its arguments to
//! the leaving Kluis, get no answer, and end the start with an error. So before the plugin
//! runs, [`wait_while_leaving`] asks the Kluis that owns the bus name whether it is there
//! (a D-Bus ping); when it does not answer, the name is waited for until it is free (a few
//! seconds at most), and the start goes on as the one Kluis.

use std::time::{Duration, Instant};

/// What [`wait_while_leaving`] found.
#[derive(Debug, PartialEq, Eq)]
// (Only Linux has a leaving Kluis to wait for: elsewhere it is always `None`.)
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub enum Owner {
    /// No session bus, or no Kluis owns the name: this one starts as the one Kluis.
    None,
    /// A Kluis owns the name and answers: the plugin hands over to it.
    Answers,
    /// The owner answered nothing and let go of the name within the wait.
    Left,
    /// The owner neither answers nor lets go: the plugin decides (and says why it stops).
    Stuck,
}

/// How long a Kluis that no longer answers is given to let go of its name.
const LEAVING: Duration = Duration::from_secs(10);

/// See the module's text; `name` is the single-instance plugin's bus name.
pub fn wait_while_leaving(name: &str) -> Owner {
    #[cfg(target_os = "linux")]
    {
        linux::wait_while_leaving(name, LEAVING, || {
            tracing::info!("the Kluis that ran is leaving; waiting for it to end");
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        // Windows and macOS hand over through a mutex/socket the leaving process lets go of
        // as it ends: nothing to wait for.
        let _ = (name, LEAVING, Instant::now());
        Owner::None
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use zbus::blocking::{fdo::DBusProxy, Connection};
    use zbus::names::BusName;

    /// A Kluis that is there answers a ping at once; one that is leaving answers nothing
    /// (its connection is closing) or says so (NoReply).
    const PING: Duration = Duration::from_secs(2);

    /// The wait; `waiting` is called once the owner has not answered, before the wait.
    pub(super) fn wait_while_leaving(
        name: &str,
        leaving: Duration,
        waiting: impl FnOnce(),
    ) -> Owner {
        let Ok(bus_name) = BusName::try_from(name) else {
            return Owner::None;
        };
        let connection = zbus::blocking::connection::Builder::session()
            .and_then(|b| b.method_timeout(PING).build());
        let Ok(connection) = connection else {
            return Owner::None;
        };
        let Ok(bus) = DBusProxy::new(&connection) else {
            return Owner::None;
        };
        if !bus.name_has_owner(bus_name.clone()).unwrap_or(false) {
            return Owner::None;
        }
        if answers(&connection, name) {
            return Owner::Answers;
        }
        waiting();
        let since = Instant::now();
        while since.elapsed() < leaving {
            if !bus.name_has_owner(bus_name.clone()).unwrap_or(false) {
                return Owner::Left;
            }
            // The bus tells no one when a name is let go of without a signal subscription;
            // a leaving process ends within moments, so a short look again is enough.
            std::thread::sleep(Duration::from_millis(50));
        }
        Owner::Stuck
    }

    /// Whether the owner of `name` answers a ping at the object the plugin serves (any
    /// answer, even an error, is an answer).
    fn answers(connection: &Connection, name: &str) -> bool {
        let reply = connection.call_method(
            Some(name),
            object_path(name).as_str(),
            Some("org.freedesktop.DBus.Peer"),
            "Ping",
            &(),
        );
        match reply {
            Ok(_) => true,
            Err(zbus::Error::MethodError(error, _, _)) => {
                !error.as_str().ends_with(".NoReply")
                    && !error.as_str().ends_with(".ServiceUnknown")
            }
            Err(_) => false,
        }
    }

    /// The object the single-instance plugin serves for `name` (its own rule).
    pub(super) fn object_path(name: &str) -> String {
        format!("/{}", name.replace('.', "/").replace('-', "_"))
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};

        include!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/crates/kluis-tray/tests/common/session_bus.rs"
        ));

        /// A connection of its own to `bus`.
        fn connect(bus: &SessionBus) -> Connection {
            zbus::blocking::connection::Builder::address(bus.address.as_str())
                .unwrap()
                .build()
                .unwrap()
        }

        const NAME: &str = "nl.kluis.test.SingleInstance";
        /// The single-instance plugin's interface, served by a Kluis that runs.
        struct Handover;

        #[zbus::interface(name = "org.SingleInstance.DBus")]
        impl Handover {
            fn execute_callback(&mut self, _argv: Vec<String>, _cwd: String) {}
        }

        /// The helper's environment variable: the name it owns.
        const OWNER: &str = "KLUIS_TEST_OWN_BUS_NAME";

        /// Not a test: the process [`a_leaving_kluis_is_waited_for_and_a_running_one_answers`]
        /// starts to own the name (and stops); does nothing when run by itself.
        #[test]
        #[ignore = "a helper process of another test"]
        fn owner_of_the_name() {
            let Ok(name) = std::env::var(OWNER) else {
                return;
            };
            let connection = zbus::blocking::connection::Builder::session()
                .unwrap()
                .build()
                .unwrap();
            connection.request_name(name).unwrap();
            println!("owned");
            loop {
                std::thread::park();
            }
        }

        /// Free, answering, leaving: each found as it is, and a leaving owner waited for
        /// until it has let go (never taken for a Kluis to hand over to). One test: the
        /// session bus address is the process's environment.
        #[test]
        fn a_leaving_kluis_is_waited_for_and_a_running_one_answers() {
            let bus = SessionBus::start();
            std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &bus.address);
            let wait = |leaving| wait_while_leaving(NAME, leaving, || ());
            assert_eq!(wait(LEAVING), Owner::None, "nobody owns the name");

            // As the plugin does: the name, and an object at its path.
            let running = connect(&bus);
            running.request_name(NAME).unwrap();
            (running.object_server().at(object_path(NAME), Handover)).unwrap();
            assert_eq!(
                wait(LEAVING),
                Owner::Answers,
                "a live owner answers its ping"
            );

            // A leaving Kluis: its name owned by a process that reads nothing any more
            // (stopped), so the ping gets no answer; it lets go of the name when it ends.
            drop(running);
            let mut owner = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "--ignored", "--nocapture"])
                .arg("instance::linux::tests::owner_of_the_name")
                .env(OWNER, NAME)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut lines = BufReader::new(owner.stdout.take().unwrap()).lines();
            let owned = lines.by_ref().map_while(Result::ok).any(|l| l == "owned");
            assert!(owned, "the helper owns the name");
            let pid = owner.id().to_string();
            assert!(Command::new("kill")
                .args(["-STOP", &pid])
                .status()
                .unwrap()
                .success());
            assert_eq!(
                wait(Duration::from_millis(300)),
                Owner::Stuck,
                "an owner that does not answer and does not leave is not handed over to"
            );
            let ends = || {
                let _ = owner.kill();
                let _ = owner.wait();
            };
            assert_eq!(
                wait_while_leaving(NAME, LEAVING, ends),
                Owner::Left,
                "an owner that ends while waited for is waited for"
            );
        }
    }
}
