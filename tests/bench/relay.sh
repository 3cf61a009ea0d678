#!/usr/bin/env bash
# The relay for many offices under load (issue 14), by hand — not part of the test command.
#
# Two kluis-relay instances behind nginx on 127.0.0.1, over one PostgreSQL (a throw-away
# cluster, tests/postgres/cluster.sh): 100 tenants, 10,000 long-polls parked (one inbox each),
# then 1,000 callbacks a second for 30 s to random inboxes, sent through nginx as the service
# would; one instance is killed (kill -9) after 15 s and its clients carry on at the other.
# Then the same run against one SQLite instance (behind the same nginx), without the kill.
# Reports callbacks lost and redelivered, delivery latency p50/p99 and each instance's RSS with
# its share of the polls parked (examples/load.rs); exits 1 if either run lost a callback or
# missed p50 ≤ 10 ms / p99 ≤ 100 ms.
#
#   bash tests/bench/relay.sh            (POLLERS, RATE, SECONDS_, TENANTS, KILL_AFTER to change;
#                                         PG_ONLY=1 skips SQLite; RECHECK=SECS the polls' re-look)
# With KLUIS_PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements" it also prints the
# statements that took PostgreSQL the most time during the PostgreSQL run.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$HOME/.cargo/bin:$PATH"
pollers=${POLLERS:-10000} rate=${RATE:-1000} seconds=${SECONDS_:-30} tenants=${TENANTS:-100}
kill_after=${KILL_AFTER:-15}

if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  echo "installing nginx (Debian's package)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx-light >/dev/null 2>&1 ||
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
cargo build --release --locked -q -p kluis-relay --bin kluis-relay --example load
bin=target/release/kluis-relay
load=target/release/examples/load
ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
# When an instance dies, 5,000 connections come to the other at once: the accept queues must
# hold them (docs/relay.md's deployment notes say the same for production).
if [ "$(id -u)" = 0 ]; then
  sysctl -qw net.core.somaxconn=16384 net.ipv4.tcp_max_syn_backlog=16384 2>/dev/null || true
fi

source tests/postgres/cluster.sh
work=$(mktemp -d /tmp/kluis-relay-bench.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  pg_stop
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Starts an instance with STORE_ARGS on a free port; sets $port, $mport, $pid.
start_instance() {
  port=$(free_port); mport=$(free_port)
  KLUIS_LOG=warn "$bin" --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$mport" \
    --api-per-sec 100000 ${RECHECK:+--recheck-secs $RECHECK} "$@" 2>>"$work/relay.log" &
  pid=$!
  disown "$pid"
  pids+=("$pid")
  until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do sleep 0.1; done
}

# nginx on a free port in front of the given instance ports; sets $front.
start_nginx() {
  [ -f "$work/nginx.pid" ] && { kill "$(cat "$work/nginx.pid")"; sleep 1; }
  front=$(free_port)
  mkdir -p "$work/nginx"
  {
    echo "worker_processes 2; worker_rlimit_nofile 200000; pid $work/nginx.pid; user root;"
    echo "error_log $work/nginx/error.log crit;"
    echo "events { worker_connections 60000; }"
    echo "http {"
    echo "  access_log off;"
    for t in client_body proxy fastcgi uwsgi scgi; do echo "  ${t}_temp_path $work/nginx/$t;"; done
    echo "  upstream kluis_relay {"
    for p in "$@"; do echo "    server 127.0.0.1:$p max_fails=1 fail_timeout=5s;"; done
    echo "    keepalive 2048;"
    echo "  }"
    echo "  server {"
    echo "    listen 127.0.0.1:$front backlog=16384;"
    echo "    location / {"
    echo "      proxy_pass http://kluis_relay;"
    echo "      proxy_http_version 1.1;"
    echo '      proxy_set_header Connection "";'
    echo "      proxy_next_upstream error timeout http_502 http_503;"
    echo "      proxy_read_timeout 40s;"
    echo "    }"
    echo "  }"
    echo "}"
  } >"$work/nginx.conf"
  "$nginx_bin" -c "$work/nginx.conf" -e "$work/nginx/error.log"
  until curl -sf "http://127.0.0.1:$front/readyz" >/dev/null; do sleep 0.1; done
}

# Adds $tenants tenants with room for the run; their keys go to $1.
add_tenants() {
  local keys=$1; shift
  for i in $(seq 1 "$tenants"); do
    "$bin" tenant add "office-$i" --max-inboxes 100000 --requests-per-sec 10000 "$@" 2>/dev/null >>"$keys"
  done
}

echo "== PostgreSQL, two instances behind nginx: $tenants tenants, $pollers long-polls, $rate callbacks/s for $seconds s, one instance killed after $kill_after s"
export KLUIS_RELAY_DATABASE_URL=$KLUIS_TEST_DATABASE_URL
add_tenants "$work/pg-keys"
start_instance; p1=$port; m1=$mport; pid1=$pid
start_instance; p2=$port; m2=$mport; pid2=$pid
start_nginx "$p1" "$p2"
psql_() { "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U kluis -d postgres -q "$@"; }
statements=""
if [[ "${KLUIS_PG_OPTIONS:-}" == *pg_stat_statements* ]]; then
  statements=1
  psql_ -c "CREATE EXTENSION pg_stat_statements" -c "SELECT pg_stat_statements_reset()" >/dev/null
fi
pg_status=0
"$load" --url "http://127.0.0.1:$front" --keys "$work/pg-keys" --pollers "$pollers" --rate "$rate" \
  --seconds "$seconds" --metrics "http://127.0.0.1:$m1/metrics" --metrics "http://127.0.0.1:$m2/metrics" \
  --pid "$pid1" --pid "$pid2" --kill "$pid1" --kill-after "$kill_after" || pg_status=$?
if [ -n "$statements" ]; then
  psql_ -c "SELECT calls, round(total_exec_time) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
    left(regexp_replace(query, '\s+', ' ', 'g'), 80) AS statement
    FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12"
fi
for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
pids=()
unset KLUIS_RELAY_DATABASE_URL

[ -n "${PG_ONLY:-}" ] && exit "$pg_status"
echo
echo "== SQLite, one instance behind nginx, the same load without the kill"
add_tenants "$work/sqlite-keys" --data "$work/sqlite"
start_instance --data "$work/sqlite"; p1=$port; m1=$mport; pid1=$pid
start_nginx "$p1"
sqlite_status=0
"$load" --url "http://127.0.0.1:$front" --keys "$work/sqlite-keys" --pollers "$pollers" --rate "$rate" \
  --seconds "$seconds" --metrics "http://127.0.0.1:$m1/metrics" --pid "$pid1" || sqlite_status=$?

if [ -s "$work/relay.log" ]; then echo; echo "relay warnings:"; sort "$work/relay.log" | uniq -c | sort -rn | head -5; fi
[ "$pg_status" = 0 ] && [ "$sqlite_status" = 0 ]
