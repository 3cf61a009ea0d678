#!/usr/bin/env bash
# Signs a Kluis release's builds with the publisher's update key and writes the update
# manifest that Kluis (kluis-update) and Tauri's updater read — the signing step of
# docs/updates.md, on the publisher's offline machine.
#
#   bash tests/update/publish.sh --key kluis-update.key --version 0.2.0 \
#        --base-url https://updates.example.nl/kluis/ [--notes "What is new"] DIR
#
# DIR holds the builds as tests/windows/installer.sh and the .deb name them:
# kluis-X.Y.Z-x64-setup.exe, kluis-X.Y.Z-x64.msi, kluis-X.Y.Z-x64-machine.msi,
# kluis_X.Y.Z_amd64.deb (those present are signed). Each signature's trusted comment (which the
# signature covers) names the version, platform and file it is for —
# `version:X.Y.Z<TAB>platform:windows-x86_64<TAB>file:kluis-X.Y.Z-x64-setup.exe` — so that a
# Kluis takes only the build of its own version, platform and install kind, whatever the
# (unsigned) manifest says. Writes FILE.minisig beside each build and DIR/kluis.json, whose
# keys are Tauri's: the platform (the setup; the .deb on Linux) and the platform with the
# install kind (`windows-x86_64-msi`, `-msi-machine`, `-nsis`, `linux-x86_64-deb`). Upload the
# builds first and the manifest last, so that it never names a file that is not there yet.
# Needs `minisign` (Debian's package) and python3; minisign asks for the key's password once
# for each build unless the key has none.
set -euo pipefail

key="" version="" base="" notes=""
while [ $# -gt 1 ]; do
  case "$1" in
    --key) key=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --base-url) base=$2; shift 2 ;;
    --notes) notes=$2; shift 2 ;;
    *) break ;;
  esac
done
dir=${1:-}
if [ -z "$key" ] || [ -z "$version" ] || [ -z "$base" ] || [ ! -d "$dir" ]; then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
case "$base" in https://*) ;; *) echo "--base-url must be an https:// address" >&2; exit 2 ;; esac
base=${base%/}/
command -v minisign >/dev/null || { echo "minisign is needed: sudo apt-get install minisign" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed (it writes the manifest's JSON)" >&2; exit 2; }

# name, then the manifest keys it is listed under, then the platform it was signed for.
builds=(
  "kluis-$version-x64-setup.exe windows-x86_64,windows-x86_64-nsis windows-x86_64"
  "kluis-$version-x64.msi windows-x86_64-msi windows-x86_64"
  "kluis-$version-x64-machine.msi windows-x86_64-msi-machine windows-x86_64"
  "kluis_${version}_amd64.deb linux-x86_64,linux-x86_64-deb linux-x86_64"
)
entries=()
for build in "${builds[@]}"; do
  read -r name keys platform <<<"$build"
  [ -f "$dir/$name" ] || continue
  minisign -S -s "$key" -m "$dir/$name" -x "$dir/$name.minisig" \
    -t "$(printf 'version:%s\tplatform:%s\tfile:%s' "$version" "$platform" "$name")" >/dev/null
  signature=$(base64 -w0 "$dir/$name.minisig")
  for manifest_key in ${keys//,/ }; do
    entries+=("$(printf '"%s": {"url": "%s%s", "signature": "%s"}' "$manifest_key" "$base" "$name" "$signature")")
  done
  echo "signed $name" >&2
done
[ ${#entries[@]} -gt 0 ] || { echo "no build of Kluis $version in $dir" >&2; exit 1; }

json_string() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
{
  printf '{"version": %s, "notes": %s, "pub_date": "%s",\n "platforms": {\n' \
    "$(json_string "$version")" "$(json_string "$notes")" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  last=$((${#entries[@]} - 1))
  for i in "${!entries[@]}"; do
    printf '  %s%s\n' "${entries[$i]}" "$([ "$i" = "$last" ] || echo ,)"
  done
  printf ' }}\n'
} >"$dir/kluis.json"
echo "$dir/kluis.json"
