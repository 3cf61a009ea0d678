#!/usr/bin/env bash
# The Windows build tested under Wine (Debian's wine64), in a throw-away WINEPREFIX:
#
# 1. tests/windows/build.sh: kluis.exe, kluis-relay.exe, kluis-app.exe and kluis-tray.exe,
#    cross-built, and the Windows unit-test binaries, in one profile (dev: its dependencies are optimised, as in
#    every test build here) and in a target directory of their own, target/cross (so that this
#    build can run beside the Linux one: tests/run-all.sh starts it in the background);
# 2. the Windows kluis.exe runs the backup flow against the Linux simulator over TLS
#    (kluis-cli's tests/it/windows.rs: environment, backup, history, resume after a kill, exit
#    codes, the folders it uses, Task Scheduler), and kluis-tray.exe (kluis-tray's
#    tests/tray.rs: the plans kept, one instance, --quit over its pipe, its icon);
# 3. the installers (tests/windows/installer.sh: the per-user and the per-machine MSI and the
#    setup, signed with a throw-away code-signing certificate, and a next version of them)
#    verified, installed silently, upgraded and uninstalled; kluis-tray installing an update
#    by itself, the setup stopping it and starting it again (kluis-cli's tests/it/installer.rs);
# 4. the unit tests that know Windows (file names, owner-only files and pipes, the link to
#    kluis-tray, its icon, the app's background threads' priority) run as Windows test
#    binaries under Wine, in a session with an X display (Xvfb);
# 5. the desktop app's logic: kluis-desktop's app tests (the in-process demo) and the Tauri
#    commands on Tauri's mock runtime, as Windows test binaries under Wine.
#
#   bash tests/windows/run.sh          # all of it
#   bash tests/windows/run.sh setup    # what it needs installed (exits 1 with the reason when it cannot be had)
#   bash tests/windows/run.sh build    # 1 (what tests/run-all.sh runs in the background)
#   bash tests/windows/run.sh test     # 2 to 5, after build
#
# The desktop app cannot run here (Wine has no WebView2 runtime): it is compiled, not run.
# When the Windows target or Wine cannot be installed on this machine, this says plainly that
# the Windows tests did not run, and why, and exits 0 (CI goes on with the rest).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
target=x86_64-pc-windows-gnu
phase=${1:-all}
# Only the Windows cargo invocations use this directory (the Linux test driver below uses the
# workspace's target/, which holds it already built).
cross_dir="$root/target/cross"

setup() {
  local setup_output
  if ! setup_output=$(bash tests/windows/setup.sh 2>&1); then
    echo "$setup_output" | tail -5
    echo "!! The Windows tests DID NOT RUN: what they need (above) could not be installed on this machine."
    return 1
  fi
}

# The Windows test binaries: their crates and targets, built in one cargo invocation so that
# every crate is compiled once, with one set of features (an invocation per binary compiled
# most of the workspace's dependencies again for each: minutes, in CI's critical path). The
# test phase runs them directly (a cargo call there could resolve features differently and
# compile again); $tests_list lists each as "crate-folder target path".
test_selection=(-p kluis-core -p kluis-private -p kluis-desktop -p kluis-app -p kluis-update
  -p kluis-restore -p kluis-tray -p kluis-reporting --features kluis-app/custom-protocol --lib --test it --test commands)
tests_list="$cross_dir/windows-tests.tsv"

build() {
  CARGO_TARGET_DIR="$cross_dir" bash tests/windows/build.sh --profile dev
  echo "== Windows: the test binaries (unit tests, the app's logic and its commands)"
  CARGO_TARGET_DIR="$cross_dir" cargo test --locked --target "$target" --no-run \
    --message-format json-render-diagnostics "${test_selection[@]}" \
    | python3 -c '
import json, sys
for line in sys.stdin:
    if not line.startswith("{"):
        continue
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        folder = m["manifest_path"].rsplit("/", 1)[0]
        print(folder, m["target"]["name"], m["executable"], sep="\t")
' >"$tests_list.new"
  mv "$tests_list.new" "$tests_list"
  # The app's test binary loads WebView2Loader.dll (Microsoft's, from webview2-com-sys, which
  # the build puts beside the programs) from its own folder: it does not create a webview.
  cp "$cross_dir/$target/debug/WebView2Loader.dll" "$cross_dir/$target/debug/deps/"
}

# windows_test CRATE_FOLDER TARGET [FILTER…]: that crate's Windows test binary under Wine, run
# from the crate's folder as cargo runs tests.
windows_test() {
  local folder=$root/$1 name=$2 exe
  shift 2
  exe=$(awk -F '\t' -v f="$folder" -v t="$name" '$1 == f && $2 == t { print $3 }' "$tests_list")
  [ -n "$exe" ] || { echo "!! no Windows test binary $name in $folder: run the build first" >&2; return 1; }
  # (Into a file, not a pipe: a Wine process left running with the output open would keep a
  # pipe's reader waiting for ever.)
  local log status=0
  log=$(mktemp)
  # (A time limit: a test binary that hangs under Wine would otherwise stall CI.)
  (cd "$folder" && timeout 600 "$wine" "$exe" "$@") >"$log" 2>&1 || status=$?
  cat "$log"
  [ "$status" = 0 ] && { rm -f "$log"; return 0; }
  # A Rust test binary says "running N tests" before anything else. One that ended with nothing
  # said never started a test (Wine's start-up failing: seen once, exit 1 and no line, with
  # WINEDEBUG=-all hiding why). That, and only that, is run once more, with Wine's errors shown,
  # so that a next time says why; a test that ran and failed is never run again.
  if ! grep -q '^running [0-9]' "$log"; then
    rm -f "$log"
    echo "!! FLAKY START: the Windows test binary $name ended, exit $status, before it ran a test: once more, with Wine's errors shown"
    (cd "$folder" && WINEDEBUG=err+all,+seh timeout 600 "$wine" "$exe" "$@")
    return
  fi
  rm -f "$log"
  return "$status"
}

test_under_wine() {
  local wine=/usr/lib/wine/wine64   # Debian's wine64 keeps its loader off PATH
  [ -x "$wine" ] || wine=$(command -v wine64 || true)
  if [ -z "$wine" ]; then
    echo "!! The Windows tests DID NOT RUN: wine64 is installed but its loader was not found."
    return 0
  fi
  echo "(kluis-app.exe is built but not run: Wine has no WebView2 runtime.)"

  work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-wine.XXXXXX")
  export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=;bcryptprimitives=n"
  server=$(dirname "$wine")/wineserver
  trap '"$server" -k 2>/dev/null || true; rm -rf "$work"' EXIT

  # An X display for the whole Wine session: kluis-tray's icon is a window (a program that
  # makes one in a session started without a display waits for ever). Its number is read from
  # a FIFO Xvfb writes once ready: no waiting by the clock.
  mkfifo "$work/display"
  Xvfb -displayfd 3 -nolisten tcp 3>"$work/display" 2>/dev/null &
  xvfb=$!
  trap '"$server" -k 2>/dev/null || true; kill "$xvfb" 2>/dev/null || true; rm -rf "$work"' EXIT
  local display=""
  read -r -t 120 display <"$work/display" || true   # (a bound, should it hang)
  [ -n "$display" ] || { echo "!! Xvfb did not start" >&2; return 1; }
  export DISPLAY=":$display"

  echo "== Windows: a Wine prefix"
  mkdir -p "$WINEPREFIX"
  "$wine" wineboot --init >/dev/null 2>&1
  # A program that crashes ends (as without a display), with no dialog waiting for a click.
  "$wine" reg add 'HKCU\Software\Wine\WineDbg' /v ShowCrashDialog /t REG_DWORD /d 0 /f >/dev/null 2>&1
  # The prefix's first session leaves the service database locked (the Task Scheduler service
  # then fails to start, error 1055): a new session starts its services cleanly.
  "$server" -k 2>/dev/null || true   # (none left running is as good)
  # One server for every test's process, for the whole run (ended by the trap above): with a
  # timeout (once 60 s), a stage slower than it on a loaded machine let the server exit, and
  # the next program's new server read the registry back while the old one was still writing
  # it out — once, an installer's Apps entry read as not there at all.
  "$server" -p
  # Wine's services start with the session's first program and keep its output open: started
  # here, they hold /dev/null, not a test's pipes (whose reader would wait for them for ever).
  "$wine" wineboot >/dev/null 2>&1 </dev/null
  # Wine 8 has no bcryptprimitives.dll, whose ProcessPrng Rust's standard library uses for random
  # numbers on Windows 10 and 11: a stand-in (tests/windows/process-prng.c) in this prefix only.
  x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
    tests/windows/process-prng.c tests/windows/process-prng.def

  # A new session's first program has once ended at once, exit 1 and no output, while Wine's
  # services were still starting (a Wine start-up hiccup: kluis always says why it fails). The
  # tests begin once a program has run; a kluis.exe that never runs fails them as before.
  for try in 1 2 3; do
    "$wine" "$cross_dir/$target/debug/kluis.exe" --version >/dev/null 2>&1 </dev/null && break
    echo "(Wine's first program did not run, try $try; again.)"
  done

  echo "== Windows: kluis.exe under Wine against the Linux simulator"
  # (`cargo test-all`, as tests/run-all.sh: the test driver reuses the workspace's build.)
  # (A time limit: a Wine program left holding a test's output would otherwise stall CI.)
  KLUIS_WINE="$wine" KLUIS_WINDOWS_BIN="$cross_dir/$target/debug" timeout 900 \
    cargo test-all --test it -- --ignored windows:: --test-threads 1

  echo "== Windows: kluis-tray.exe under Wine (the plans kept, one instance, --quit over its pipe, its icon)"
  KLUIS_WINE="$wine" KLUIS_WINDOWS_BIN="$cross_dir/$target/debug" timeout 300 \
    cargo test-all --test tray -- --ignored windows_
  windows_test src-tauri/crates/kluis-tray kluis_tray

  echo "== Windows: the installers (MSI, setup) built, signed with a test certificate, installed under Wine"
  local signing="$work/signing" packages="$work/packages"
  test_certificate "$signing"
  for version in 0.1.0 0.1.1; do   # (0.1.1: the upgrade)
    CARGO_TARGET_DIR="$cross_dir" bash tests/windows/installer.sh --profile dev --version "$version" \
      --out "$packages/$version" --sign "$signing/chain.pem" "$signing/signer.key" --fast >/dev/null
  done
  KLUIS_WINE="$wine" KLUIS_WINDOWS_INSTALLERS="$packages" KLUIS_SIGNING_CA="$signing/ca.pem" timeout 900 \
    cargo test-all --test it -- --ignored installer:: --test-threads 1

  echo "== Windows: unit tests as Windows binaries under Wine"
  # File names, owner-only files (ACLs, and the owner-only pipe a window talks to kluis-tray
  # over), the app's background threads' priority, a running program in an update's way.
  windows_test src-tauri/crates/kluis-core kluis_core filename::
  windows_test src-tauri/crates/kluis-private kluis_private files::
  # How an install is told, the registry read, no update server from the environment in a
  # build not made for tests; a file this restore wrote known by its file index.
  windows_test src-tauri/crates/kluis-update kluis_update install:: publisher::
  windows_test src-tauri/crates/kluis-restore kluis_restore restore::tests same_name::
  windows_test src-tauri/crates/kluis-desktop kluis_desktop runtime:: mirror:: app::installing::
  # The name and icon the notifications show, registered for the user.
  windows_test src-tauri/crates/kluis-reporting kluis_reporting app_identity::

  echo "== Windows: the app's logic (the in-process demo) and its Tauri commands under Wine"
  # kluis-desktop's app tests: the demo's simulator in the process, a backup staged, saved,
  # cancelled, refused, a restart; a window following kluis-tray's backups over its pipe; the
  # commands through Tauri's IPC on its mock runtime (no webview: Wine has no WebView2), and
  # Tauri's updater plugin checking a setup. The rest of kluis-desktop's tests pass under Wine
  # too (about 150 s more); they hold no Windows-specific logic beyond what these and the unit
  # tests above reach.
  windows_test src-tauri/crates/kluis-desktop it app:: tray_window::
  windows_test src-tauri commands
}

# test_certificate DIR: a throw-away code-signing CA (DIR/ca.pem) and a publisher's certificate
# it issued (DIR/chain.pem, the publisher's first; its key DIR/signer.key), valid two days.
test_certificate() {
  local dir=$1
  mkdir -p "$dir"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Kluis test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=Kluis test publisher" \
    -keyout "$dir/signer.key" -out "$dir/signer.csr" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=codeSigning\n' >"$dir/signer.ext"
  openssl x509 -req -days 2 -in "$dir/signer.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -extfile "$dir/signer.ext" -out "$dir/signer.pem" 2>/dev/null
  cat "$dir/signer.pem" "$dir/ca.pem" >"$dir/chain.pem"
}

case "$phase" in
  setup) setup ;;
  build) build ;;
  test) test_under_wine ;;
  all) setup || exit 0; build; test_under_wine ;;
  *) echo "usage: bash tests/windows/run.sh [setup|build|test]" >&2; exit 2 ;;
esac
