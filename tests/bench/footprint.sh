#!/usr/bin/env bash
# Footprint of the desktop app under Xvfb, against an empty Tauri 2 window of the same build
# (`kluis-app --baseline-window`) measured the same way in the same run:
#   - time from launch to a visible window (xdotool waits for the window to be mapped);
#   - summed RSS of the app's processes (the app and its WebKit children) after 3 s;
#   - release binary and .deb sizes.
#
#   bash tests/bench/footprint.sh [ROUNDS]     (default 5; needs the release build)
# Targets: launch ≤ 1.5 s; RSS ≤ 1.15 × the empty window's.
set -euo pipefail
rounds=${1:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/target/release/kluis-app"
[ -x "$bin" ] || { echo "build first: ui/node_modules/.bin/tauri build" >&2; exit 1; }
command -v xdotool >/dev/null || { echo "needs xdotool (apt-get install xdotool)" >&2; exit 1; }

if [ -z "${DISPLAY:-}" ]; then
  exec xvfb-run -a -s "-screen 0 1280x900x24" bash "$0" "$@"
fi
export WEBKIT_DISABLE_COMPOSITING_MODE=1

source "$root/tests/bench/office.sh"   # (tree_rss)

# measure MODE ARGS…: prints "seconds_to_window rss_kib".
measure() {
  local data; data=$(mktemp -d)
  local start end pid
  start=$(date +%s.%N)
  KLUIS_DATA_DIR=$data "$bin" "$@" >/dev/null 2>&1 &
  pid=$!
  xdotool search --sync --onlyvisible --name '^Kluis' >/dev/null
  end=$(date +%s.%N)
  sleep 3
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.3f", b-a}') $(tree_rss "$pid")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$data"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
app=(); base=()
measure >/dev/null # warm the page cache
for i in $(seq "$rounds"); do
  app+=("$(measure)")
  base+=("$(measure --baseline-window)")
done
app_t=$(printf '%s\n' "${app[@]}" | cut -d' ' -f1 | median)
app_rss=$(printf '%s\n' "${app[@]}" | cut -d' ' -f2 | median)
base_t=$(printf '%s\n' "${base[@]}" | cut -d' ' -f1 | median)
base_rss=$(printf '%s\n' "${base[@]}" | cut -d' ' -f2 | median)
ratio=$(awk -v a="$app_rss" -v b="$base_rss" 'BEGIN{printf "%.2f", a/b}')
deb=$(ls "$root"/target/release/bundle/deb/*.deb 2>/dev/null | head -1 || true)
cat <<REPORT
rounds                              $rounds
launch to visible window, Kluis     ${app_t} s   (target ≤ 1.5)
launch to visible window, empty     ${base_t} s
summed RSS, Kluis                   $((app_rss / 1024)) MiB
summed RSS, empty Tauri window      $((base_rss / 1024)) MiB
ratio                               ${ratio}   (target ≤ 1.15)
release binary                      $(( $(stat -c %s "$bin") / 1024 / 1024 )) MiB
.deb                                $([ -n "$deb" ] && echo "$(( $(stat -c %s "$deb") / 1024 / 1024 )) MiB" || echo "not built")
REPORT
awk -v t="$app_t" -v r="$ratio" 'BEGIN{exit !(t<=1.5 && r<=1.15)}' && echo PASS || { echo FAIL; exit 1; }
