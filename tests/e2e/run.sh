#!/usr/bin/env bash
# End-to-end tests of the desktop app (see ui/e2e/app.e2e.mjs). Needs the binaries of the test
# build, `cargo test-all --no-run` (the app with its pages embedded, and kluis-sim; or another
# build's, named by KLUIS_E2E_BIN_DIR); screenshots of each
# screen, in English and Dutch, are kept in tests/e2e/artifacts/ (taken from Xvfb's
# framebuffer file, -fbdir, not through WebDriver).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-e2e.XXXXXX")
export PATH="$HOME/.cargo/bin:$PATH"
status=0
export KLUIS_FBDIR="$work/fb"; mkdir -p "$KLUIS_FBDIR"
xvfb-run -a -s "-screen 0 1920x1080x24 -fbdir $KLUIS_FBDIR" dbus-run-session -- bash "$root/tests/e2e/session.sh" "$work" || status=$?
rm -rf "$root/tests/e2e/artifacts"; mkdir -p "$root/tests/e2e/artifacts"
cp -r "$work/screenshots/." "$root/tests/e2e/artifacts/" 2>/dev/null || true
[ $status = 0 ] || { echo "--- tauri-driver log"; tail -50 "$work/tauri-driver.log" 2>/dev/null; } >&2
rm -rf "$work"
exit $status
