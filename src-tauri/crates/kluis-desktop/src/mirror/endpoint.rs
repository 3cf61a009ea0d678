//! Where `kluis-tray` and a window meet, one per data folder, its user's alone:
//! - Unix: a socket beside the history (`tray.sock`), mode 0600 in an owner-only folder.
//! - Windows: a named pipe, `\\.\pipe\kluis-tray-<32 random hex digits>`, new at each start
//!   and published in `tray.pipe` beside the history (owner-only). Pipe names are one
//!   namespace for every account of the computer: a name nobody can guess cannot be taken
//!   first by another account, and the pipe is made owner-only (its default DACL lets every
//!   local account read it; a medium integrity label keeps the user's own sandboxed processes
//!   out) and the first of its name. A window or `--quit` talks to it only when it is owned by
//!   the same user.

use std::io;

use crate::AppPaths;

#[cfg(unix)]
pub use unix::*;
#[cfg(windows)]
pub use windows::*;

#[cfg(unix)]
mod unix {
    use super::*;
    use std::path::PathBuf;
    use tokio::net::{UnixListener, UnixStream};

    /// Where `kluis-tray` of a data folder listens.
    #[derive(Clone, Debug)]
    pub struct Address(PathBuf);

    /// The address for `paths`' data folder.
    pub fn address(paths: &AppPaths) -> Address {
        Address(paths.history_db.with_file_name("tray.sock"))
    }

    /// kluis-tray's side, listening.
    pub struct Listener(UnixListener);

    /// A window's connection, on kluis-tray's side.
    pub type Served = UnixStream;

    impl Listener {
        /// Listens at `address`, made anew (only the one `kluis-tray` of the folder serves
        /// it: a socket left by one that ended is replaced); only its owner may connect.
        pub fn bind(address: &Address) -> io::Result<Listener> {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::remove_file(&address.0);
            let listener = UnixListener::bind(&address.0)?;
            std::fs::set_permissions(&address.0, std::fs::Permissions::from_mode(0o600))?;
            Ok(Listener(listener))
        }

        pub async fn accept(&mut self) -> io::Result<Served> {
            Ok(self.0.accept().await?.0)
        }
    }

    /// Connects to the `kluis-tray` at `address`.
    pub async fn connect(address: &Address) -> io::Result<UnixStream> {
        UnixStream::connect(&address.0).await
    }
}

#[cfg(windows)]
mod windows {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    use kluis_private::files::{ObjectSecurity, OwnerOnlySecurity};
    use tokio::net::windows::named_pipe::{
        ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
    };
    use windows_sys::Win32::Foundation::ERROR_PIPE_BUSY;

    /// Every pipe of kluis-tray's is named so, then 32 random hex digits.
    const PIPE_PREFIX: &str = r"\\.\pipe\kluis-tray-";

    /// Where `kluis-tray` of a data folder says which pipe it listens on: `tray.pipe` beside
    /// the history, owner-only.
    #[derive(Clone, Debug)]
    pub struct Address {
        published: PathBuf,
    }

    /// The address for `paths`' data folder.
    pub fn address(paths: &AppPaths) -> Address {
        Address {
            published: paths.history_db.with_file_name("tray.pipe"),
        }
    }

    /// kluis-tray's side: the pipe's instance waiting for the next window, and how to make
    /// the one after it.
    pub struct Listener {
        pub(super) name: String,
        security: OwnerOnlySecurity,
        waiting: NamedPipeServer,
        /// Where the name was published (nowhere yet while it is being made).
        published: Option<PathBuf>,
    }

    impl Drop for Listener {
        /// The published name is taken back as kluis-tray leaves: a name left behind is one a
        /// sandboxed program could make a pipe of.
        fn drop(&mut self) {
            if let Some(published) = &self.published {
                if std::fs::read_to_string(published).is_ok_and(|name| name == self.name) {
                    let _ = std::fs::remove_file(published);
                }
            }
        }
    }

    /// A window's connection, on kluis-tray's side.
    pub type Served = NamedPipeServer;

    impl Listener {
        /// A new pipe, under a name nobody can guess (another account cannot take it first:
        /// pipe names are one namespace for the whole computer), then published at `address`
        /// for the user's windows.
        pub fn bind(address: &Address) -> io::Result<Listener> {
            let name = format!("{PIPE_PREFIX}{}", uuid::Uuid::new_v4().simple());
            let mut listener = Listener::make(name)?;
            kluis_private::files::write_atomic(&address.published, listener.name.as_bytes())?;
            listener.published = Some(address.published.clone());
            Ok(listener)
        }

        /// The pipe `name`: owner-only, and refused when the name is another's already.
        pub(super) fn make(name: String) -> io::Result<Listener> {
            let security = OwnerOnlySecurity::new()?;
            let waiting = instance(&name, &security, true)?;
            // Where the system lets a first instance join another's pipe of the name anyway
            // (Wine does), its owner tells: it is not served.
            if !ObjectSecurity::of(&waiting)?.owned_by_running_user()? {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "another account of this computer made kluis-tray's pipe first",
                ));
            }
            Ok(Listener {
                name,
                security,
                waiting,
                published: None,
            })
        }

        /// The next window's connection. A new instance waits for the one after it before
        /// this returns — also when this connection failed — so a window never finds the pipe
        /// gone in between, and a failed one leaves the listener as good as before.
        pub async fn accept(&mut self) -> io::Result<Served> {
            let connected = self.waiting.connect().await;
            let next = instance(&self.name, &self.security, false)?;
            let served = std::mem::replace(&mut self.waiting, next);
            connected.map(|()| served)
        }
    }

    fn instance(name: &str, security: &OwnerOnlySecurity, first: bool) -> io::Result<Served> {
        // SAFETY: the attributes are valid while `security` is, for the whole call.
        unsafe {
            ServerOptions::new()
                .first_pipe_instance(first)
                .reject_remote_clients(true)
                .create_with_security_attributes_raw(name, security.attributes())
        }
    }

    /// Connects to the pipe `kluis-tray` published at `address`, when it is the user's own.
    pub async fn connect(address: &Address) -> io::Result<NamedPipeClient> {
        let name = std::fs::read_to_string(&address.published)?;
        let hex = name.strip_prefix(PIPE_PREFIX).unwrap_or_default();
        if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "tray.pipe does not name a pipe of kluis-tray's",
            ));
        }
        // Every instance busy: only for the moment between a connection and the next instance
        // (see `accept`). Tried a few times, then left to the caller's next attempt.
        let mut busy = 0;
        let client = loop {
            // (Anonymous: the server learns nothing of this user's token.)
            match ClientOptions::new().security_qos_flags(0).open(&name) {
                Ok(client) => break client,
                Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) && busy < 20 => {
                    busy += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => return Err(e),
            }
        };
        let security = ObjectSecurity::of(&client)?;
        if !security.owned_by_running_user()? {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the pipe tray.pipe names belongs to another account of this computer; it is not used",
            ));
        }
        // (A sandboxed process of the user's may have made a pipe of a name it read, once
        // kluis-tray had gone: its pipe is labelled below medium; kluis-tray's is medium.)
        if security.below_medium_integrity() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the pipe tray.pipe names was made by a sandboxed program, not kluis-tray; it is not used",
            ));
        }
        Ok(client)
    }
}

#[cfg(all(test, windows))]
mod tests {
    use super::*;
    use tokio::net::windows::named_pipe::ClientOptions;

    /// kluis-tray's pipe as a window finds it: published in the data folder (owner-only),
    /// under a new unguessable name each time; a window's connection is the user's own; once
    /// one is handed out, an instance already waits for the next window (opened here without
    /// the busy retries, which would hide a gap).
    #[tokio::test]
    async fn each_window_finds_the_pipe_published_and_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let address = address(&AppPaths::under(dir.path()));
        let mut listener = Listener::bind(&address).unwrap();
        let name = std::fs::read_to_string(dir.path().join("tray.pipe")).unwrap();
        assert!(
            name.starts_with(r"\\.\pipe\kluis-tray-") && name.len() == 20 + 32,
            "{name}"
        );
        let accepting = tokio::spawn(async move { listener.accept().await.map(|_| listener) });
        let first = connect(&address).await.expect("a window reaches it");
        let _listener = accepting.await.unwrap().expect("accepted");
        let next = ClientOptions::new().open(&name);
        assert!(
            next.is_ok(),
            "an instance waits for the next window: {next:?}"
        );
        drop(first);

        let again = Listener::bind(&address).unwrap();
        let renamed = std::fs::read_to_string(dir.path().join("tray.pipe")).unwrap();
        assert_ne!(
            renamed, name,
            "each kluis-tray's pipe has a name of its own"
        );
        assert_eq!(again.name, renamed);
        drop(_listener);
        assert!(
            dir.path().join("tray.pipe").exists(),
            "an earlier listener leaves the name its successor published"
        );
        drop(again);
        assert!(
            !dir.path().join("tray.pipe").exists(),
            "the name is taken back as kluis-tray leaves"
        );
    }

    /// A pipe another account made (owned by it, open to all: a null DACL, which would let
    /// this user add an instance) is neither served by kluis-tray — were its name taken first
    /// — nor used by a window that `tray.pipe` sent to it; and `tray.pipe` naming something
    /// else is refused. (Here the Administrators group owns it, which Wine's user may name as
    /// owner; a user without that right cannot make this test's pipe: under Wine only, as
    /// tests/windows/run.sh runs it.)
    #[tokio::test]
    async fn a_pipe_another_account_made_is_not_used() {
        use std::ptr::null_mut;
        use windows_sys::Win32::Security::{
            CreateWellKnownSid, InitializeSecurityDescriptor, SetSecurityDescriptorDacl,
            SetSecurityDescriptorOwner, WinBuiltinAdministratorsSid, PSECURITY_DESCRIPTOR,
            SECURITY_ATTRIBUTES, SECURITY_DESCRIPTOR,
        };
        let dir = tempfile::tempdir().unwrap();
        let address = address(&AppPaths::under(dir.path()));
        let name = format!(r"\\.\pipe\kluis-tray-{}", uuid::Uuid::new_v4().simple());
        let mut admins = vec![0u64; 16];
        let mut len = (admins.len() * 8) as u32;
        // SAFETY: buffers as large as the calls are told; the descriptor outlives the pipe's
        // creation, the only call it is used in.
        let _theirs = unsafe {
            let sid = admins.as_mut_ptr().cast();
            assert_ne!(
                CreateWellKnownSid(WinBuiltinAdministratorsSid, null_mut(), sid, &mut len),
                0
            );
            let mut descriptor: SECURITY_DESCRIPTOR = std::mem::zeroed();
            let sd: PSECURITY_DESCRIPTOR = (&mut descriptor as *mut SECURITY_DESCRIPTOR).cast();
            assert_ne!(InitializeSecurityDescriptor(sd, 1), 0);
            assert_ne!(SetSecurityDescriptorOwner(sd, sid, 0), 0);
            assert_ne!(SetSecurityDescriptorDacl(sd, 1, std::ptr::null(), 0), 0);
            let mut attributes = SECURITY_ATTRIBUTES {
                nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: sd.cast(),
                bInheritHandle: 0,
            };
            tokio::net::windows::named_pipe::ServerOptions::new()
                .create_with_security_attributes_raw(
                    &name,
                    (&mut attributes as *mut SECURITY_ATTRIBUTES).cast(),
                )
                .unwrap()
        };
        let refused = Listener::make(name.clone())
            .err()
            .expect("kluis-tray does not serve it");
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied, "{refused}");

        std::fs::write(dir.path().join("tray.pipe"), &name).unwrap();
        let refused = connect(&address)
            .await
            .expect_err("a window does not use it");
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied, "{refused}");

        std::fs::write(dir.path().join("tray.pipe"), r"\\.\pipe\spoolss").unwrap();
        let refused = connect(&address)
            .await
            .expect_err("only a pipe of kluis-tray's is opened");
        assert_eq!(refused.kind(), io::ErrorKind::InvalidData, "{refused}");
    }
}
