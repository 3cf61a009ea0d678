#!/usr/bin/env bash
# Kluis's Windows installers, made on Linux from Debian's packages out of the cross-built
# programs (tests/windows/build.sh) — the Windows Installer packages with msitools (wixl,
# msibuild), the installer to double-click with NSIS (makensis) — and signed with Debian's
# osslsigncode:
#
#   bash tests/windows/installer.sh [--profile dev] [--version X.Y.Z] [--out DIR]
#                                   [--sign CERT KEY [--timestamp URL]] [--fast]
#
# Makes DIR/kluis-X.Y.Z-x64.msi (per user, no administrator rights: %LOCALAPPDATA%\Programs\
# Kluis) and DIR/kluis-X.Y.Z-x64-machine.msi (per machine, for IT: %ProgramFiles%\Kluis), both
# from src-tauri/windows/kluis.wxs — without a user interface: what `msiexec /i kluis.msi
# /qn`, Group Policy and Intune install (wixl takes no WiX UI) — and DIR/kluis-X.Y.Z-x64-
# setup.exe from src-tauri/windows/kluis.nsi (Dutch and English; for this user; /S silent). X.Y.Z is the workspace's version unless given; DIR target/windows (under
# $CARGO_TARGET_DIR when set).
#
# --sign: the programs inside, the installers and the uninstaller NSIS writes are signed (Authenticode, SHA-256) with the
# certificate chain CERT (PEM: the signing certificate first) and its private KEY (PEM), and
# timestamped by the RFC 3161 server URL when given (a publisher's real certificate: keep the
# key off the build machine's disk when you can, e.g. `-pkcs11module` of osslsigncode).
# Without --sign nothing is signed (Windows SmartScreen then warns about an unknown publisher).
# The programs are packed stripped of their symbols (mingw-w64's strip, before they are
# signed). --fast: the installer to double-click uncompressed (what the tests make: 1 s
# instead of 2 minutes of LZMA).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=x86_64-pc-windows-gnu
profile=release; version=""; out=""; cert=""; key=""; timestamp=""; fast=""
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=$2; shift ;;
    --version) version=$2; shift ;;
    --out) out=$2; shift ;;
    --sign) cert=$2; key=$3; shift 2 ;;
    --timestamp) timestamp=$2; shift ;;
    --fast) fast=1 ;;
    *) echo "usage: bash tests/windows/installer.sh [--profile dev] [--version X.Y.Z] [--out DIR] [--sign CERT KEY [--timestamp URL]] [--fast]" >&2; exit 2 ;;
  esac
  shift
done
for tool in wixl msibuild makensis osslsigncode x86_64-w64-mingw32-strip; do
  command -v "$tool" >/dev/null 2>&1 || { echo "installer.sh needs $tool: apt-get install wixl msitools nsis osslsigncode binutils-mingw-w64-x86-64" >&2; exit 1; }
done
version=${version:-$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "a Windows Installer version is X.Y.Z, not \"$version\"" >&2; exit 2; }
target_dir=${CARGO_TARGET_DIR:-target}
bin=$target_dir/$target/$([ "$profile" = dev ] && echo debug || echo "$profile")
out=${out:-$target_dir/windows}
mkdir -p "$out"

# sign FILE: FILE signed in place (osslsigncode writes a new file; the unsigned one goes).
sign() {
  [ -n "$cert" ] || return 0
  local args=(sign -h sha256 -n "Kluis" -certs "$cert" -key "$key")
  [ -n "$timestamp" ] && args+=(-ts "$timestamp")
  osslsigncode "${args[@]}" -in "$1" -out "$1.signed" >/dev/null
  mv "$1.signed" "$1"
}

# wixl reads its sources by names relative to where it runs: everything in one folder.
stage=$(mktemp -d "${TMPDIR:-/tmp}/kluis-msi.XXXXXX")
trap 'rm -rf "$stage"' EXIT
for exe in kluis-app.exe kluis.exe kluis-relay.exe kluis-tray.exe; do
  [ -f "$bin/$exe" ] || { echo "build first: $bin/$exe is missing (bash tests/windows/build.sh)" >&2; exit 1; }
  cp "$bin/$exe" "$stage/"
  x86_64-w64-mingw32-strip "$stage/$exe"
  sign "$stage/$exe"
done
# Microsoft's WebView2Loader.dll, which kluis-app.exe loads (linked dynamically by the GNU
# toolchain), as Microsoft signed it.
[ -f "$bin/WebView2Loader.dll" ] || { echo "build first: $bin/WebView2Loader.dll is missing (bash tests/windows/build.sh)" >&2; exit 1; }
cp "$bin/WebView2Loader.dll" "$stage/"
sed 's/$/\r/' src-tauri/windows/README.txt >"$stage/README.txt"
cp src-tauri/windows/kluis.wxs src-tauri/windows/kluis.nsi icons/icon.ico "$stage/"
# AUTOSTART=1 installs the Autostart feature: a Condition row, which wixl cannot write.
printf 'Feature_\tLevel\tCondition\ns38\ti2\tS255\nCondition\tFeature_\tLevel\nAutostart\t1\tAUTOSTART = "1"\n' >"$stage/Condition.idt"

for scope in perUser perMachine; do
  name=kluis-$version-x64$([ "$scope" = perMachine ] && echo -machine || true).msi
  (cd "$stage" && wixl -a x64 -D Version="$version" -D Scope="$scope" -D Bin=. -D Readme=README.txt -D Icon=icon.ico -o "$name" kluis.wxs &&
    msibuild "$name" -i Condition.idt)
  sign "$stage/$name"
  mv "$stage/$name" "$out/$name"
  echo "$out/$name"
done

# The installer to double-click; its uninstaller is signed as NSIS writes it (the script
# SIGNER signs a file in place).
nsis_args=(-V2 -DVERSION="$version" -DBIN=. -DOUTFILE="kluis-$version-x64-setup.exe")
[ -n "$fast" ] && nsis_args+=(-DFAST)
if [ -n "$cert" ]; then
  printf '%s\n' '#!/bin/sh' \
    "osslsigncode sign -h sha256 -n Kluis -certs '$(realpath "$cert")' -key '$(realpath "$key")' ${timestamp:+-ts '$timestamp'} -in \"\$1\" -out \"\$1.signed\" >/dev/null && mv \"\$1.signed\" \"\$1\"" \
    >"$stage/sign.sh"
  nsis_args+=(-DSIGNER="$stage/sign.sh")
fi
(cd "$stage" && makensis "${nsis_args[@]}" kluis.nsi >/dev/null)
sign "$stage/kluis-$version-x64-setup.exe"
mv "$stage/kluis-$version-x64-setup.exe" "$out/"
echo "$out/kluis-$version-x64-setup.exe"
