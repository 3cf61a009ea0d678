#!/usr/bin/env bash
# Copies to S3-compatible storage against real S3 servers: moto's (PyPI `moto[server]`, pinned
# in tests/s3/requirements.txt, installed by .ci/setup in a venv of its own), and for a clock
# the server refuses, npm's s3rver (pinned in tests/s3/s3rver/package.json) run under Debian's
# faketime. Each test starts its own server on a free loopback port with a certificate from a
# throw-away CA (src-tauri/crates/kluis-copies/tests/it/moto.rs, s3rver.rs) and stops it when
# it ends; the tests are the `s3::` ones marked ignored, in kluis-copies, kluis-cli and the app.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
venv=${KLUIS_MOTO_VENV:-$HOME/.cache/kluis/moto}
export KLUIS_MOTO_SERVER="$venv/bin/moto_server"
export KLUIS_S3RVER="${KLUIS_S3RVER_DIR:-$HOME/.cache/kluis/s3rver}/node_modules/.bin/s3rver"
if [ ! -x "$KLUIS_MOTO_SERVER" ] || [ ! -x "$KLUIS_S3RVER" ] || ! command -v faketime >/dev/null; then
  echo "moto_server ($venv), s3rver or faketime is missing: run bash .ci/setup first." >&2
  exit 1
fi
cargo test-all --test it -- --ignored s3::
