#!/usr/bin/env bash
# Benchmark: `kluis profiles import` of an office's list of klanten.
#
#   bash tests/bench/import.sh [KLANTEN] [ROUNDS]      (default 500 klanten, 3 rounds)
#
# A local kluis-sim has KLANTEN klanten (--klanten); their list is a CSV file as an office's
# spreadsheet has it (name, username, password, address, plan, tags). Each round imports it
# into an empty profiles file — every klant signed in against the simulator over loopback TLS,
# 8 at a time, and saved: its secrets, the profile, the profiles file written whole each time —
# twice, alternating: with the secrets in the OS keyring (gnome-keyring's Secret Service in a
# private D-Bus session: what an office's PC does) and in an owner-only secrets folder
# (KLUIS_SECRETS_DIR). Every row must be added.
# Target (issue 33): importing 500 klanten ≤ 60 s (the keyring's time counts). Exits 1 when
# missed. Needs the release build (made here) and gnome-keyring (.ci/setup installs it).
set -euo pipefail
klanten=${1:-500}; rounds=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${1:-}" != --inside ]; then
  cd "$root"
  cargo build --release --locked --bin kluis --bin kluis-sim >&2
  work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-bench-import.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  status=0
  dbus-run-session -- bash "$0" --inside "$work" "$klanten" "$rounds" || status=$?
  exit $status
fi
work=$2; klanten=$3; rounds=$4
bin=$root/target/release
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian's time)" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
source "$root/tests/bench/office.sh"
unlock_keyring
start_sim 0 --klanten "$klanten"

# The office's list.
{
  echo "Naam;Gebruikersnaam;Wachtwoord;Adres;Plan;Tags"
  for i in $(seq 1 "$klanten"); do
    n=$(printf '%03d' "$i")
    echo "Klant $n;klant-$n;wachtwoord-$n;$(value base_url);dagelijks 02:00;groep $((i % 10))"
  done
} >"$work/klanten.csv"

export KLUIS_CA_CERT=$work/sim.pem KLUIS_API_KEY=$(value api_key)
# import OUTFILE KIND: one import into a fresh profiles file, its "seconds max_rss_kib" appended.
import() {
  local out=$1 kind=$2 run
  run=$work/run; rm -rf "$run"; mkdir -m 700 "$run" "$run/secrets"
  local env=(KLUIS_PROFILES_FILE="$run/profiles.json" KLUIS_HISTORY_DB="$run/history.sqlite3")
  [ "$kind" = folder ] && env+=(KLUIS_SECRETS_DIR="$run/secrets")
  env "${env[@]}" /usr/bin/time -f "%e %M" -o "$work/last" \
    "$bin/kluis" profiles import "$work/klanten.csv" --json >"$work/out.jsonl" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  local added; added=$(grep -c '"outcome":"added"' "$work/out.jsonl" || true)
  [ "$added" = "$klanten" ] || { echo "only $added of $klanten added" >&2; head -5 "$work/out.jsonl" >&2; exit 1; }
  cat "$work/last" >>"$out"
}
: >"$work/keyring.txt"; : >"$work/folder.txt"
for round in $(seq "$rounds"); do
  import "$work/keyring.txt" keyring
  import "$work/folder.txt" folder
  echo "round $round: keyring $(tail -1 "$work/keyring.txt" | cut -d' ' -f1) s, folder $(tail -1 "$work/folder.txt" | cut -d' ' -f1) s" >&2
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
keyring=$(cut -d' ' -f1 "$work/keyring.txt" | median)
folder=$(cut -d' ' -f1 "$work/folder.txt" | median)
rss=$(cut -d' ' -f2 "$work/keyring.txt" "$work/folder.txt" | sort -n | tail -1)
echo "import of $klanten klanten, 8 at a time, median of $rounds: keyring ${keyring} s, secrets folder ${folder} s; peak RSS $((rss / 1024)) MiB   (target ≤ 60 s)"
awk -v k="$keyring" 'BEGIN { exit !(k <= 60) }' || { echo "the target was missed" >&2; exit 1; }
