#!/usr/bin/env bash
# Every test of Kluis: Rust (core, simulator, CLI, desktop logic, Tauri commands), the relay on
# a real PostgreSQL, the real keyring, the UI's Vitest suite, the Windows build under Wine, the
# .deb, and the end-to-end tests in the real webview. Run `bash .ci/setup` first on a fresh
# machine. Prints each stage's wall time and the total at the end (also when a stage fails).
#
# How it stays fast (docs/tests.md has the measured table):
# - One Linux build serves every stage: `cargo test-all` (.cargo/config.toml) builds the whole
#   workspace once, the app with its pages embedded (`custom-protocol`), so the e2e tests and the
#   .deb use the binaries of the test build instead of a release compile of their own.
# - The Windows build (one profile for kluis.exe, kluis-relay.exe, kluis-app.exe and the Windows
#   unit tests) starts at once in the background at the lowest CPU priority, in a target
#   directory of its own (a second cargo in target/ would wait for the first one's lock): it
#   takes the CPU the Linux build and the tests leave idle, and never slows them down.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"

stage_names=()
stage_secs=()
run_started=$SECONDS
stage() { # NAME COMMAND...: runs one stage, timed
  local name=$1 started=$SECONDS
  shift
  echo "== $name"
  "$@"
  stage_names+=("$name")
  stage_secs+=($((SECONDS - started)))
}
report() {
  local status=$? i
  echo
  echo "== Wall time per stage (tests/run-all.sh)"
  for i in "${!stage_names[@]}"; do
    printf '%6ss  %s\n' "${stage_secs[$i]}" "${stage_names[$i]}"
  done
  printf '%6ss  %s\n' $((SECONDS - run_started)) "total$([ $status = 0 ] || echo ", FAILED (exit $status)")"
  if [ -n "${windows_pid:-}" ] && kill -0 "$windows_pid" 2>/dev/null; then
    kill -- "-$windows_pid" 2>/dev/null || kill "$windows_pid" 2>/dev/null || true
  fi
}
trap report EXIT

ui() { (cd ui && npm run build --silent && npx vitest run); }
stage "UI: type check, build and unit tests (Vitest)" ui

# The Windows build, in the background (see the top). Its set-up (apt, rustup) runs first, in
# the foreground: two package installs must not run at once.
windows_log=$(mktemp "${TMPDIR:-/tmp}/kluis-windows-build.XXXXXX")
windows_pid=""
windows_ready=false
windows_setup() {
  if bash tests/windows/run.sh setup; then windows_ready=true; fi
}
stage "Windows: set-up (mingw-w64, Wine, the Rust target)" windows_setup
if $windows_ready; then
  set -m   # its own process group, so that report() can stop all of it
  nice -n 19 bash tests/windows/run.sh build >"$windows_log" 2>&1 &
  windows_pid=$!
  set +m
fi

# Every cargo invocation below goes through `cargo test-all`: the same packages and features
# each time, so nothing is built twice.
stage "Rust: the test build (every crate, test and binary, once)" cargo test-all --no-run
stage "Rust: tests" cargo test-all
stage "The relay on a real PostgreSQL (tests/postgres/run.sh)" bash tests/postgres/run.sh
stage "Copies to S3 against a real S3 server (moto, tests/s3/run.sh)" bash tests/s3/run.sh
stage "Copies to SFTP against a real SFTP server (OpenSSH, tests/sftp/run.sh)" bash tests/sftp/run.sh
stage "The recovery drill on a folder, S3 and SFTP at once (tests/recovery/drill.sh)" bash tests/recovery/drill.sh

keyring_and_notifications() {
  dbus-run-session -- bash -c '
    set -euo pipefail
    export HOME=$(mktemp -d) CARGO_HOME=${CARGO_HOME:-'"$HOME"'/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-'"$HOME"'/.rustup}
    echo -n keyring-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    cargo test-all --test it -- --ignored keyring:: notify:: profiles::
    # Last: it locks the keyring, which nobody can unlock again in this session.
    cargo test-all --test it -- --ignored keyring_locked::'
}
stage "The OS keyring and desktop notifications (Secret Service, a stand-in notification daemon, in a private D-Bus session)" keyring_and_notifications

deb() {
  # The .deb of the app the test build made (Tauri's bundler packs the built binary), with the
  # test build's kluis-tray in place of the release one tauri.conf.json builds and names.
  ui/node_modules/.bin/tauri bundle --debug --bundles deb --features custom-protocol \
    --config '{"build":{"beforeBundleCommand":"true"},"bundle":{"linux":{"deb":{"files":{"/usr/bin/kluis-tray":"../target/debug/kluis-tray"}}}}}'
  local deb info contents
  deb=$(ls target/debug/bundle/deb/*.deb)
  # (Read whole, then searched: `dpkg-deb | grep -q` fails under pipefail when grep stops early.)
  info=$(dpkg-deb --info "$deb")
  contents=$(dpkg-deb --contents "$deb")
  grep -q '^ *Package: kluis$' <<<"$info" || { echo "$deb: not Kluis's package" >&2; return 1; }
  grep -Eq ' (\./)?usr/bin/kluis-app$' <<<"$contents" || { echo "$deb: no /usr/bin/kluis-app" >&2; return 1; }
  grep -Eq ' (\./)?usr/bin/kluis-tray$' <<<"$contents" || { echo "$deb: no /usr/bin/kluis-tray" >&2; return 1; }
  # Its menu entry: Kluis, and the action that ends kluis-tray where no tray shows its menu.
  local entry
  entry=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards '*usr/share/applications/*.desktop')
  grep -q '^Exec=kluis-app$' <<<"$entry" || { echo "$deb: its menu entry does not start kluis-app" >&2; return 1; }
  grep -q '^Exec=/usr/bin/kluis-tray --quit$' <<<"$entry" || { echo "$deb: its menu entry has no 'Stop Kluis running in the background'" >&2; return 1; }
  echo "$deb: $(grep -c . <<<"$contents") entries, /usr/bin/kluis-app and kluis-tray among them, a menu entry with its quit action"
  # Installed and upgraded from a signed apt repository, in a private root.
  bash tests/linux/apt.sh "$deb"
}
stage "The .deb, and its signed apt repository" deb
stage "End to end (tauri-driver + WebKitWebDriver under Xvfb)" bash tests/e2e/run.sh

windows() {
  $windows_ready || return 0   # (its set-up said why, above)
  local status=0
  wait "$windows_pid" || status=$?
  windows_pid=""
  tail -n 40 "$windows_log"
  rm -f "$windows_log"
  [ $status = 0 ] || { echo "The Windows build failed (above)." >&2; return $status; }
  bash tests/windows/run.sh test
}
stage "Windows: the rest of its build (in the background until now), then kluis.exe, the installers and the unit tests under Wine" windows
if [ "${CI:-}" = true ]; then rm -rf target/cross; fi
