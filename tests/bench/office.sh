# Sourced by the benchmarks: an office of klanten on one local kluis-sim, and what they measure.
# Expects $bin (the release binaries), $work (a scratch folder) and a pids array.
#
#   start_sim MIB [ARG…]  starts kluis-sim with MIB-MiB backups, an instant callback and its
#                      further arguments (--klanten N); its CA in $work/sim.pem, its ready
#                      lines in $work/sim.env
#   unlock_keyring     a fresh HOME in $work with an unlocked gnome-keyring (inside a private
#                      D-Bus session: dbus-run-session)
#   value NAME         one of those lines (base_url, api_key, username, password, file_url)
#   save_into DIR      the office's save folder (Settings → Where backups are saved) set to DIR,
#                      in KLUIS_PROFILES_FILE: a folder per klant under it
#   tree_rss PID       the summed VmRSS (KiB) of a process and all its descendants
#   add_klanten N      `kluis profiles add "Klant NNN"` N times for the simulator's account,
#                      secrets on stdin (kept where kluis keeps them: KLUIS_SECRETS_DIR or the
#                      keyring), into KLUIS_PROFILES_FILE

start_sim() {
  local mib=$1; shift
  "$bin/kluis-sim" --payload-size $((mib * 1024 * 1024)) --callback-delay-ms 0 --ca-out "$work/sim.pem" "$@" >"$work/sim.env" 2>"$work/sim.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^ready' "$work/sim.env" 2>/dev/null && return 0; sleep 0.1; done
  echo "kluis-sim did not start" >&2; cat "$work/sim.log" >&2; exit 1
}

unlock_keyring() {
  export HOME="$work/home"; mkdir -p "$HOME"
  echo -n bench-keyring-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null
}

value() { grep "^$1=" "$work/sim.env" | cut -d= -f2-; }

add_klanten() {
  echo "adding $1 profiles" >&2
  local i
  for i in $(seq -w 1 "$1"); do
    printf '%s\n%s\n' "$(value api_key)" "$(value password)" |
      KLUIS_BASE_URL=$(value base_url) KLUIS_USERNAME=$(value username) KLUIS_CA_CERT=$work/sim.pem \
        "$bin/kluis" profiles add "Klant $i" --stdin >/dev/null 2>"$work/add.log" ||
      { cat "$work/add.log" >&2; exit 1; }
  done
}

save_into() {
  python3 - "$KLUIS_PROFILES_FILE" "$1" <<'PY'
import json, sys
path, root = sys.argv[1], sys.argv[2]
data = json.load(open(path))
data.setdefault("settings", {})["save_folder"] = root
json.dump(data, open(path, "w"))
PY
}

tree_rss() {
  local todo=("$1") all=() p
  while [ ${#todo[@]} -gt 0 ]; do
    p=${todo[0]}; todo=("${todo[@]:1}"); all+=("$p")
    for c in $(pgrep -P "$p" || true); do todo+=("$c"); done
  done
  for p in "${all[@]}"; do awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || true; done |
    awk '{s+=$1} END {print s+0}'
}
