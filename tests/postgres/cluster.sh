#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for tests and benchmarks: `source tests/postgres/cluster.sh`
# starts one on a free port of 127.0.0.1 (trust authentication, loopback only, fsync off, TLS
# with a throw-away CA), exports KLUIS_TEST_DATABASE_URL (and KLUIS_TEST_DATABASE_CA), and
# stops and deletes it when the sourcing shell exits.
# KLUIS_PG_OPTIONS adds server options (e.g. "-c shared_preload_libraries=pg_stat_statements").
# PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user.
# Installs Debian's postgresql package when it is missing.

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$pg_bin" ]; then
  echo "installing PostgreSQL (Debian's postgresql package)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi

pg_dir=$(mktemp -d /tmp/kluis-pg.XXXXXX)
chmod 755 "$pg_dir"
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
[ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
pg_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U kluis --no-sync -E UTF8 >/dev/null
# TLS as well as plain TCP: a throw-away CA and a certificate for 127.0.0.1 (openssl comes with
# the postgresql package); KLUIS_TEST_DATABASE_CA is the CA's PEM, for sslmode=require.
pg_tls=""
if command -v openssl >/dev/null && (
    # (set -e does not hold inside an if's condition: each step is chained instead.)
    cd "$pg_dir" &&
    ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes" &&
    openssl req -x509 $ec -keyout ca.key -out ca.crt -days 2 -subj /CN=kluis-test-ca &&
    openssl req $ec -keyout server.key -out server.csr -subj /CN=127.0.0.1 &&
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n' >server.ext &&
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -extfile server.ext -out server.crt &&
    chmod 600 server.key
  ) >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then chown postgres "$pg_dir/server.key"; fi
  pg_tls="-c ssl=on -c ssl_cert_file=$pg_dir/server.crt -c ssl_key_file=$pg_dir/server.key"
  export KLUIS_TEST_DATABASE_CA="$pg_dir/ca.crt"
fi
as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w -s \
  -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 $pg_tls -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=${KLUIS_PG_MAX_CONNECTIONS:-400} ${KLUIS_PG_OPTIONS:-}" start
pg_stop() {
  as_pg "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -s stop 2>/dev/null || true
  rm -rf "$pg_dir"
}
trap pg_stop EXIT
export KLUIS_TEST_DATABASE_URL="postgres://kluis@127.0.0.1:$pg_port/postgres"
echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port" >&2
