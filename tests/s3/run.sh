#!/usr/bin/env bash
# Copies to S3-compatible storage against a real S3 server: moto's (PyPI `moto[server]`, pinned
# in tests/s3/requirements.txt, installed by .ci/setup in a venv of its own). Each test starts
# its own server on a free loopback port with a certificate from a throw-away CA
# (src-tauri/crates/kluis-copies/tests/it/moto.rs) and stops it when it ends; the tests are
# those marked `needs moto_server`, in kluis-copies and kluis-cli.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
venv=${KLUIS_MOTO_VENV:-$HOME/.cache/kluis/moto}
export KLUIS_MOTO_SERVER="$venv/bin/moto_server"
if [ ! -x "$KLUIS_MOTO_SERVER" ]; then
  echo "moto_server is not in $venv: run bash .ci/setup first." >&2
  exit 1
fi
cargo test-all --test it -- --ignored s3::
