#!/usr/bin/env bash
# Benchmark: `kluis recover list` of a large office's copy target, on a new computer — on a
# folder, on moto's S3 server over TLS, and on an SFTP server (rclone's `serve sftp` over the
# same folder: Debian's, no root needed) — from the catalog, and again from the copies' own
# records alone (the catalogs deleted); and its peak RSS.
#
#   bash tests/bench/recover-list.sh [KLANTEN] [COPIES] [ROUNDS]   (default 200 × 50, 3 rounds)
#
# The target is written by kluis-recovery's `office_target` example: KLANTEN klanten of COPIES
# small copies each, every copy with its sealed record, the lost computer's sealed catalog
# naming them all. Targets (issue 42): from the catalog ≤ 10 s on S3 and on SFTP; peak RSS ≤
# 128 MiB. The records-alone figures are reported, not held to a target. Exits 1 when a target
# is missed.
set -euo pipefail
klanten=${1:-200}
copies=${2:-50}
rounds=${3:-3}
cd "$(dirname "$0")/../.."

[ "$(id -u)" = 0 ] || SUDO=sudo
need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; ${SUDO:-} apt-get install -y -qq "$2" >/dev/null; }; }
need rclone rclone
need openssl openssl
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --release --locked -p kluis-cli --bin kluis >&2
cargo build --release --locked -p kluis-recovery --example office_target >&2
kluis=$PWD/target/release/kluis
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-recover-bench.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

target/release/examples/office_target "$work/office" "$work/key" "$klanten" "$copies"
export KLUIS_PROFILES_FILE=$work/profiles.json KLUIS_HISTORY_DB=$work/history.sqlite3 \
  KLUIS_SECRETS_DIR=$work/secrets RCLONE_CONFIG=/dev/null
"$kluis" copy-target add Folder --folder "$work/office" >&2

# S3: the same objects in a bucket of moto's.
source "$PWD/tests/bench/moto.sh"
start_moto
remote=(--s3-provider Other --s3-endpoint "$endpoint" --s3-access-key-id bench --s3-secret-access-key bench-secret --s3-force-path-style)
unset AWS_CA_BUNDLE SSL_CERT_DIR
export SSL_CERT_FILE=$work/ca.pem # (rclone's S3 backend takes its CA from here: see s3-vs-rclone.sh)
rclone mkdir ":s3:office" "${remote[@]}"
echo "uploading $((klanten * copies * 2)) objects to moto" >&2
rclone copy "$work/office" ":s3:office/kluis" "${remote[@]}" --transfers 16 --s3-upload-concurrency 1
echo bench-secret | "$kluis" copy-target add Cloud --s3-endpoint "$endpoint" --s3-bucket office \
  --s3-path-style --s3-access-key-id bench --s3-prefix kluis --s3-ca-cert "$work/ca.pem" --stdin >&2

# SFTP: rclone serving the folder.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rclone serve sftp "$work/office" --addr "127.0.0.1:$port" --user kluis --pass sftp-secret >"$work/sftp.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null && break; sleep 0.1; done
echo sftp-secret | "$kluis" copy-target add Server --sftp-host 127.0.0.1 --sftp-port "$port" \
  --sftp-user kluis --sftp-path / --stdin >&2

# timed OUTFILE TARGET: one listing, checked whole; appends "seconds max_rss_kib".
timed() {
  /usr/bin/time -f "%e %M" -o "$work/last" "$kluis" recover list --json --target "$2" \
    --recovery-key "$work/key" >"$work/listed" 2>"$work/said"
  local n
  n=$(wc -l <"$work/listed")
  [ "$n" = $((klanten * copies)) ] || { echo "$2 listed $n backups, not $((klanten * copies))" >&2; cat "$work/said" >&2; exit 1; }
  cat "$work/last" >>"$1"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
maxcol() { awk -v c="$1" 'BEGIN{m=0} {if ($c>m) m=$c} END {print m}'; }

for target in Folder Cloud Server; do
  for i in $(seq "$rounds"); do
    echo "$target, from the catalog: round $i/$rounds" >&2
    timed "$work/catalog-$target" "$target"
  done
done
# The catalogs gone (deleted, or never written): the records alone, one round each.
rm -r "$work/office/kluis-recovery/catalogs"
rclone purge ":s3:office/kluis/kluis-recovery/catalogs" "${remote[@]}"
for target in Folder Cloud Server; do
  echo "$target, from the records alone" >&2
  timed "$work/records-$target" "$target"
done

line() { printf '%-34s %s s   (all: %s)\n' "$1" "$(cut -d' ' -f1 "$2" | median)" "$(cut -d' ' -f1 "$2" | tr '\n' ' ')"; }
echo "recover list, $klanten klanten × $copies copies, $rounds rounds"
for target in Folder Cloud Server; do line "$target from the catalog, median" "$work/catalog-$target"; done
for target in Folder Cloud Server; do line "$target from the records alone" "$work/records-$target"; done
rss=$(cat "$work"/catalog-* "$work"/records-* | maxcol 2)
rss_mib=$(awk -v r="$rss" 'BEGIN{printf "%.1f", r/1024}')
echo "peak RSS                           ${rss_mib} MiB   (target ≤ 128)"
s3=$(cut -d' ' -f1 "$work/catalog-Cloud" | median)
sftp=$(cut -d' ' -f1 "$work/catalog-Server" | median)
ok=$(awk -v a="$s3" -v b="$sftp" -v r="$rss_mib" 'BEGIN{print (a<=10 && b<=10 && r<=128) ? 1 : 0}')
[ "$ok" = 1 ] && echo "PASS (S3 and SFTP from the catalog ≤ 10 s)" || { echo "FAIL"; exit 1; }
