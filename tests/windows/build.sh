#!/usr/bin/env bash
# The Windows build, cross-compiled on Linux for x86_64-pc-windows-gnu (mingw-w64):
# kluis.exe, kluis-relay.exe and kluis-app.exe, and a zip to unpack and run.
#
#   bash tests/windows/build.sh            # all three, release, and the zip
#   bash tests/windows/build.sh --cli      # kluis.exe and kluis-relay.exe only (what the Wine tests need)
#
# Output: target/x86_64-pc-windows-gnu/release/*.exe and target/windows/kluis-windows-x86_64.zip.
# Needs the target's standard library (rustup) and Debian's gcc-mingw-w64-x86-64; it installs
# both when they are missing (tests/windows/setup.sh). Tauri's NSIS installer is not made: its
# bundler fetches its NSIS plug-in from GitHub, which these machines cannot reach (README, Windows).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
target=x86_64-pc-windows-gnu
what=${1:-all}

bash tests/windows/setup.sh
out=target/$target/release

echo "== Windows: kluis.exe and kluis-relay.exe"
cargo build --release --locked --target "$target" -p kluis-cli -p kluis-relay

files=("$out/kluis.exe" "$out/kluis-relay.exe")
if [ "$what" != --cli ]; then
  echo "== Windows: kluis-app.exe (the desktop app; it needs Microsoft's WebView2 runtime, part of Windows 10 and 11)"
  [ -f ui/dist/index.html ] || (cd ui && npm run build --silent)
  # Through Tauri's CLI, as the Linux release: it builds the app with its pages embedded.
  ui/node_modules/.bin/tauri build --target "$target" --no-bundle
  files+=("$out/kluis-app.exe")
fi

mkdir -p target/windows
zip=target/windows/kluis-windows-x86_64.zip
rm -f "$zip"
python3 - "$zip" "${files[@]}" <<'PY'
import sys, zipfile
zip_path, *files = sys.argv[1:]
readme = """Kluis for Windows (x86_64)

Unpack this folder anywhere (e.g. Documents\\Kluis) and start kluis-app.exe, or use kluis.exe
from a command prompt ("kluis.exe --help"). Saved passwords and keys go to the Windows
Credential Manager; settings to %APPDATA%\\Kluis\\kluis, the history to
%LOCALAPPDATA%\\Kluis\\kluis. "kluis.exe schedule install" adds a Task Scheduler task that runs
the due plans every 15 minutes.
"""
with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
    for f in files:
        z.write(f, "Kluis/" + f.rsplit("/", 1)[-1])
    z.writestr("Kluis/README.txt", readme.replace("\n", "\r\n"))
PY
ls -l "${files[@]}" "$zip" | awk '{print $5, $9}'
