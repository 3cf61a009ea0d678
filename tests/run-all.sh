#!/usr/bin/env bash
# Every test of Kluis: Rust (core, simulator, CLI, desktop logic, Tauri commands), the relay on
# a real PostgreSQL, the real keyring, the UI's Vitest suite, the Windows build under Wine, the release build with its .deb,
# and the end-to-end tests in the real webview. Run `bash .ci/setup` first on a fresh machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"

echo "== UI build and unit tests (Vitest)"
(cd ui && npm run build --silent && npx vitest run)

echo "== Rust tests"
cargo test --workspace --locked

echo "== The relay on a real PostgreSQL (a throw-away cluster; tests/postgres/run.sh)"
bash tests/postgres/run.sh

# (--workspace, as above: selecting packages with -p would unify their features differently
# and build every dependency again.)
echo "== The OS keyring and desktop notifications (Secret Service, a stand-in notification daemon, in a private D-Bus session)"
dbus-run-session -- bash -c '
  export HOME=$(mktemp -d) CARGO_HOME=${CARGO_HOME:-'"$HOME"'/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-'"$HOME"'/.rustup}
  echo -n keyring-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  cargo test --workspace --locked --test keyring --test notify --test profiles -- --ignored
  # Last: it locks the keyring, which nobody can unlock again in this session.
  cargo test --workspace --locked --test locked_keyring -- --ignored'

echo "== Windows: the cross-built kluis.exe under Wine (tests/windows/run.sh; says so plainly when it cannot run here)"
bash tests/windows/run.sh
if [ "${CI:-}" = true ]; then rm -rf target/x86_64-pc-windows-gnu; fi

echo "== Release build and .deb"
# On CI nothing reads the debug build again: it goes before the release build is made, so the
# two never need the disk at once (a CI machine once ran out of it here, building zbus).
if [ "${CI:-}" = true ]; then
  du -sh target/debug 2>/dev/null | awk '{print "debug build output, removed: " $1}'
  rm -rf target/debug
fi
df -h . | tail -1 | awk '{print "disk free: " $4}'
cargo build --release --locked --bin kluis-sim
ui/node_modules/.bin/tauri build --bundles deb

echo "== End to end (tauri-driver + WebKitWebDriver under Xvfb)"
bash tests/e2e/run.sh
