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

# One office of three PCs, for the office test: its hub (kluis-relay on SQLite, serving TLS with
# a throw-away CA's certificate); RECEPTIE (the kluis CLI in files of its own) joins with the
# operator's PC key, which makes the office key, plans and backs up its klant, and makes the
# join codes; THUIS joins with one, reports its klant, and is then silent: its report's time at
# the hub is set two days back, as if nothing had come from it since (a test of a day's silence
# cannot wait a day). This computer's app joins with the other code (KLUIS_E2E_JOIN_CODE).
mkdir -p "$work/hub/data"
(
  cd "$work/hub"
  ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
  openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj /CN=kluis-e2e-hub-ca
  openssl req $ec -keyout hub.key -out hub.csr -subj /CN=127.0.0.1
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n' >hub.ext
  openssl x509 -req -in hub.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile hub.ext -out hub.pem
) >"$work/hub/openssl.log" 2>&1 || { cat "$work/hub/openssl.log" >&2; exit 1; }
hub_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
hub_metrics=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
hub_relay() { "$bin/kluis-relay" "$@" --data "$work/hub/data" 2>>"$work/hub/relay.log"; }
hub_relay tenant add office >/dev/null
receptie_key=$(hub_relay tenant pc-key add office RECEPTIE)
# (The program itself in the background, not the function: $! is then the relay's own pid, and
# the clean-up ends it — a backgrounded function is a shell whose end left the relay running.)
"$bin/kluis-relay" --listen "127.0.0.1:$hub_port" --metrics-listen "127.0.0.1:$hub_metrics" \
  --tls-cert "$work/hub/hub.pem" --tls-key "$work/hub/hub.key" --data "$work/hub/data" 2>>"$work/hub/relay.log" &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$hub_metrics/readyz" >/dev/null && break; sleep 0.1; done
office_pc() { # name, kluis arguments...
  local pc=$1; shift
  KLUIS_PROFILES_FILE="$work/$pc/profiles.json" KLUIS_HISTORY_DB="$work/$pc/history.sqlite3" \
    KLUIS_SECRETS_DIR="$work/$pc/secrets" "$bin/kluis" "$@" 2>>"$work/office.log"
}
office_klant() { # pc, klant name, the simulator's klant number
  printf '%s\n%s\n' "$KLUIS_E2E_SIM_KEY" "wachtwoord-$3" |
    KLUIS_BASE_URL=$KLUIS_E2E_SIM_URL KLUIS_USERNAME="klant-$3" office_pc "$1" profiles add "$2" --stdin >>"$work/office.log"
}
office_failed() { echo "setting up the office of three PCs failed:" >&2; cat "$work/office.log" "$work/hub/relay.log" >&2; exit 1; }
mkdir -p "$work/receptie" "$work/thuis"
{
  office_klant receptie "Receptie klant" 002 &&
    office_pc receptie plan "Receptie klant" --daily 02:00 >/dev/null &&
    echo "$receptie_key" | office_pc receptie office join "https://127.0.0.1:$hub_port" --hub-ca "$work/hub/ca.pem" --stdin >/dev/null &&
    office_pc receptie backup --all --out "$work/receptie/saved" >/dev/null &&
    office_klant thuis "Thuis klant" 003 &&
    office_pc thuis plan "Thuis klant" --daily 03:00 >/dev/null &&
    office_pc receptie office invite THUIS | office_pc thuis office join --code --stdin >/dev/null &&
    python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
aged = db.execute("UPDATE office_reports SET at_ms = at_ms - 2 * 86400000 WHERE pc = ?", ("THUIS",)).rowcount
db.commit()
sys.exit(0 if aged == 1 else "THUIS has no report at the hub to age")' "$work/hub/data/relay.sqlite3"
} || office_failed
KLUIS_E2E_JOIN_CODE=$(office_pc receptie office invite BALIE) || office_failed
export KLUIS_E2E_JOIN_CODE

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
