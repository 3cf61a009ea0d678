#!/usr/bin/env bash
# The office hub under load (issue 46), by hand — not part of the test command.
#
# One kluis-relay serving TLS on 127.0.0.1 over a throw-away PostgreSQL (tests/postgres/
# cluster.sh): 1,000 offices × 10 PCs × 200 klanten a PC. Every PC puts its sealed report,
# then for 60 s klanten's turns are taken at 500 a second (held for a simulated backup, ended;
# klanten two PCs plan asked for by both), reports put at ten times their hourly rhythm, and a
# random office's view (10 PCs' reports of 200 klanten, opened and put together as a PC does)
# read once a second (kluis-office's examples/hub_load.rs). Prints the latencies and the hub's
# RSS; exits 1 if a request was refused or failed, p99 of a turn > 50 ms, or p99 of the view
# > 200 ms.
#
#   bash tests/bench/hub.sh        (OFFICES, PCS, KLANTEN, RATE, SECONDS_ to change)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --locked -q -p kluis-relay --bin kluis-relay
cargo build --release --locked -q -p kluis-office --example hub_load
bin=target/release/kluis-relay
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

source tests/postgres/cluster.sh
work=$(mktemp -d /tmp/kluis-hub-bench.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  pg_stop
  rm -rf "$work"
}
trap cleanup EXIT

# The hub's certificate, signed by a throw-away CA the PCs are given.
(
  cd "$work"
  ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
  openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj /CN=kluis-bench-ca
  openssl req $ec -keyout hub.key -out hub.csr -subj /CN=127.0.0.1
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n' >hub.ext
  openssl x509 -req -in hub.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile hub.ext -out hub.pem
) >/dev/null 2>&1

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port); mport=$(free_port)
export KLUIS_RELAY_DATABASE_URL=$KLUIS_TEST_DATABASE_URL
KLUIS_LOG=warn "$bin" --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$mport" \
  --tls-cert "$work/hub.pem" --tls-key "$work/hub.key" --api-per-sec 100000 2>"$work/hub.log" &
pid=$!
until curl -sf "http://127.0.0.1:$mport/readyz" >/dev/null; do sleep 0.1; done
echo "hub up (PID $pid, RSS $(awk '/VmRSS/ {print int($2/1024)}' /proc/$pid/status) MiB); ${OFFICES:-1000} offices × ${PCS:-10} PCs × ${KLANTEN:-200} klanten"

status=0
target/release/examples/hub_load --url "https://127.0.0.1:$port" --ca "$work/ca.pem" --pid "$pid" \
  --offices "${OFFICES:-1000}" --pcs "${PCS:-10}" --klanten "${KLANTEN:-200}" \
  --rate "${RATE:-500}" --seconds "${SECONDS_:-60}" || status=$?
psql_() { "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U kluis -d postgres -qtA "$@"; }
echo "database: $(psql_ -c "SELECT pg_size_pretty(pg_database_size(current_database()))") ($(psql_ -c "SELECT count(*) FROM office_turns") turns, $(psql_ -c "SELECT count(*) FROM office_reports") reports)"
if [ -s "$work/hub.log" ]; then echo "hub warnings:"; sort "$work/hub.log" | uniq -c | sort -rn | head -5; fi
exit "$status"
