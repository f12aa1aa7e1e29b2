"""Daphne's WebSocket framing (autobahn) in the web processes: its debug lines left plain.

Autobahn builds the arguments of its debug log lines whether or not debug is logged,
among them one for every frame it writes (`WebSocketProtocol.sendData`): the method's
qualified name and the peer, each coloured through click's `style` when click is
installed, as Celery installs it here. Under load that colouring was about 2 % of a web
process's CPU (py-spy `--gil` at 200 tables, README "Speed", session 29): three `style`
calls a frame, for lines nobody reads. Plain, the same lines (logged only at debug)
read the same without the terminal's colours.
"""

import autobahn.util


def framing_debug_plain() -> None:
    """Leave autobahn's debug arguments uncoloured in this process (`autobahn.util.hl`
    returns its text as it is). The flag is autobahn's own switch for a process without
    click; tests/foundation/test_framing.py holds the pinned autobahn to it."""
    autobahn.util._HAS_CLICK = False
