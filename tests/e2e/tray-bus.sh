# Sourced by tests/e2e/tray.sh and tests/bench/tray.sh: kluis-tray's tray item on the session
# bus, read and clicked as a tray host does, with dbus-send alone (Debian's dbus-bin).
#   bus_names              the bus names, one a line
#   tray_item PID          the tray item's bus name of kluis-tray process PID (empty: none yet)
#   menu_click ITEM LABEL  its menu's entry LABEL clicked

# The bus names on the session bus, one a line.
bus_names() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.ListNames 2>/dev/null | sed -n 's/^ *string "\(.*\)"$/\1/p'
}
# The tray item of kluis-tray process PID (its StatusNotifierItem's bus name).
tray_item() { bus_names | grep -m1 "^org.kde.StatusNotifierItem-$1-" || true; }
# menu_click ITEM LABEL: the tray menu's entry LABEL clicked, found and sent as a tray host does
# (not waiting for a reply: Quit ends kluis-tray as it takes the click).
menu_click() {
  local id
  id=$(dbus-send --session --print-reply --dest="$1" /MenuBar com.canonical.dbusmenu.GetGroupProperties \
    array:int32:1,2,3,4,5,6,7,8 array:string:label |
    awk -v want="\"$2\"" '/^ *int32 / {id = $2} /variant/ && index($0, want) {print id; exit}')
  [ -n "$id" ] || { echo "no '$2' in the tray menu of $1" >&2; return 1; }
  dbus-send --session --type=method_call --dest="$1" /MenuBar com.canonical.dbusmenu.Event \
    "int32:$id" string:clicked variant:int32:0 uint32:0
}
