#!/usr/bin/env bash
# End-to-end tests of the desktop app (see ui/e2e/app.e2e.mjs, and laptop.e2e.mjs on a laptop's
# screen). Needs the binaries of the test build, `cargo test-all --no-run` (the app with its
# pages embedded, and kluis-sim; or another build's, named by KLUIS_E2E_BIN_DIR); screenshots
# of each screen, in English and Dutch, are kept in tests/e2e/artifacts/ (taken from Xvfb's
# framebuffer file, -fbdir, not through WebDriver).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-e2e.XXXXXX")
export PATH="$HOME/.cargo/bin:$PATH"
status=0
rm -rf "$root/tests/e2e/artifacts"; mkdir -p "$root/tests/e2e/artifacts"
# screen WxH, tests: one X server and session of its own for each screen.
on_screen() {
  local screen=$1 tests=$2 dir="$work/$1"
  mkdir -p "$dir/fb"
  KLUIS_FBDIR="$dir/fb" KLUIS_E2E_TESTS=$tests \
    xvfb-run -a -s "-screen 0 ${screen}x24 -fbdir $dir/fb" dbus-run-session -- bash "$root/tests/e2e/session.sh" "$dir" || status=$?
  cp -r "$dir/screenshots/." "$root/tests/e2e/artifacts/" 2>/dev/null || true
  [ $status = 0 ] || { echo "--- tauri-driver log ($screen)"; tail -50 "$dir/tauri-driver.log" 2>/dev/null || true; } >&2
}
# Everything on a large screen; then the app on an office laptop's (its window, its dashboard).
# Each test file is named here: one added beside them without a screen would never run.
for file in "$root"/ui/e2e/*.e2e.mjs; do
  case $(basename "$file") in app.e2e.mjs | laptop.e2e.mjs) ;; *) echo "tests/e2e/run.sh: name $(basename "$file")'s screen" >&2; exit 1 ;; esac
done
on_screen 1920x1080 e2e/app.e2e.mjs
[ $status = 0 ] && on_screen 1366x768 e2e/laptop.e2e.mjs
# The window and kluis-tray handing the plans to each other (no WebDriver: the programs alone).
if [ $status = 0 ]; then
  mkdir -p "$work/tray"
  xvfb-run -a -s "-screen 0 1366x768x24" dbus-run-session -- bash "$root/tests/e2e/tray.sh" "$work/tray" || status=$?
fi
rm -rf "$work"
exit $status
