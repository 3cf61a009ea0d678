#!/usr/bin/env bash
# The recovery drill: what an office does after a fire, on a folder, an S3 bucket with Object
# Lock (moto, as tests/s3/run.sh) and an SFTP server (Debian's OpenSSH, as tests/sftp/run.sh)
# at once — the `drill::` test of kluis-cli, marked ignored (it needs both servers, and root
# for sshd). See src-tauri/crates/kluis-cli/tests/it/drill.rs.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
venv=${KLUIS_MOTO_VENV:-$HOME/.cache/kluis/moto}
export KLUIS_MOTO_SERVER="$venv/bin/moto_server"
if [ ! -x "$KLUIS_MOTO_SERVER" ] || [ ! -x /usr/sbin/sshd ]; then
  echo "moto_server ($venv) or sshd is missing: run bash .ci/setup first." >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "The drill runs sshd for another user: run it as root (CI does)." >&2
  exit 1
fi
cargo test-all --test it -- --ignored drill::
