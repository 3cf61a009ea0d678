#!/usr/bin/env bash
# Benchmark: the whole `kluis backup` flow of a 1 GiB payload against `curl` fetching the same
# file, both over TLS on loopback from a local kluis-sim, alternately in one run; then the peak
# RSS of `kluis backup` for a 64 MiB and a 1 GiB payload.
#
#   bash tests/bench/backup-vs-curl.sh [ROUNDS]      (default 7 rounds)
#
# Before every measured command the page cache is written back (`sync`), so each starts from
# the same state. Kluis fsyncs the file before naming it (durability) and curl does not; that
# cost is inside Kluis's figure. Targets: Kluis median ≤ 1.15 × curl median; peak RSS ≤ 48 MiB
# and within 8 MiB between 64 MiB and 1 GiB. Exits 1 when a target is missed.
set -euo pipefail
rounds=${1:-7}
cd "$(dirname "$0")/../.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; ${SUDO:-} apt-get install -y -qq "$2" >/dev/null; }; }
[ "$(id -u)" = 0 ] || SUDO=sudo
need curl curl
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --release --locked --bin kluis --bin kluis-sim >&2
bin=target/release
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-bench.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# start_sim SIZE NAME: starts a simulator whose backups are SIZE bytes; its key=value lines
# land in $work/NAME.env.
start_sim() {
  "$bin/kluis-sim" --payload-size "$1" --callback-delay-ms 0 --ca-out "$work/$2.pem" >"$work/$2.env" 2>"$work/$2.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^ready' "$work/$2.env" 2>/dev/null && return 0; sleep 0.1; done
  echo "kluis-sim did not start" >&2; cat "$work/$2.log" >&2; exit 1
}
value() { grep "^$2=" "$work/$1.env" | cut -d= -f2-; }

# timed OUTFILE CMD...: runs CMD after a sync, appends "seconds max_rss_kib" to OUTFILE.
timed() {
  local out=$1; shift
  rm -rf "$work/dl"; mkdir -p "$work/dl"; sync
  /usr/bin/time -f "%e %M" -o "$work/last" "$@" >/dev/null
  cat "$work/last" >>"$out"
}

kluis_backup() {
  KLUIS_BASE_URL=$(value "$1" base_url) KLUIS_API_KEY=$(value "$1" api_key) KLUIS_USERNAME=$(value "$1" username) \
  KLUIS_PASSWORD=$(value "$1" password) KLUIS_CA_CERT=$work/$1.pem KLUIS_HISTORY_DB=$work/history.sqlite3 \
    timed "$2" "$bin/kluis" backup --out "$work/dl" --json
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
maxcol() { awk -v c="$1" 'BEGIN{m=0} {if ($c>m) m=$c} END {print m}'; }

gib=$((1024 * 1024 * 1024)); mib64=$((64 * 1024 * 1024))
start_sim $gib big
start_sim $mib64 small
file_url=$(value big file_url)

echo "warm-up (the simulator computes each payload's digest once)" >&2
kluis_backup big /dev/null; kluis_backup small /dev/null
timed /dev/null curl -sS --cacert "$work/big.pem" -o "$work/dl/file" "$file_url"

for i in $(seq "$rounds"); do
  echo "round $i/$rounds" >&2
  kluis_backup big "$work/kluis"
  timed "$work/curl" curl -sS --cacert "$work/big.pem" -o "$work/dl/file" "$file_url"
  kluis_backup small "$work/kluis64"
done

k=$(cut -d' ' -f1 "$work/kluis" | median)
c=$(cut -d' ' -f1 "$work/curl" | median)
ratio=$(awk -v k="$k" -v c="$c" 'BEGIN{printf "%.2f", k/c}')
rss_big=$(maxcol 2 <"$work/kluis"); rss_small=$(maxcol 2 <"$work/kluis64")
rss_big_mib=$(awk -v r="$rss_big" 'BEGIN{printf "%.1f", r/1024}')
rss_small_mib=$(awk -v r="$rss_small" 'BEGIN{printf "%.1f", r/1024}')
delta=$(awk -v a="$rss_big" -v b="$rss_small" 'BEGIN{d=(a-b)/1024; if (d<0) d=-d; printf "%.1f", d}')

cat <<REPORT
rounds                         $rounds
kluis backup 1 GiB, median     ${k} s   (all: $(cut -d' ' -f1 "$work/kluis" | tr '\n' ' '))
curl 1 GiB, median             ${c} s   (all: $(cut -d' ' -f1 "$work/curl" | tr '\n' ' '))
ratio kluis / curl             ${ratio}    (target ≤ 1.15)
peak RSS kluis, 1 GiB          ${rss_big_mib} MiB   (target ≤ 48)
peak RSS kluis, 64 MiB         ${rss_small_mib} MiB
RSS difference                 ${delta} MiB   (target ≤ 8)
REPORT
ok=$(awk -v r="$ratio" -v b="$rss_big_mib" -v d="$delta" 'BEGIN{print (r<=1.15 && b<=48 && d<=8) ? 1 : 0}')
[ "$ok" = 1 ] && echo "PASS" || { echo "FAIL"; exit 1; }
