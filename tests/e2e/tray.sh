#!/usr/bin/env bash
# The window and kluis-tray hand the plans to each other (issue 44), with the test build's real
# programs: kluis-app's window under Xvfb, kluis-tray's menu clicked over D-Bus as a tray host
# clicks it (this session has no tray host, like stock GNOME), and who holds the data folder's
# background right read from the kernel's lock table (/proc/locks). Runs inside `xvfb-run -a
# dbus-run-session` (tests/e2e/run.sh), with `bash tests/e2e/tray.sh WORK`.
#   0. Started at login (`kluis-app --hidden`) with a plan set: no window, kluis-tray keeps it;
#      `kluis-tray --quit` ends it.
#   1. The window's process holds the right while its window is open.
#   2. Closing the window with a plan set ends that process and starts kluis-tray, which takes
#      the right and says in a notification where Kluis went (no tray icon on this desktop).
#   3. The tray's "Open Kluis" opens a window again; kluis-tray keeps the right.
#   4. The tray's "Backup all now" backs the klant up (in kluis-tray; the open window is a guest).
#   5. The tray's "Quit Kluis" ends kluis-tray, and the open window takes the right over.
#   6. Closing that window hands the plans to a new kluis-tray again.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
bin=${KLUIS_E2E_BIN_DIR:-$root/target/debug}
export HOME="$work/home"; mkdir -p "$HOME"
echo -n e2e-keyring-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null

pids=()
# This test's processes of a program (those on its data folder), not another Kluis's.
ours() {
  local p
  for p in $(pgrep -x "$1" || true); do
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "KLUIS_DATA_DIR=$work/data" && echo "$p"
  done
  return 0
}
cleanup() {
  for p in "${pids[@]}" $(ours kluis-tray) $(ours kluis-app); do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
fail() { echo "tests/e2e/tray.sh: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done; exit 1; }
# until SECONDS WHAT COMMAND…: COMMAND succeeds within SECONDS (a bound for slow machines, not
# a measured wait), or the test fails saying WHAT.
until_true() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@"; do [ $SECONDS -lt $end ] || fail "$what"; sleep 0.2; done
}

# The desktop's notifications are written down by the simulator (it owns their bus name).
notes="$work/notifications.jsonl"
"$bin/kluis-sim" --ca-out "$work/sim-ca.pem" --callback-delay-ms 0 --notifications-out "$notes" >"$work/sim.env" 2>"$work/sim.log" &
pids+=($!)
until_true 20 "kluis-sim starts" grep -q '^ready' "$work/sim.env"
value() { grep "^$1=" "$work/sim.env" | cut -d= -f2-; }

export KLUIS_DATA_DIR="$work/data" KLUIS_CA_CERT="$work/sim-ca.pem" KLUIS_E2E_SAVE_DIR="$work/saved"
export WEBKIT_DISABLE_COMPOSITING_MODE=1
mkdir -p "$KLUIS_DATA_DIR" "$KLUIS_E2E_SAVE_DIR"
kluis() {
  KLUIS_PROFILES_FILE="$KLUIS_DATA_DIR/profiles.json" KLUIS_HISTORY_DB="$KLUIS_DATA_DIR/history.sqlite3" \
    "$bin/kluis" "$@" >>"$work/kluis.log" 2>&1
}
printf '%s\n%s\n' "$(value api_key)" "$(value password)" |
  KLUIS_BASE_URL=$(value base_url) KLUIS_USERNAME=$(value username) kluis profiles add Bakkerij --stdin ||
  fail "adding the klant"
# (Twelve hours away: no plan of its own is due while the test runs.)
kluis plan Bakkerij --daily "$(date -d '+12 hours' +%H:%M)" || fail "planning the klant"

lock="$KLUIS_DATA_DIR/background.lock"
# The PID holding the background right (none: empty).
holder() {
  [ -e "$lock" ] || return 0
  awk -v ino=":$(stat -c %i "$lock")" '$2 == "FLOCK" && substr($6, length($6) - length(ino) + 1) == ino {print $5}' /proc/locks
}
held_by() { [ "$(holder)" = "$1" ]; }
windows() { xdotool search --onlyvisible --name '^Kluis' 2>/dev/null || true; }
shown() { [ -n "$(windows)" ]; }
# (A process that ended is gone, also while its parent has not reaped it yet: a zombie.)
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
# (Listed again until one takes the close: a window GTK makes and ends while a window starts
# can vanish between the listing and the message, and xdotool's listing then breaks off.)
ask_to_close() { /usr/bin/python3 "$root/tests/e2e/close-window.py" $(xdotool search --name '^Kluis' 2>/dev/null) 2>/dev/null; }
close_window() { until_true 20 "the window takes the close" ask_to_close; }
tray_pid() { ours kluis-tray | head -1; }
source "$root/tests/e2e/tray-bus.sh"
tray_up() { [ -n "$(tray_pid)" ] && [ -n "$(tray_item "$(tray_pid)")" ]; }
click() { menu_click "$(tray_item "$(tray_pid)")" "$1" || fail "no '$1' in the tray menu"; }

echo "0. started at login with a plan set: kluis-tray, and no window"
"$bin/kluis-app" --hidden >"$work/login.log" 2>&1 || fail "kluis-app --hidden failed"
until_true 30 "kluis-tray starts at login" tray_up
until_true 20 "kluis-tray takes the background right" held_by "$(tray_pid)"
! shown || fail "no window opens at login"
tray=$(tray_pid)
# (Asked as on a desktop without a tray icon to click: kluis-tray --quit.)
"$bin/kluis-tray" --quit || fail "kluis-tray --quit failed"
until_true 30 "kluis-tray ends" gone "$tray"
[ -z "$(holder)" ] || fail "nobody holds the background right once kluis-tray quit"

echo "1. the window's process holds the right while its window is open"
"$bin/kluis-app" >"$work/app.log" 2>&1 &
app=$!
until_true 60 "the window is shown" shown
until_true 20 "the window's process takes the background right" held_by "$app"

echo "2. closing the window hands the plans to kluis-tray"
close_window
until_true 30 "the window's process ends once its window is closed" gone "$app"
until_true 30 "kluis-tray starts and puts up its menu" tray_up
tray=$(tray_pid)
until_true 20 "kluis-tray takes the background right" held_by "$tray"
until_true 20 "a notification says where Kluis went" grep -q 'no tray icon' "$notes"
[ -z "$(ours kluis-app)" ] || fail "no window's process is left"

echo "3. the tray's Open Kluis opens the window; kluis-tray keeps the plans"
click "Open Kluis"
until_true 60 "the window opens again" shown
app=$(ours kluis-app | head -1)
held_by "$tray" || fail "kluis-tray keeps the background right while a window is open (held by $(holder))"

echo "4. the tray's Backup all now backs up (kluis-tray's backup: the window only shows it)"
click "Backup all now"
saved_one() { [ -n "$(find "$KLUIS_E2E_SAVE_DIR" -type f -name '*.zip' -print -quit)" ]; }
until_true 120 "the tray's backup is saved" saved_one

echo "5. Quit Kluis ends kluis-tray; the open window takes the plans over"
click "Quit Kluis"
until_true 30 "kluis-tray ends" gone "$tray"
until_true 20 "the open window's process takes the background right" held_by "$app"

echo "6. closing that window hands the plans to a new kluis-tray"
close_window
until_true 30 "the window's process ends" gone "$app"
until_true 30 "a new kluis-tray starts" tray_up
until_true 20 "and takes the background right" held_by "$(tray_pid)"
echo "tests/e2e/tray.sh: the window and kluis-tray hand the plans to each other"
