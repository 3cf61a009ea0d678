#!/usr/bin/env bash
# The Windows build, cross-compiled on Linux for x86_64-pc-windows-gnu (mingw-w64):
# kluis.exe, kluis-relay.exe, kluis-app.exe and kluis-tray.exe, and a zip to unpack and run.
#
#   bash tests/windows/build.sh                  # all four, release, and the zip
#   bash tests/windows/build.sh --cli            # kluis.exe and kluis-relay.exe only
#   bash tests/windows/build.sh --profile dev    # another cargo profile (tests/windows/run.sh's)
#
# Output: target/x86_64-pc-windows-gnu/release/*.exe (debug/ for --profile dev; under
# $CARGO_TARGET_DIR when it is set) and target/windows/kluis-windows-x86_64.zip.
# Needs the target's standard library (rustup) and Debian's gcc-mingw-w64-x86-64; it installs
# both when they are missing (tests/windows/setup.sh). Tauri's NSIS installer is not made: its
# bundler fetches its NSIS plug-in from GitHub, which these machines cannot reach (docs/windows.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$HOME/.cargo/bin:$PATH"
target=x86_64-pc-windows-gnu
what=all
profile=release
while [ $# -gt 0 ]; do
  case "$1" in
    --cli) what=cli ;;
    --profile) profile=$2; shift ;;
    *) echo "usage: bash tests/windows/build.sh [--cli] [--profile NAME]" >&2; exit 2 ;;
  esac
  shift
done

bash tests/windows/setup.sh
target_dir=${CARGO_TARGET_DIR:-target}
out=$target_dir/$target/$([ "$profile" = dev ] && echo debug || echo "$profile")

# One cargo invocation for all the programs: they share their dependencies, built once with
# one set of features. The app is built as `tauri build` builds it, its pages embedded
# (custom-protocol); the icon and manifest come from its build script.
packages=(-p kluis-cli -p kluis-relay)
files=("$out/kluis.exe" "$out/kluis-relay.exe")
if [ "$what" = all ]; then
  [ -f ui/dist/index.html ] || (cd ui && npm run build --silent)
  packages+=(-p kluis-app --features kluis-app/custom-protocol)
  # (WebView2Loader.dll: Microsoft's, signed by it, which kluis-app.exe loads — built with the
  # GNU toolchain it is not linked in — so it goes beside the program wherever that goes.)
  files+=("$out/kluis-app.exe" "$out/WebView2Loader.dll")
  # kluis-tray.exe: the plans, the tray icon and notifications while the window is closed.
  packages+=(-p kluis-tray)
  files+=("$out/kluis-tray.exe")
  echo "== Windows: kluis.exe, kluis-relay.exe, kluis-app.exe (the desktop app; it needs Microsoft's WebView2 runtime, part of Windows 10 and 11) and kluis-tray.exe"
else
  echo "== Windows: kluis.exe and kluis-relay.exe"
fi
cargo build --profile "$profile" --locked --target "$target" "${packages[@]}"
if [ "$what" = all ]; then
  # WebView2Loader.dll from the webview2-com-sys the lock file names (tauri-build copies it
  # beside the program only when that crate's build happened to run first), for x64.
  loader=$(cargo metadata --locked --format-version 1 --filter-platform "$target" | python3 -c '
import json, os, sys
found = [p for p in json.load(sys.stdin)["packages"] if p["name"] == "webview2-com-sys"]
print(os.path.join(os.path.dirname(found[0]["manifest_path"]), "x64", "WebView2Loader.dll"))')
  cp "$loader" "$out/WebView2Loader.dll"
fi

mkdir -p "$target_dir/windows"
zip=$target_dir/windows/kluis-windows-x86_64.zip
rm -f "$zip"
python3 - "$zip" src-tauri/windows/README.txt "${files[@]}" <<'PY'
import sys, zipfile
zip_path, readme, *files = sys.argv[1:]
with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
    for f in files:
        z.write(f, "Kluis/" + f.rsplit("/", 1)[-1])
    z.writestr("Kluis/README.txt", open(readme).read().replace("\n", "\r\n"))
PY
ls -l "${files[@]}" "$zip" | awk '{print $5, $9}'
