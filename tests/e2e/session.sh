#!/usr/bin/env bash
# Runs inside `xvfb-run -a dbus-run-session`: a fresh HOME with an unlocked keyring, a
# kluis-sim for the user-made profile, tauri-driver, then the WebdriverIO tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
# The binaries of the test build (`cargo test-all`, which builds the app with its pages
# embedded); KLUIS_E2E_BIN_DIR=target/release for a release build's.
bin=${KLUIS_E2E_BIN_DIR:-$root/target/debug}
export HOME="$work/home"; mkdir -p "$HOME"
echo -n e2e-keyring-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# A slow callback, so the app can be closed while a backup waits for it. It also stands in for
# the desktop's notification service on this session's bus, writing down what the app shows.
export KLUIS_E2E_NOTIFICATIONS="$work/notifications.jsonl"
# Its 50 klanten (klant-001 …) are the office's list the import test brings in.
"$bin/kluis-sim" --ca-out "$work/sim-ca.pem" --callback-delay-ms 5000 --notifications-out "$KLUIS_E2E_NOTIFICATIONS" --klanten 50 >"$work/sim.env" 2>"$work/sim.log" &
pids+=($!)
for _ in $(seq 100); do grep -q '^ready' "$work/sim.env" 2>/dev/null && break; sleep 0.1; done
export KLUIS_E2E_SIM_URL=$(grep '^base_url=' "$work/sim.env" | cut -d= -f2-)
export KLUIS_E2E_SIM_KEY=$(grep '^api_key=' "$work/sim.env" | cut -d= -f2-)
# The CAs the app trusts from the start (KLUIS_CA_CERT): this simulator's, and the stopping ones'.
cat "$work/sim-ca.pem" >"$work/trusted.pem"
export KLUIS_CA_CERT="$work/trusted.pem"
# A klant whose service is down is tried again after 2 s and 4 s instead of 1 and 2 minutes
# (the tests' Backup all waits for every klant to end).
export KLUIS_RETRY_DELAY=2
# A service with a private CA that nothing trusts until a profile is given its certificate
# (the app's certificate dialog answers with that file: KLUIS_E2E_CERTIFICATE).
"$bin/kluis-sim" --ca-out "$work/private-ca.pem" >"$work/private-sim.env" 2>"$work/private-sim.log" &
pids+=($!)
for _ in $(seq 100); do grep -q '^ready' "$work/private-sim.env" 2>/dev/null && break; sleep 0.1; done
export KLUIS_E2E_PRIVATE_SIM_URL=$(grep '^base_url=' "$work/private-sim.env" | cut -d= -f2-)
export KLUIS_E2E_PRIVATE_SIM_KEY=$(grep '^api_key=' "$work/private-sim.env" | cut -d= -f2-)
export KLUIS_E2E_CERTIFICATE="$work/private-ca.pem"
# Two services the tests stop halfway (their PIDs are given to the tests): one whose callback
# never comes in time (a service stopped while a backup waits), one whose file host serves
# slowly (stopped while a backup downloads).
start_sim() { # name, extra arguments...
  local name=$1; shift
  "$bin/kluis-sim" --ca-out "$work/$name-ca.pem" "$@" >"$work/$name.env" 2>"$work/$name.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^ready' "$work/$name.env" 2>/dev/null && break; sleep 0.1; done
  cat "$work/$name-ca.pem" >>"$KLUIS_CA_CERT"
}
start_sim stopping --callback-delay-ms 3600000
export KLUIS_E2E_STOPPING_SIM_URL=$(grep '^base_url=' "$work/stopping.env" | cut -d= -f2-) KLUIS_E2E_STOPPING_SIM_PID=${pids[-1]}
start_sim vanishing --payload-size $((64 * 1024 * 1024)) --download-bytes-per-sec $((1024 * 1024))
export KLUIS_E2E_VANISHING_SIM_URL=$(grep '^base_url=' "$work/vanishing.env" | cut -d= -f2-) KLUIS_E2E_VANISHING_SIM_PID=${pids[-1]}
export KLUIS_WEBHOOK_SITE_URL=$(grep '^webhook_site_url=' "$work/sim.env" | cut -d= -f2-)

# The lost computer of the recovery test, made with the kluis CLI in files of its own: a klant
# encrypted with a passphrase, backed up and copied to the folder the app's folder dialogs
# answer with (below), and the office's recovery kit, whose key file the app's kit dialog
# answers with (KLUIS_E2E_RECOVERY_KEY). Its secrets stay in its own folder, not this keyring.
start_sim lost --payload-size 300000
lost_url=$(grep '^base_url=' "$work/lost.env" | cut -d= -f2-)
lost_key=$(grep '^api_key=' "$work/lost.env" | cut -d= -f2-)
lost_user=$(grep '^username=' "$work/lost.env" | cut -d= -f2-)
lost_password=$(grep '^password=' "$work/lost.env" | cut -d= -f2-)
mkdir -p "$work/lost" "$work/picked"
lost_kluis() {
  KLUIS_PROFILES_FILE="$work/lost/profiles.json" KLUIS_HISTORY_DB="$work/lost/history.sqlite3" \
    KLUIS_SECRETS_DIR="$work/lost/secrets" "$bin/kluis" "$@" >>"$work/lost.log" 2>&1
}
KLUIS_BASE_URL=$lost_url KLUIS_USERNAME=$lost_user KLUIS_API_KEY=$lost_key KLUIS_PASSWORD=$lost_password \
  lost_kluis profiles add Bakker
KLUIS_ENCRYPTION_PASSPHRASE="bakker bewaart zijn brood veilig" lost_kluis encryption Bakker --passphrase
lost_kluis copy-target add NAS --folder "$work/picked"
export KLUIS_E2E_RECOVERY_KEY="$work/kit.key"
lost_kluis recovery-kit --key-file "$KLUIS_E2E_RECOVERY_KEY" --pc-name RECEPTIE
lost_kluis backup --all --out "$work/lost/saved" || { cat "$work/lost.log" >&2; exit 1; }

export KLUIS_APP_BINARY="$bin/kluis-app"
export KLUIS_DATA_DIR="$work/data" KLUIS_E2E_SAVE_DIR="$work/saved" KLUIS_SCREENSHOTS="$work/screenshots"
# What the native folder and save dialogs answer (a restore's folder, a report's place; the
# recovery test's copy target, which the lost computer above wrote to).
export KLUIS_E2E_DIALOG_FOLDER="$work/picked"
# What the import's file dialog answers: the list the import test writes there.
export KLUIS_E2E_IMPORT_FILE="$work/klanten.csv"
mkdir -p "$KLUIS_DATA_DIR" "$KLUIS_E2E_SAVE_DIR" "$KLUIS_SCREENSHOTS" "$KLUIS_E2E_DIALOG_FOLDER"
export WEBKIT_DISABLE_COMPOSITING_MODE=1

tauri-driver --port 4444 --native-driver "$(command -v WebKitWebDriver)" >"$work/tauri-driver.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do curl -sf http://127.0.0.1:4444/status >/dev/null && break; sleep 0.2; done
curl -sf http://127.0.0.1:4444/status >/dev/null || { echo "tauri-driver did not start" >&2; cat "$work/tauri-driver.log" >&2; exit 1; }

cd "$root/ui"
# The tests this screen is for (run.sh names them).
node --test --test-concurrency=1 "${KLUIS_E2E_TESTS:-e2e/app.e2e.mjs}"
