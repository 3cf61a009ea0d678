#!/usr/bin/env bash
# Benchmark: one copy of a file to an S3 server by Kluis (the copy a backup gets, through
# kluis-copies' `s3_upload` example: in 8 MiB parts, each request's SHA-256 checked by the
# server, the object proven afterwards) and by Debian's `rclone copyto` (its defaults: 5 MiB
# parts, 4 at once, an MD5 of the file first), alternately in one run, to moto's S3 server
# over TLS on loopback; and Kluis's peak RSS.
#
#   bash tests/bench/s3-vs-rclone.sh [SIZE_MIB] [ROUNDS]      (default 1024 MiB, 5 rounds)
#
# moto keeps objects in memory: each is deleted after its round. The server's own speed is in
# both figures (it is the same server). Targets: Kluis median ≤ 1.0 × rclone median; peak RSS
# ≤ 64 MiB. Exits 1 when a target is missed.
set -euo pipefail
size_mib=${1:-1024}
rounds=${2:-5}
cd "$(dirname "$0")/../.."

[ "$(id -u)" = 0 ] || SUDO=sudo
need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; ${SUDO:-} apt-get install -y -qq "$2" >/dev/null; }; }
need rclone rclone
need openssl openssl
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --release --locked -p kluis-copies --example s3_upload >&2
upload=target/release/examples/s3_upload
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-s3-bench.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

source "$PWD/tests/bench/moto.sh"
start_moto

export RCLONE_CONFIG=/dev/null
remote=(--s3-provider Other --s3-endpoint "$endpoint" --s3-access-key-id bench --s3-secret-access-key bench-secret --s3-force-path-style)
# rclone 1.60's S3 backend refuses a custom CA bundle (--ca-cert or AWS_CA_BUNDLE: "HTTPClient's
# transport unsupported type"); Go reads the CA from SSL_CERT_FILE instead.
unset AWS_CA_BUNDLE SSL_CERT_DIR
export SSL_CERT_FILE=$work/ca.pem
rclone mkdir ":s3:bench" "${remote[@]}"
export KLUIS_S3_SECRET_KEY=bench-secret

head -c $((size_mib * 1024 * 1024)) /dev/urandom >"$work/backup.zip"

# timed OUTFILE CMD...: runs CMD after a sync, appends "seconds max_rss_kib" to OUTFILE.
timed() {
  local out=$1; shift
  sync
  /usr/bin/time -f "%e %M" -o "$work/last" "$@" >/dev/null
  cat "$work/last" >>"$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
maxcol() { awk -v c="$1" 'BEGIN{m=0} {if ($c>m) m=$c} END {print m}'; }

echo "warm-up" >&2
"$upload" "$work/backup.zip" "$endpoint" bench warm bench "$work/ca.pem" >/dev/null
rclone deletefile ":s3:bench/warm/bench/backup.zip" "${remote[@]}" 2>/dev/null || rclone purge ":s3:bench/warm" "${remote[@]}"

for i in $(seq "$rounds"); do
  echo "round $i/$rounds" >&2
  timed "$work/kluis" "$upload" "$work/backup.zip" "$endpoint" bench "k$i" bench "$work/ca.pem"
  rclone purge ":s3:bench/k$i" "${remote[@]}"
  timed "$work/rclone" rclone copyto "$work/backup.zip" ":s3:bench/r$i/backup.zip" "${remote[@]}"
  rclone purge ":s3:bench/r$i" "${remote[@]}"
done

k=$(cut -d' ' -f1 "$work/kluis" | median)
r=$(cut -d' ' -f1 "$work/rclone" | median)
ratio=$(awk -v k="$k" -v r="$r" 'BEGIN{printf "%.2f", k/r}')
rss=$(maxcol 2 <"$work/kluis")
rss_mib=$(awk -v r="$rss" 'BEGIN{printf "%.1f", r/1024}')
cat <<REPORT
rounds                         $rounds, ${size_mib} MiB each
kluis copy, median             ${k} s   (all: $(cut -d' ' -f1 "$work/kluis" | tr '\n' ' '))
rclone copyto, median          ${r} s   (all: $(cut -d' ' -f1 "$work/rclone" | tr '\n' ' '))
ratio kluis / rclone           ${ratio}    (target ≤ 1.0)
peak RSS kluis                 ${rss_mib} MiB   (target ≤ 64)
REPORT
ok=$(awk -v r="$ratio" -v b="$rss_mib" 'BEGIN{print (r<=1.0 && b<=64) ? 1 : 0}')
[ "$ok" = 1 ] && echo "PASS" || { echo "FAIL"; exit 1; }
