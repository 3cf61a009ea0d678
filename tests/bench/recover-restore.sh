#!/usr/bin/env bash
# Benchmark: a restore on a new computer through `kluis recover restore` of a large backup
# copied to S3 (moto over TLS on loopback) — the copy fetched, its SHA-256 checked against the
# catalog, decrypted, restored — against fetching the same object with Debian's `rclone
# copyto` and `kluis restore` on the file (what an office could do by hand, without the
# catalog's proof), alternately in one run.
#
#   bash tests/bench/recover-restore.sh [SIZE_MIB] [ROUNDS]     (default 1024 MiB, 3 rounds)
#
# The lost computer is made with the kluis CLI: one klant of kluis-sim whose backup is
# SIZE_MIB, encrypted with a passphrase, copied to the bucket, and the recovery kit. Target
# (issue 42): recover restore's median ≤ 1.1 × (rclone copyto + kluis restore)'s median.
# Exits 1 when it is missed.
set -euo pipefail
size_mib=${1:-1024}
rounds=${2:-3}
cd "$(dirname "$0")/../.."

[ "$(id -u)" = 0 ] || SUDO=sudo
need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; ${SUDO:-} apt-get install -y -qq "$2" >/dev/null; }; }
need rclone rclone
need openssl openssl
[ -x /usr/bin/time ] || need /usr/bin/time time

cargo build --release --locked -p kluis-cli --bin kluis -p kluis-sim --bin kluis-sim >&2
kluis=$PWD/target/release/kluis
work=$(mktemp -d "${TMPDIR:-/tmp}/kluis-recover-restore.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

source "$PWD/tests/bench/moto.sh"
start_moto
export RCLONE_CONFIG=/dev/null
remote=(--s3-provider Other --s3-endpoint "$endpoint" --s3-access-key-id bench --s3-secret-access-key bench-secret --s3-force-path-style)
unset AWS_CA_BUNDLE SSL_CERT_DIR
export SSL_CERT_FILE=$work/ca.pem # (rclone's S3 backend takes its CA from here: see s3-vs-rclone.sh)
rclone mkdir ":s3:office" "${remote[@]}"

target/release/kluis-sim --ca-out "$work/sim-ca.pem" --payload-size $((size_mib * 1024 * 1024)) >"$work/sim.env" 2>"$work/sim.log" &
pids+=($!)
for _ in $(seq 100); do grep -q '^ready' "$work/sim.env" 2>/dev/null && break; sleep 0.1; done
value() { grep "^$1=" "$work/sim.env" | cut -d= -f2-; }

# computer PLACE ARGS...: kluis as the computer whose files are under PLACE.
computer() {
  local place=$1; shift
  KLUIS_PROFILES_FILE=$place/profiles.json KLUIS_HISTORY_DB=$place/history.sqlite3 \
    KLUIS_SECRETS_DIR=$place/secrets KLUIS_CA_CERT=$work/sim-ca.pem "$kluis" "$@"
}
add_bucket() {
  echo bench-secret | computer "$1" copy-target add Cloud --s3-endpoint "$endpoint" --s3-bucket office \
    --s3-path-style --s3-access-key-id bench --s3-prefix kluis --s3-ca-cert "$work/ca.pem" --stdin >&2
}
echo "the lost computer: a ${size_mib} MiB backup, encrypted, copied to the bucket" >&2
lost=$work/lost new=$work/new
mkdir -p "$lost" "$new"
KLUIS_BASE_URL=$(value base_url) KLUIS_USERNAME=$(value username) KLUIS_API_KEY=$(value api_key) \
  KLUIS_PASSWORD=$(value password) computer "$lost" profiles add Bakker >&2
phrase="bakker bewaart zijn brood veilig"
KLUIS_ENCRYPTION_PASSPHRASE=$phrase computer "$lost" encryption Bakker --passphrase >&2
add_bucket "$lost"
computer "$lost" recovery-kit --key-file "$work/kit.key" --pc-name RECEPTIE >/dev/null
computer "$lost" backup --all --out "$lost/saved" >&2
rm -rf "$lost/saved"

echo "the new computer" >&2
add_bucket "$new"
location=$(computer "$new" recover list --json --target Cloud --recovery-key "$work/kit.key" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["location"])')

# timed OUTFILE CMD...: runs CMD after a sync, appends "seconds max_rss_kib" to OUTFILE.
timed() {
  local out=$1; shift
  sync
  /usr/bin/time -f "%e %M" -o "$work/last" "$@" >/dev/null 2>"$work/said" || { cat "$work/said" >&2; exit 1; }
  cat "$work/last" >>"$out"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
maxcol() { awk -v c="$1" 'BEGIN{m=0} {if ($c>m) m=$c} END {print m}'; }

for i in $(seq "$rounds"); do
  echo "round $i/$rounds" >&2
  timed "$work/recover" env KLUIS_PROFILES_FILE="$new/profiles.json" KLUIS_HISTORY_DB="$new/history.sqlite3" \
    KLUIS_SECRETS_DIR="$new/secrets" "$kluis" recover restore --target Cloud --recovery-key "$work/kit.key" \
    --klant Bakker --to "$work/recovered-$i"
  rm -rf "$work/recovered-$i"
  # By hand: rclone fetches the object, kluis restores the file (the passphrase given).
  timed "$work/fetch" rclone copyto ":s3:office/kluis/$location" "$work/fetched.zip.age" "${remote[@]}"
  timed "$work/restore" env KLUIS_ENCRYPTION_PASSPHRASE="$phrase" "$kluis" restore "$work/fetched.zip.age" --to "$work/by-hand-$i"
  rm -rf "$work/by-hand-$i" "$work/fetched.zip.age"
done
recover=$(median <"$work/recover")
fetch=$(median <"$work/fetch")
restore=$(median <"$work/restore")
hand=$(awk -v a="$fetch" -v b="$restore" 'BEGIN {printf "%.2f", a + b}')
rss=$(($(maxcol 2 <"$work/recover") / 1024))
restore_rss=$(($(maxcol 2 <"$work/restore") / 1024))
ratio=$(awk -v a="$recover" -v b="$hand" 'BEGIN {printf "%.2f", a / b}')
echo "recover restore of ${size_mib} MiB from S3: median ${recover} s, peak RSS ${rss} MiB; by hand: rclone copyto ${fetch} s + kluis restore ${restore} s (RSS ${restore_rss} MiB) = ${hand} s; ratio ${ratio}"
awk -v r="$ratio" 'BEGIN {exit !(r <= 1.1)}' || { echo "missed: ≤ 1.1× rclone copyto + kluis restore" >&2; exit 1; }
