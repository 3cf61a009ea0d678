#!/usr/bin/python3
"""Asks the X windows whose ids are given to close, as a window manager's close button does:
a WM_DELETE_WINDOW client message (Xvfb runs no window manager to send it). Exit 1 when none
of them takes that message. Needs python3-xlib (Debian's /usr/bin/python3)."""
import sys

from Xlib import X, display, error, protocol

d = display.Display()
wm_protocols = d.intern_atom("WM_PROTOCOLS")
wm_delete = d.intern_atom("WM_DELETE_WINDOW")
asked = 0
for wid in sys.argv[1:]:
    window = d.create_resource_object("window", int(wid))
    try:
        protocols = window.get_wm_protocols() or []
    except error.BadWindow:
        continue  # gone since it was listed (a window of a process that is ending)
    if wm_delete not in protocols:
        continue
    event = protocol.event.ClientMessage(
        window=window, client_type=wm_protocols, data=(32, [wm_delete, X.CurrentTime, 0, 0, 0])
    )
    window.send_event(event, event_mask=X.NoEventMask)
    asked += 1
d.flush()
sys.exit(0 if asked else 1)
