#!/usr/bin/env bash
# The relay's PostgreSQL tests against a real PostgreSQL: a throw-away cluster
# (tests/postgres/cluster.sh), the tests marked `needs PostgreSQL`, then the cluster is gone.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
source tests/postgres/cluster.sh
cargo test-all --test it -- --ignored postgres::
