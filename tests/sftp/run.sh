#!/usr/bin/env bash
# Copies to SFTP against a real SFTP server: Debian's OpenSSH (`openssh-server`, installed by
# .ci/setup). Each test starts its own `sshd -D` on a free loopback port with a throw-away host
# key, SFTP only, for the throw-away user `kluis-sftp` (made on first use, its password set by
# the tests), and stops it when it ends (src-tauri/crates/kluis-copies/tests/it/sshd.rs); the
# full-disk test mounts a 1 MiB tmpfs. sshd checks passwords and switches users only as root,
# so these tests run as root: those marked `needs sshd`, in kluis-copies and kluis-cli.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
if [ "$(id -u)" != 0 ]; then
  echo "The SFTP tests run sshd for another user: run them as root (CI does)." >&2
  exit 1
fi
if [ ! -x /usr/sbin/sshd ]; then
  echo "sshd is not installed: run bash .ci/setup first (Debian's openssh-server)." >&2
  exit 1
fi
cargo test-all --test it -- --ignored sftp::
