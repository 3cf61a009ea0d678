#!/usr/bin/env bash
# The signed apt repository (tests/linux/apt-repo.sh) as a Debian or Ubuntu computer uses it,
# with apt and dpkg themselves — in a private root folder, so that nothing of this machine is
# installed or changed (its package list is copied in, so the package's dependencies count as
# installed there):
#
#   bash tests/linux/apt.sh KLUIS.DEB
#
# 1. a repository of KLUIS.DEB, signed with a throw-away key, added as a `file:` source with
#    that key only (Signed-By): `apt-get install kluis` installs it;
# 2. the next build (the same package as version +1, as a release would be) published, and
#    `apt-get upgrade` updates to it;
# 3. a repository signed by another key is refused by `apt-get update`, and a package changed
#    after it was published is refused by `apt-get install` (its hash does not match).
# Needs apt-utils (apt-ftparchive) and gnupg: .ci/setup installs them.
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
deb=$(realpath "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-apt.XXXXXX")
trap 'gpgconf --kill all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
export GNUPGHOME="$work/gnupg"
mkdir -m 700 "$GNUPGHOME"
fail() { echo "apt: $*" >&2; exit 1; }

# A throw-away signing key, and another one (for the repository that must be refused).
key() { gpg --batch --passphrase '' --quick-gen-key "$1" ed25519 sign 1d 2>/dev/null
  gpg --batch --with-colons --list-keys "$1" 2>/dev/null | awk -F: '/^fpr/ {print $10; exit}'; }
signer=$(key "Kluis packages (test) <packages@kluis.test>")
stranger=$(key "Someone else <someone@elsewhere.test>")

# The next build: the same package as version X.Y.(Z+1).
version=$(dpkg-deb -f "$deb" Version)
next=${version%.*}.$((${version##*.} + 1))
dpkg-deb -R "$deb" "$work/next"
sed -i "s/^Version: .*/Version: $next/" "$work/next/DEBIAN/control"
dpkg-deb -Zgzip -z1 -b "$work/next" "$work/next.deb" >/dev/null
rm -rf "$work/next"

# The computer: a private root with this machine's package list, and the repository as its
# only source, trusted with the repository's key only.
root=$work/root
mkdir -p "$root/etc/apt/sources.list.d" "$root/etc/apt/preferences.d" "$root/var/lib/apt/lists/partial" \
  "$root/var/cache/apt/archives/partial" "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" \
  "$root/var/lib/dpkg/triggers" "$root/var/log/apt"
cp /var/lib/dpkg/status "$root/var/lib/dpkg/status"
touch "$root/var/lib/dpkg/available"
source_for() { # REPO: the repository as the computer's one source
  printf 'Types: deb\nURIs: file:%s\nSuites: stable\nComponents: main\nSigned-By: %s\n' \
    "$1" "$1/kluis-archive-keyring.gpg" >"$root/etc/apt/sources.list.d/kluis.sources"
}
# apt-get and dpkg on the private root. (Triggers of this machine's packages — the icon cache
# — are not run: their programs are not in the root.)
apt_get() {
  apt-get -q -o Dir="$root" -o Dir::Etc::sourcelist=/dev/null \
    -o Dir::Etc::sourceparts="$root/etc/apt/sources.list.d" -o Dir::Etc::preferencesparts="$root/etc/apt/preferences.d" \
    -o Dir::State::status="$root/var/lib/dpkg/status" -o Debug::NoLocking=true -o APT::Sandbox::User=root \
    -o DPkg::Options::=--root="$root" -o DPkg::Options::=--force-script-chrootless \
    -o DPkg::Options::=--no-triggers -o DPkg::TriggersPending=false "$@"
}
installed() { dpkg --root="$root" -s kluis 2>/dev/null | awk '/^Status:/ {s=$4} /^Version:/ {v=$2} END {print s, v}'; }

echo "== apt: install from the signed repository"
bash "$root_dir/tests/linux/apt-repo.sh" "$work/repo" "$signer" "$deb" >/dev/null
source_for "$work/repo"
apt_get update >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "apt-get update refused the signed repository"; }
apt_get install -y kluis >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "apt-get install kluis failed"; }
[ "$(installed)" = "installed $version" ] || fail "kluis $version is not installed: $(installed)"
[ -x "$root/usr/bin/kluis-app" ] || fail "no /usr/bin/kluis-app in the root"

echo "== apt: the next build published, apt-get upgrade"
bash "$root_dir/tests/linux/apt-repo.sh" "$work/repo" "$signer" "$work/next.deb" >/dev/null
apt_get update >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "apt-get update failed"; }
apt_get upgrade -y >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "apt-get upgrade failed"; }
[ "$(installed)" = "installed $next" ] || fail "kluis was not upgraded to $next: $(installed)"

echo "== apt: another key's repository, and a changed package, refused"
bash "$root_dir/tests/linux/apt-repo.sh" "$work/forged" "$stranger" "$deb" >/dev/null
cp "$work/repo/kluis-archive-keyring.gpg" "$work/forged/kluis-archive-keyring.gpg"   # (trusted: the right key)
source_for "$work/forged"
rm -rf "$root/var/lib/apt/lists"/*_dists_* 2>/dev/null || true
if apt_get update >"$work/log" 2>&1 && ! grep -q "NO_PUBKEY\|not signed\|couldn't be verified" "$work/log"; then
  cat "$work/log" >&2; fail "a repository signed by another key was taken"
fi
grep -q "NO_PUBKEY\|not signed\|couldn't be verified" "$work/log" || { cat "$work/log" >&2; fail "the refusal did not say why"; }
source_for "$work/repo"
apt_get update >/dev/null 2>&1
apt_get remove -y kluis >/dev/null 2>&1
rm -f "$root/var/cache/apt/archives"/kluis_*.deb
printf 'x' | dd of="$work/repo/pool/main/kluis_${next}_amd64.deb" bs=1 seek=4096 conv=notrunc status=none
if apt_get install -y kluis >"$work/log" 2>&1; then
  cat "$work/log" >&2; fail "a package changed after it was published was installed"
fi
grep -qi "hash sum mismatch\|size mismatch" "$work/log" || { cat "$work/log" >&2; fail "the refusal did not say the package changed"; }
[ "$(installed)" != "installed $next" ] || fail "the changed package is installed"
echo "apt: installed $version from the signed repository, upgraded to $next; another key's repository and a changed package refused"
