//! Debian's OpenSSH server for one test: started on a free loopback port with a throw-away
//! host key, SFTP only, for the throw-away user [`USER`] (made on first use, its password set
//! for this test process), who logs in with [`password`] or the client key made here; the
//! copies' folder is `folder` (optionally a small tmpfs, for a full disk). Stopped when
//! dropped. Needs root (sshd checks passwords and switches to the user): `tests/sftp/run.sh`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

use kluis_copies::sftp::{SftpLogin, SftpPlace};
use tokio::process::{Child, Command};

/// The user the server lets in.
pub const USER: &str = "kluis-sftp";

pub struct Sshd {
    child: Option<Child>,
    pub port: u16,
    /// The copies' folder, owned by [`USER`].
    pub folder: PathBuf,
    /// The host key's fingerprint as `ssh-keygen -l` shows it.
    pub host_key: String,
    /// A private key whose public half the server accepts.
    pub client_key: PathBuf,
    mounted: bool,
    dir: tempfile::TempDir,
}

/// The throw-away user's password in this test process (set once).
pub fn password() -> &'static str {
    static PASSWORD: OnceLock<String> = OnceLock::new();
    PASSWORD.get_or_init(|| {
        let made = std::process::Command::new("id").arg(USER).output().unwrap();
        if !made.status.success() {
            let status = std::process::Command::new("useradd")
                .args(["--system", "--no-create-home", "--home-dir", "/"])
                .args(["--shell", "/bin/sh", USER])
                .status()
                .expect("useradd runs (as root)");
            assert!(status.success(), "the test user {USER} is made");
        }
        let password = format!("pw-{}", uuid::Uuid::new_v4().simple());
        let mut chpasswd = std::process::Command::new("chpasswd")
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        let line = format!("{USER}:{password}\n");
        chpasswd
            .stdin
            .take()
            .unwrap()
            .write_all(line.as_bytes())
            .unwrap();
        assert!(
            chpasswd.wait().unwrap().success(),
            "the test user's password is set"
        );
        password
    })
}

impl Sshd {
    /// A server whose folder is on this disk.
    pub async fn start() -> Sshd {
        Sshd::start_with(None).await
    }

    /// A server whose folder is a tmpfs of `disk_bytes` when given (a disk that fills up).
    pub async fn start_with(disk_bytes: Option<u64>) -> Sshd {
        let _ = password(); // the user exists before the server names it
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        // The user reads authorized_keys from here.
        set_mode(path, 0o755);
        keygen(&path.join("host_key"));
        keygen(&path.join("client_key"));
        std::fs::copy(path.join("client_key.pub"), path.join("authorized_keys")).unwrap();
        let folder = path.join("srv");
        std::fs::create_dir(&folder).unwrap();
        if let Some(bytes) = disk_bytes {
            let uid = run("id", &["-u", USER]);
            let options = format!("size={bytes},uid={},mode=0755", uid.trim());
            let status = std::process::Command::new("mount")
                .args([
                    "-t",
                    "tmpfs",
                    "-o",
                    &options,
                    "kluis-test",
                    folder.to_str().unwrap(),
                ])
                .status()
                .unwrap();
            assert!(status.success(), "a small tmpfs is mounted (as root)");
        } else {
            let status = std::process::Command::new("chown")
                .args([USER, folder.to_str().unwrap()])
                .status()
                .unwrap();
            assert!(status.success(), "the folder is the user's");
        }
        // sshd's privilege separation needs its folder (a service start would make it).
        std::fs::create_dir_all("/run/sshd").unwrap();
        let (child, port, mut lines) =
            crate::listening::on_a_free_port("sshd", "Server listening on", |port| {
                let config = path.join("sshd_config");
                std::fs::write(&config, sshd_config(path, port)).unwrap();
                let mut command = Command::new("/usr/sbin/sshd");
                command
                    .args(["-D", "-e", "-f"])
                    .arg(&config)
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                command
            })
            .await;
        // Its later lines (logins) are kept flowing so that it never blocks on them.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let fingerprint = run(
            "ssh-keygen",
            &["-l", "-f", path.join("host_key.pub").to_str().unwrap()],
        );
        Sshd {
            child: Some(child),
            port,
            folder,
            host_key: fingerprint.split_whitespace().nth(1).unwrap().to_string(),
            client_key: path.join("client_key"),
            mounted: disk_bytes.is_some(),
            dir,
        }
    }

    /// The place of this server's folder, reached on `port` (this server's, or a relay's in
    /// front of it), logging in with `login`.
    pub fn place(&self, port: u16, login: SftpLogin) -> SftpPlace {
        SftpPlace {
            host: "127.0.0.1".into(),
            port,
            user: USER.into(),
            path: self.folder.to_string_lossy().into_owned(),
            login,
            host_key: self.host_key.clone(),
        }
    }

    /// A key login with this test's client key.
    pub fn key_login(&self) -> SftpLogin {
        SftpLogin::Key {
            key_file: self.client_key.to_string_lossy().into_owned(),
        }
    }

    /// `path` (made by this test, as root) handed to the server's user.
    pub fn give(&self, path: &Path) {
        let status = std::process::Command::new("chown")
            .args([USER, path.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Another key pair, which the server does not know.
    pub fn stranger_key(&self) -> PathBuf {
        let key = self.dir.path().join("stranger_key");
        keygen(&key);
        key
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
        }
        if self.mounted {
            let folder = self.folder.to_str().unwrap();
            let _ = std::process::Command::new("umount")
                .args(["-l", folder])
                .status();
        }
    }
}

fn sshd_config(dir: &Path, port: u16) -> String {
    let dir = dir.display();
    format!(
        "Port {port}
ListenAddress 127.0.0.1
HostKey {dir}/host_key
PidFile {dir}/sshd.pid
AuthorizedKeysFile {dir}/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin no
AllowUsers {USER}
Subsystem sftp internal-sftp
ForceCommand internal-sftp
"
    )
}

/// An Ed25519 key pair at `path` (and `path.pub`), without a passphrase.
fn keygen(path: &Path) {
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "kluis-test", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen runs");
    assert!(status.success(), "a key pair is made");
}

fn run(program: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
