#!/usr/bin/env bash
# Benchmark: restoring a backup of many files, Kluis against Debian's unzip, alternately in one
# run (medians of ROUNDS):
#   - a restore test (`kluis restore-test`: every entry inflated, written to a temporary
#     folder, CRC-32 checked, the folder removed) against `unzip -t` (inflates and checks,
#     writes nothing): target ≤ 1.0×;
#   - restoring everything (`kluis restore --to`: part files, fsynced, renamed) against
#     `unzip -o -q -d`: target ≤ 1.1×;
#   - the restore test of the same backup encrypted (age, to an X25519 recipient) against the
#     plain one's: target ≤ 1.3×.
# And Kluis's peak RSS. The archive is made first by Python's zipfile (deflated; half of each
# file compressible text, half random).
#
#   bash tests/bench/restore-vs-unzip.sh [SIZE_MIB] [FILES] [ROUNDS]   (default 1024, 4000, 3)
#
# Exits 1 when a target is missed.
set -euo pipefail
size_mib=${1:-1024}
files=${2:-4000}
rounds=${3:-3}
cd "$(dirname "$0")/../.."

[ "$(id -u)" = 0 ] || SUDO=sudo
need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; ${SUDO:-} apt-get install -y -qq "$2" >/dev/null; }; }
need unzip unzip
need age age
need python3 python3
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --release --locked -p kluis-cli >&2
kluis=$PWD/target/release/kluis
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-restore-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "making a ${size_mib} MiB archive of $files files…" >&2
python3 - "$work/backup.zip" "$size_mib" "$files" <<'EOF'
import os, sys, zipfile
path, size_mib, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
each = size_mib * 1024 * 1024 // files
text = (b"datum;rekening;omschrijving;bedrag\n2025-03-01;8000;omzet hoog;1210,00\n" * (each // 70 + 1))
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
    for i in range(files):
        half = each // 2
        z.writestr(f"administratie/{i % 40:02d}/bestand-{i:05d}.csv", text[:half] + os.urandom(each - half))
EOF
age-keygen -o "$work/identity.txt" 2>/dev/null
age -r "$(age-keygen -y "$work/identity.txt")" -o "$work/backup.zip.age" "$work/backup.zip"
ls -l "$work/backup.zip" "$work/backup.zip.age" >&2

# `timed NAME COMMAND…`: runs it, appends "seconds peak_kib" to $work/NAME.
timed() {
  local name=$1; shift
  sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  cat "$work/time" >> "$work/$name"
}

for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  timed kluis_test "$kluis" restore-test "$work/backup.zip"
  timed unzip_test unzip -t -qq "$work/backup.zip"
  timed kluis_age_test "$kluis" restore-test "$work/backup.zip.age" --identity "$work/identity.txt"
  rm -rf "$work/k" "$work/u"; mkdir "$work/k" "$work/u"
  timed kluis_restore "$kluis" restore "$work/backup.zip" --to "$work/k"
  timed unzip_restore unzip -o -q "$work/backup.zip" -d "$work/u"
  rm -rf "$work/k" "$work/u"
done

python3 - "$work" <<'EOF'
import statistics, sys
work = sys.argv[1]
def read(name):
    rows = [line.split() for line in open(f"{work}/{name}")]
    return statistics.median(float(r[0]) for r in rows), max(int(r[1]) for r in rows) / 1024
k_test, k_test_rss = read("kluis_test")
u_test, _ = read("unzip_test")
a_test, a_rss = read("kluis_age_test")
k_rest, k_rest_rss = read("kluis_restore")
u_rest, _ = read("unzip_restore")
checks = [
    ("restore test vs unzip -t", k_test / u_test, 1.0),
    ("restore vs unzip -o", k_rest / u_rest, 1.1),
    ("encrypted restore test vs plain", a_test / k_test, 1.3),
]
print(f"restore test: Kluis {k_test:.2f} s, unzip -t {u_test:.2f} s; encrypted {a_test:.2f} s")
print(f"restore:      Kluis {k_rest:.2f} s, unzip -o {u_rest:.2f} s")
print(f"peak RSS: restore test {k_test_rss:.1f} MiB, encrypted {a_rss:.1f} MiB, restore {k_rest_rss:.1f} MiB")
missed = False
for name, ratio, target in checks:
    ok = ratio <= target
    missed |= not ok
    print(f"{name}: {ratio:.2f} (target ≤ {target}) {'ok' if ok else 'MISSED'}")
sys.exit(1 if missed else 0)
EOF
