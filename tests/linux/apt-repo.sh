#!/usr/bin/env bash
# Publishes Kluis's .deb packages as a signed apt repository, with Debian's own tools
# (apt-ftparchive from apt-utils, gpg), so that `apt upgrade` updates Kluis like any other
# package:
#
#   bash tests/linux/apt-repo.sh REPO KEY DEB…
#
# Adds each DEB to REPO/pool/main (REPO made when missing; a version already there is not
# replaced), writes the index of suite "stable", component "main", for amd64 — Packages,
# Packages.gz, Release — signs it with the gpg key KEY (its id or fingerprint; GNUPGHOME says
# which keyring) as InRelease and Release.gpg, and exports KEY's public half as
# REPO/kluis-archive-keyring.gpg. Serve REPO from any web server (HTTPS); each computer then
# trusts that key for this repository only (docs/linux.md says how).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bash tests/linux/apt-repo.sh REPO KEY DEB…" >&2; exit 2; }
repo=$1 key=$2; shift 2
for tool in apt-ftparchive gpg dpkg-deb; do
  command -v "$tool" >/dev/null 2>&1 || { echo "apt-repo.sh needs $tool: apt-get install apt-utils gnupg dpkg" >&2; exit 1; }
done
mkdir -p "$repo/pool/main" "$repo/dists/stable/main/binary-amd64"
for deb in "$@"; do
  name=$(dpkg-deb -f "$deb" Package)_$(dpkg-deb -f "$deb" Version)_$(dpkg-deb -f "$deb" Architecture).deb
  if [ -e "$repo/pool/main/$name" ]; then
    cmp -s "$deb" "$repo/pool/main/$name" || { echo "$name is published already, and differs: a new build needs a new version" >&2; exit 1; }
  else
    cp "$deb" "$repo/pool/main/$name"
  fi
done
cd "$repo"
apt-ftparchive packages pool >dists/stable/main/binary-amd64/Packages
gzip -9nkf dists/stable/main/binary-amd64/Packages
apt-ftparchive \
  -o APT::FTPArchive::Release::Origin=Kluis -o APT::FTPArchive::Release::Label=Kluis \
  -o APT::FTPArchive::Release::Suite=stable -o APT::FTPArchive::Release::Codename=stable \
  -o APT::FTPArchive::Release::Components=main -o APT::FTPArchive::Release::Architectures=amd64 \
  release dists/stable >dists/stable/Release.new
mv dists/stable/Release.new dists/stable/Release
gpg --batch --yes --quiet --local-user "$key" --clearsign -o dists/stable/InRelease dists/stable/Release
gpg --batch --yes --quiet --local-user "$key" --armor --detach-sign -o dists/stable/Release.gpg dists/stable/Release
gpg --batch --yes --export "$key" >kluis-archive-keyring.gpg
echo "$repo: $(ls pool/main | wc -l) packages, signed by $key"
