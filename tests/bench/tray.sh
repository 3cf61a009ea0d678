#!/usr/bin/env bash
# Benchmark: Kluis with its window closed — `kluis-tray`, the process that keeps the plans, the
# tray icon and the notifications without a web engine (issue 44: its whole RSS ≤ 60 MiB with
# 200 klanten planned, while it waits).
#
#   bash tests/bench/tray.sh [KLANTEN] [MIB]     (default 200 klanten of 20 MiB)
#
# Needs the release builds (`cargo build --release --bin kluis --bin kluis-sim --bin
# kluis-tray`), dbus-daemon, dbus-send (dbus-bin) and gnome-keyring (.ci/setup installs them). In a private D-Bus session with
# an unlocked keyring, KLANTEN profiles of one local kluis-sim are added with `kluis profiles
# add` and each gets a daily plan twelve hours from now (so none is due); then kluis-tray runs
# on that data folder, as it does after the window closed:
#   - its RSS (and that of any child: it has none) waiting, 10 s and 60 s after its start;
#   - "Backup all now" clicked in its tray menu over D-Bus, as a tray host sends the click; its
#     peak RSS while the KLANTEN backups run (sampled every 100 ms) and how long they take;
#   - its RSS once they are done, and 60 s later (what it gives back).
# By hand only, never in CI (it takes a few minutes).
set -euo pipefail
klanten=${1:-200}; mib=${2:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/target/release
for b in kluis-tray kluis kluis-sim; do
  [ -x "$bin/$b" ] || { echo "build first: $bin/$b is missing (see the top of this script)" >&2; exit 1; }
done

if [ "${1:-}" != --inside ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-bench-tray.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  status=0
  dbus-run-session -- bash "$0" --inside "$work" "$klanten" "$mib" || status=$?
  exit $status
fi
work=$2; klanten=$3; mib=$4

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

source "$root/tests/bench/office.sh"
unlock_keyring
start_sim "$mib"
export KLUIS_DATA_DIR=$work/data KLUIS_CA_CERT=$work/sim.pem
export KLUIS_PROFILES_FILE=$KLUIS_DATA_DIR/profiles.json KLUIS_HISTORY_DB=$KLUIS_DATA_DIR/history.sqlite3
mkdir -p "$KLUIS_DATA_DIR" "$work/saved"
add_klanten "$klanten"
save_into "$work/saved"
"$bin/kluis" plan --all --daily "$(date -d "+12 hours" +%H:%M)" >/dev/null 2>&1
unset KLUIS_PROFILES_FILE KLUIS_HISTORY_DB

# Sum of VmRSS (KiB) of a process and its descendants.
tree_rss() {
  local p total=0
  for p in "$1" $(pgrep -P "$1" || true); do
    total=$((total + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
mib_of() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

source "$root/tests/e2e/tray-bus.sh"

start=$(date +%s.%N)
"$bin/kluis-tray" 2>"$work/tray.log" &
tray=$!
pids+=("$tray")
item=""
for _ in $(seq 100); do
  item=$(tray_item "$tray")
  [ -n "$item" ] && break
  sleep 0.1
done
[ -n "$item" ] || { echo "kluis-tray put up no tray item" >&2; cat "$work/tray.log" >&2; exit 1; }
ready=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
sleep 10; idle10=$(tree_rss "$tray")
sleep 50; idle60=$(tree_rss "$tray")

began=$(date +%s.%N)
menu_click "$item" "Backup all now"
peak=0
deadline=$((SECONDS + 1800))
while [ "$(find "$work/saved" -type f ! -name '.*' | wc -l)" -lt "$klanten" ]; do
  [ $SECONDS -lt $deadline ] || { echo "the batch did not end within 30 minutes" >&2; cat "$work/tray.log" >&2; exit 1; }
  now=$(tree_rss "$tray"); [ "$now" -gt "$peak" ] && peak=$now
  kill -0 "$tray" 2>/dev/null || { echo "kluis-tray ended during the batch" >&2; cat "$work/tray.log" >&2; exit 1; }
  sleep 0.1
done
took=$(awk -v a="$began" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
# (The last verification and the history's writes end just after the last file lands.)
sleep 2; after=$(tree_rss "$tray")
sleep 60; later=$(tree_rss "$tray")

cat <<REPORT
kluis-tray with $klanten klanten planned (window closed), release build:
  tray item up after          ${ready} s
  RSS waiting, 10 s           $(mib_of "$idle10") MiB   (target ≤ 60 MiB)
  RSS waiting, 60 s           $(mib_of "$idle60") MiB
  Backup all now ($klanten × $mib MiB)  ${took} s, peak RSS $(mib_of "$peak") MiB
  RSS just after              $(mib_of "$after") MiB
  RSS 60 s after              $(mib_of "$later") MiB
REPORT
