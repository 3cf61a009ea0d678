#!/usr/bin/env bash
# Benchmark: `kluis backup --all` over many klanten against curl fetching the same bytes.
#
#   bash tests/bench/backup-all.sh [KLANTEN] [MIB] [CONCURRENCY] [ROUNDS]
#                                  (default 200 klanten of 20 MiB, 2 downloading at a time —
#                                  Kluis has one klant more asking meanwhile —, 3 rounds)
#
# A local kluis-sim serves every klant (one profile each in a throw-away profiles file, their
# secrets in an owner-only secrets folder: no keyring needed). Each round times the whole batch
# — sign-in, POST, callback on loopback, webhook, download, SHA-256 and length check, fsync,
# rename, history — and curl fetching the same KLANTEN files at the same concurrency over
# the same loopback TLS (xargs -P), alternately (the order changing each round), after a
# `sync` each.
#
# Two places, two comparisons:
# - on disk (the work folder): Kluis makes each file durable (fsync) before it gets its name,
#   so curl's time here includes `sync FILE…` of what it fetched — both end with the same bytes
#   on disk. Past the page cache's appetite both are bound by the disk's write speed.
# - in memory (/dev/shm, where fsync costs nothing): what Kluis adds to the transfer itself.
# Targets (issue 11): Kluis median ≤ 1.2 × curl median in both; the CLI's peak RSS ≤ 64 MiB.
# Exits 1 when one is missed. Needs about KLANTEN × MIB of free disk and of free memory (each
# round's files are removed before the next).
#
# KLUIS_BENCH_BASELINE=/path/to/an/earlier/kluis: that build runs too, in each round beside
# this one, for a change's effect measured in one run (the machine's noise between runs is
# larger than many changes); its ratio is shown, not checked. (A build before 1dee71f reads
# --concurrency as klanten under way in all, not downloading.) KLUIS_BENCH_PLACES="memory" (or
# "disk"): one place only, the target then checked there alone.
set -euo pipefail
klanten=${1:-200}; mib=${2:-20}; concurrency=${3:-2}; rounds=${4:-3}
cd "$(dirname "$0")/../.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; ${SUDO:-} apt-get install -y -qq "$2" >/dev/null; }; }
[ "$(id -u)" = 0 ] || SUDO=sudo
need curl curl
[ -x /usr/bin/time ] || need /usr/bin/time time

# (KLUIS_BENCH_DEBUG=1: the debug build, to try the script itself quickly; not a figure.)
if [ -n "${KLUIS_BENCH_DEBUG:-}" ]; then
  cargo build --locked --bin kluis --bin kluis-sim >&2; bin=$PWD/target/debug
else
  cargo build --release --locked --bin kluis --bin kluis-sim >&2; bin=$PWD/target/release
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-bench-all.XXXXXX")
shm=$(mktemp -d /dev/shm/kluis-bench-all.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work" "$shm"; }
trap cleanup EXIT

source "$PWD/tests/bench/office.sh"
start_sim "$mib"
export KLUIS_PROFILES_FILE=$work/profiles.json KLUIS_SECRETS_DIR=$work/secrets
export KLUIS_HISTORY_DB=$work/history.sqlite3 KLUIS_CA_CERT=$work/sim.pem
mkdir -m 700 "$work/secrets"
add_klanten "$klanten"
file_url=$(value file_url)

# timed OUTFILE CMD...: runs CMD after a sync into an empty folder $dl; appends "seconds max_rss_kib".
timed() {
  local out=$1; shift
  rm -rf "$dl"; mkdir -p "$dl"; sync
  /usr/bin/time -f "%e %M" -o "$work/last" "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  cat "$work/last" >>"$out"
}
# kluis_all OUTFILE [PROGRAM]: this build's kluis, or PROGRAM.
kluis_all() { timed "$1" "${2:-$bin/kluis}" backup --all --out "$dl" --concurrency "$concurrency" --retries 0; }
baseline=${KLUIS_BENCH_BASELINE:-}
places=${KLUIS_BENCH_PLACES:-disk memory}
for p in $places; do
  case $p in disk | memory) ;; *) echo "KLUIS_BENCH_PLACES: disk, memory or both, not $p" >&2; exit 2 ;; esac
done
# curl_all OUTFILE DURABLE: DURABLE=1 fsyncs every fetched file at the end (`sync FILE…`).
curl_all() {
  timed "$1" bash -c 'seq "$1" | xargs -P "$2" -I{} curl -sS --fail --cacert "$3" -o "$4/{}.zip" "$5"
    if [ "$6" = 1 ]; then sync "$4"/*.zip; fi' _ \
    "$klanten" "$concurrency" "$work/sim.pem" "$dl" "$file_url" "$2"
}
saved() { find "$dl" -type f -name '*.zip' | wc -l; }

dl=$work/dl
# Warm-up: the simulator computes the payload's digest once, and each klant's first backup of
# the month is restore-tested (a round with those is not a batch's usual time).
echo "warm-up (the simulator's digest, the month's restore tests)" >&2
curl_all /dev/null 0
kluis_all /dev/null
rm -rf "$dl"
# place NAME DIR DURABLE: the rounds with the files going to DIR. On disk the run right after
# curl's is slower, by up to a third (measured 2026-11-28: the disk still busy with the burst of
# curl's closing `sync`, as this VM does not see), so the order changes each round: with a
# baseline, curl first and the two builds in turn right after it (each in as many rounds as
# the other with an even ROUNDS; curl itself never follows curl, so on disk the ratio against
# curl is the harsher for Kluis); without, Kluis and curl in turn first (each follows the
# other's run in every other round).
place() {
  dl=$2
  local order i who
  for i in $(seq "$rounds"); do
    echo "$1, round $i/$rounds" >&2
    if [ -n "$baseline" ]; then
      order="curl kluis baseline"; [ $((i % 2)) = 1 ] || order="curl baseline kluis"
    else
      order="kluis curl"; [ $((i % 2)) = 1 ] || order="curl kluis"
    fi
    for who in $order; do
      case $who in
        kluis)
          kluis_all "$work/kluis-$1"
          [ "$(saved)" = "$klanten" ] || { echo "kluis saved $(saved) of $klanten" >&2; exit 1; } ;;
        baseline)
          kluis_all "$work/baseline-$1" "$baseline"
          [ "$(saved)" = "$klanten" ] || { echo "the baseline saved $(saved) of $klanten" >&2; exit 1; } ;;
        curl) curl_all "$work/curl-$1" "$3" ;;
      esac
    done
  done
  rm -rf "$dl"
}
for p in $places; do
  case $p in
    disk) place disk "$work/dl" 1 ;;
    memory) place memory "$shm/dl" 0 ;;
  esac
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
total_mib=$((klanten * mib))
# row NAME: "kluis s (MiB/s)  curl s (MiB/s)  ratio"; sets ratio_NAME.
row() {
  local k c r
  k=$(cut -d' ' -f1 "$work/kluis-$1" | median)
  c=$(cut -d' ' -f1 "$work/curl-$1" | median)
  r=$(awk -v k="$k" -v c="$c" 'BEGIN{printf "%.2f", k/c}')
  printf -v "ratio_$1" '%s' "$r"
  printf '%-8s kluis %6.2f s (%4.0f MiB/s)   curl %6.2f s (%4.0f MiB/s)   ratio %s\n' "$1" "$k" \
    "$(awk -v m="$total_mib" -v s="$k" 'BEGIN{print m/s}')" "$c" "$(awk -v m="$total_mib" -v s="$c" 'BEGIN{print m/s}')" "$r"
  echo "         each round (s): kluis $(cut -d' ' -f1 "$work/kluis-$1" | tr '\n' ' ')  curl $(cut -d' ' -f1 "$work/curl-$1" | tr '\n' ' ')"
  if [ -n "$baseline" ]; then
    local b
    b=$(cut -d' ' -f1 "$work/baseline-$1" | median)
    printf '         baseline %6.2f s, ratio %s; each round (s): %s\n' "$b" \
      "$(awk -v b="$b" -v c="$c" 'BEGIN{printf "%.2f", b/c}')" "$(cut -d' ' -f1 "$work/baseline-$1" | tr '\n' ' ')"
  fi
}
rss=$(cat "$work"/kluis-* | cut -d' ' -f2 | sort -n | tail -1)
rss_mib=$(awk -v r="$rss" 'BEGIN{printf "%.1f", r/1024}')
echo "klanten × size: $klanten × $mib MiB ($total_mib MiB), $concurrency downloading at a time, medians of $rounds rounds"
ratio_disk=0; ratio_memory=0
for p in $places; do row "$p"; done
echo "ratio target ≤ 1.20 ($places); kluis peak RSS $rss_mib MiB (target ≤ 64)"
awk -v d="$ratio_disk" -v m="$ratio_memory" -v r="$rss_mib" 'BEGIN{exit !(d <= 1.20 && m <= 1.20 && r <= 64)}' || { echo "a target was missed" >&2; exit 1; }
