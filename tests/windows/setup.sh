#!/usr/bin/env bash
# What the Windows build and its Wine tests need, installed when missing: the standard library
# for x86_64-pc-windows-gnu (rustup), mingw-w64's gcc (the linker, and the C compiler for
# SQLite and ring), Wine (wine64), and for the installers msitools' wixl and msibuild, NSIS and
# osslsigncode, and Xvfb (a display for kluis-tray's icon window under Wine). Exits 1 with the
# reason when one cannot be had.
set -euo pipefail
export PATH="$HOME/.cargo/bin:$PATH"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
target=x86_64-pc-windows-gnu

missing=()
for p in gcc-mingw-w64-x86-64 wine64 wixl msitools nsis osslsigncode xvfb; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! rustc --print sysroot >/dev/null 2>&1 || [ ! -d "$(rustc --print sysroot)/lib/rustlib/$target" ]; then
  command -v rustup >/dev/null 2>&1 || { echo "The Rust standard library for $target is not installed and there is no rustup to install it." >&2; exit 1; }
  rustup target add "$target" >&2
fi
