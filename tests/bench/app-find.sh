#!/usr/bin/env bash
# Benchmark: the desktop app's dashboard with an office of many klanten, and finding one by
# typing, seen from its window.
#
#   bash tests/bench/app-find.sh [KLANTEN] [ROUNDS]      (default 1000 klanten, 5 rounds)
#
# Needs the release builds (`ui/node_modules/.bin/tauri build --no-bundle`, `cargo build
# --release --bin kluis --bin kluis-sim`) and what the e2e tests need (Xvfb, dbus,
# gnome-keyring, tauri-driver, WebKitWebDriver; .ci/setup installs them). Under Xvfb and a
# private D-Bus session, KLANTEN klanten of one local kluis-sim are imported with `kluis
# profiles import` (into the app's own profiles file; ten tags),
# and the app is driven by WebDriver (ui/e2e/find.bench.mjs), measured in the page as
# app-batch.sh does (from the action until the change is painted):
#   - the dashboard with KLANTEN rows shown anew (from a klant's screen back to the
#     overview, which reads every klant's standing), ROUNDS times;
#   - a search typed into the box a character at a time ("klant 0537", then erased), each
#     keystroke until the list and the dashboard are painted narrowed; and a tag chosen.
# Targets (issue 33): the dashboard ≤ 100 ms; each keystroke ≤ 50 ms. Exits 1 when missed.
set -euo pipefail
klanten=${1:-1000}; rounds=${2:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/target/release
for b in kluis-app kluis kluis-sim; do
  [ -x "$bin/$b" ] || { echo "build first: $bin/$b is missing (see the top of this script)" >&2; exit 1; }
done

if [ "${1:-}" != --inside ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-bench-find.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  status=0
  xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- bash "$0" --inside "$work" "$klanten" "$rounds" || status=$?
  exit $status
fi
work=$2; klanten=$3; rounds=$4

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
source "$root/tests/bench/office.sh"
unlock_keyring
start_sim 0 --klanten "$klanten"

export KLUIS_DATA_DIR=$work/data KLUIS_CA_CERT=$work/sim.pem
mkdir -p "$KLUIS_DATA_DIR"
{
  echo "Naam;Gebruikersnaam;Wachtwoord;Adres;Tags"
  for i in $(seq 1 "$klanten"); do
    n=$(printf '%04d' "$i")
    echo "Klant $n;klant-$(printf '%03d' "$i");wachtwoord-$(printf '%03d' "$i");$(value base_url);groep $((i % 10))"
  done
} >"$work/klanten.csv"
echo "importing $klanten klanten" >&2
# (The app keeps its files under KLUIS_DATA_DIR; the CLI is told each file. The secrets go to a
# folder: nothing here signs in, and a keyring of 2,000 items takes minutes to fill.)
mkdir -m 700 "$work/secrets"
KLUIS_API_KEY=$(value api_key) KLUIS_PROFILES_FILE=$KLUIS_DATA_DIR/profiles.json KLUIS_HISTORY_DB=$KLUIS_DATA_DIR/history.sqlite3 KLUIS_SECRETS_DIR=$work/secrets \
  "$bin/kluis" profiles import "$work/klanten.csv" >/dev/null 2>"$work/import.log" ||
  { tail -5 "$work/import.log" >&2; exit 1; }

export WEBKIT_DISABLE_COMPOSITING_MODE=1
tauri-driver --port 4444 --native-driver "$(command -v WebKitWebDriver)" >"$work/tauri-driver.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do curl -sf http://127.0.0.1:4444/status >/dev/null && break; sleep 0.2; done
curl -sf http://127.0.0.1:4444/status >/dev/null || { echo "tauri-driver did not start" >&2; cat "$work/tauri-driver.log" >&2; exit 1; }

export KLUIS_APP_BINARY=$bin/kluis-app KLUIS_BENCH_KLANTEN=$klanten KLUIS_BENCH_ROUNDS=$rounds
cd "$root/ui"
node e2e/find.bench.mjs
