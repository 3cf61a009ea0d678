#!/usr/bin/env bash
# Benchmark: `kluis verify` against `sha256sum` (and `openssl dgst -sha256`) reading the same
# files.
#
#   bash tests/bench/verify.sh [KLANTEN] [MIB] [ROUNDS]   (default 8 klanten of 256 MiB, 5 rounds)
#
# A local kluis-sim serves KLANTEN profiles; `kluis backup --all` saves one backup of each
# (recorded in a throw-away history). Then, alternately, `sha256sum` of every file and
# `kluis verify` (which also reads back the history, compares length and digest and records each
# finding) — with the files in the page cache (warm: what hashing costs) and, where this
# machine lets root drop the cache, from the disk (cold). Prints MiB/s and the ratio to
# sha256sum. (Debian's sha256sum hashes in portable C; openssl, like Kluis's sha2, uses the
# CPU's SHA instructions where it has them: the fairer yardstick for one file at a time.)
# Needs KLANTEN × MIB of free disk and memory.
set -euo pipefail
klanten=${1:-8}; mib=${2:-256}; rounds=${3:-5}
cd "$(dirname "$0")/../.."
cargo build --release --locked --bin kluis --bin kluis-sim >&2; bin=$PWD/target/release
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-bench-verify.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

source "$PWD/tests/bench/office.sh"
start_sim "$mib"
export KLUIS_PROFILES_FILE=$work/profiles.json KLUIS_SECRETS_DIR=$work/secrets
export KLUIS_HISTORY_DB=$work/history.sqlite3 KLUIS_CA_CERT=$work/sim.pem
mkdir -m 700 "$work/secrets"
add_klanten "$klanten"
echo "saving $klanten backups of $mib MiB" >&2
"$bin/kluis" backup --all --out "$work/dl" --retries 0 >/dev/null
mapfile -t files < <(find "$work/dl" -type f -name '*.zip' | sort)
[ "${#files[@]}" = "$klanten" ] || { echo "saved ${#files[@]} of $klanten" >&2; exit 1; }

can_drop=0
if [ -w /proc/sys/vm/drop_caches ] && sync && echo 1 >/proc/sys/vm/drop_caches 2>/dev/null; then can_drop=1; fi
# timed OUT COLD CMD...: appends CMD's seconds to OUT (COLD=1: the page cache dropped first).
timed() {
  local out=$1 cold=$2; shift 2
  if [ "$cold" = 1 ]; then sync; echo 1 >/proc/sys/vm/drop_caches; else cat "${files[@]}" >/dev/null; fi
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN{print e-s}' >>"$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
total=$((klanten * mib))
speed() { awk -v m="$total" -v s="$1" 'BEGIN{print m/s}'; }
row() {
  local k s o
  k=$(median <"$work/kluis-$1"); s=$(median <"$work/sha-$1"); o=$(median <"$work/openssl-$1")
  printf '%-5s kluis verify %6.2f s (%4.0f MiB/s)   sha256sum %6.2f s (%4.0f MiB/s)   openssl %6.2f s (%4.0f MiB/s)   time vs sha256sum %.2f\n' "$1" \
    "$k" "$(speed "$k")" "$s" "$(speed "$s")" "$o" "$(speed "$o")" "$(awk -v k="$k" -v s="$s" 'BEGIN{print k/s}')"
}
for temperature in warm cold; do
  cold=0; [ "$temperature" = cold ] && cold=1
  [ "$cold" = 1 ] && [ "$can_drop" = 0 ] && { echo "cold: skipped (cannot drop the page cache here)"; continue; }
  for i in $(seq "$rounds"); do
    echo "$temperature, round $i/$rounds" >&2
    timed "$work/sha-$temperature" "$cold" sha256sum "${files[@]}"
    timed "$work/openssl-$temperature" "$cold" openssl dgst -sha256 "${files[@]}"
    timed "$work/kluis-$temperature" "$cold" "$bin/kluis" verify
  done
done
echo "$klanten files × $mib MiB ($total MiB), medians of $rounds rounds ($(nproc) cores)"
row warm
[ "$can_drop" = 1 ] && row cold
