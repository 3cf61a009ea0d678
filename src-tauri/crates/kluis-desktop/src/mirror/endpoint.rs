//! Where `kluis-tray` and a window meet, one per data folder, its user's alone:
//! - Unix: a socket beside the history (`tray.sock`), mode 0600 in an owner-only folder.
//! - Windows: a named pipe, `\\.\pipe\kluis-tray-<hash of the data folder>`. Pipe names are
//!   one namespace for every account of the computer, so the pipe is made owner-only (its
//!   default DACL lets every local account read it) and the first of its name (a name another
//!   account took first is not served); a window or `--quit` talks to it only when it is owned
//!   by the same user (not another account's pipe squatting the name).

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
    use std::time::Duration;

    use kluis_private::files::{owned_by_running_user, OwnerOnlySecurity};
    use sha2::{Digest, Sha256};
    use tokio::net::windows::named_pipe::{
        ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
    };
    use windows_sys::Win32::Foundation::ERROR_PIPE_BUSY;

    /// Where `kluis-tray` of a data folder listens: a pipe's name.
    #[derive(Clone, Debug)]
    pub struct Address(pub(super) String);

    /// The address for `paths`' data folder: named by a hash of the folder's path (in lower
    /// case, as Windows compares paths), which is in the user's profile.
    pub fn address(paths: &AppPaths) -> Address {
        let folder = paths.history_db.parent().unwrap_or(&paths.history_db);
        let folder = folder.to_string_lossy().to_lowercase();
        let hash = hex::encode(&Sha256::digest(folder.as_bytes())[..16]);
        Address(format!(r"\\.\pipe\kluis-tray-{hash}"))
    }

    /// kluis-tray's side: the pipe's instance waiting for the next window, and how to make
    /// the one after it.
    pub struct Listener {
        name: String,
        security: OwnerOnlySecurity,
        waiting: NamedPipeServer,
    }

    /// A window's connection, on kluis-tray's side.
    pub type Served = NamedPipeServer;

    impl Listener {
        /// Makes the pipe at `address`: owner-only, and failing when the name is taken (by
        /// another account, or a second kluis-tray of the folder, which the instance lock
        /// already keeps out).
        pub fn bind(address: &Address) -> io::Result<Listener> {
            let security = OwnerOnlySecurity::new()?;
            let waiting = instance(&address.0, &security, true)?;
            // Where the system lets an instance join another's pipe of the name anyway (Wine
            // does not refuse a first instance that is not), its owner tells: it is not served.
            if !owned_by_running_user(&waiting)? {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "another account of this computer made kluis-tray's pipe first",
                ));
            }
            Ok(Listener {
                name: address.0.clone(),
                security,
                waiting,
            })
        }

        /// The next window's connection. (A new instance waits for the one after it before
        /// this is handed out: a window never finds the pipe gone in between.)
        pub async fn accept(&mut self) -> io::Result<Served> {
            self.waiting.connect().await?;
            let next = instance(&self.name, &self.security, false)?;
            Ok(std::mem::replace(&mut self.waiting, next))
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

    /// Connects to the `kluis-tray` at `address`, when the pipe is the user's own.
    pub async fn connect(address: &Address) -> io::Result<NamedPipeClient> {
        // Every instance busy: only for the moment between a connection and the next instance
        // (see `accept`). Tried a few times, then left to the caller's next attempt.
        let mut busy = 0;
        let client = loop {
            match ClientOptions::new().open(&address.0) {
                Ok(client) => break client,
                Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32) && busy < 20 => {
                    busy += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => return Err(e),
            }
        };
        if !owned_by_running_user(&client)? {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "kluis-tray's pipe belongs to another account of this computer; it is not used",
            ));
        }
        Ok(client)
    }
}

#[cfg(all(test, windows))]
mod tests {
    use super::*;

    /// Windows that come one after another each find an instance of the pipe waiting (one is
    /// made for the next before a connection is handed out), and see it is their user's own.
    #[tokio::test]
    async fn each_window_finds_the_pipe_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let address = address(&AppPaths::under(dir.path()));
        let mut listener = Listener::bind(&address).unwrap();
        let accepting = tokio::spawn(async move {
            let first = listener.accept().await?;
            let second = listener.accept().await?;
            io::Result::Ok((first, second))
        });
        let first = connect(&address)
            .await
            .expect("the first window reaches it");
        let second = connect(&address).await.expect("so does the next");
        accepting.await.unwrap().expect("both accepted");
        drop((first, second));
    }

    /// Another account made the pipe's name first, owned by it and open to all (a null DACL,
    /// which lets this user add an instance): kluis-tray does not serve it, and a window does
    /// not talk to it. (Here the Administrators group, which Wine's user may name as owner.)
    #[tokio::test]
    async fn a_pipe_another_account_made_first_is_not_used() {
        use std::ptr::null_mut;
        use windows_sys::Win32::Security::{
            CreateWellKnownSid, InitializeSecurityDescriptor, SetSecurityDescriptorDacl,
            SetSecurityDescriptorOwner, WinBuiltinAdministratorsSid, PSECURITY_DESCRIPTOR,
            SECURITY_ATTRIBUTES, SECURITY_DESCRIPTOR,
        };
        let dir = tempfile::tempdir().unwrap();
        let address = address(&AppPaths::under(dir.path()));
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
                    &address.0,
                    (&mut attributes as *mut SECURITY_ATTRIBUTES).cast(),
                )
                .unwrap()
        };
        let refused = Listener::bind(&address)
            .err()
            .expect("kluis-tray does not serve it");
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied, "{refused}");
        let refused = connect(&address)
            .await
            .expect_err("a window does not use it");
        assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied, "{refused}");
    }

    /// One pipe per data folder, whatever the case its path is spelt in (Windows compares paths
    /// without case).
    #[test]
    fn each_data_folder_has_its_own_pipe() {
        let name = |folder: &str| address(&AppPaths::under(std::path::Path::new(folder))).0;
        assert_eq!(name(r"C:\Users\An\Kluis"), name(r"c:\users\an\KLUIS"));
        assert_ne!(name(r"C:\Users\An\Kluis"), name(r"C:\Users\Bo\Kluis"));
        assert!(name(r"C:\Users\An\Kluis").starts_with(r"\\.\pipe\kluis-tray-"));
    }
}
