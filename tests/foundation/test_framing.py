"""A web process leaves autobahn's debug arguments plain (poker_room/framing.py): the
frames daphne writes no longer colour, through click, log lines nobody reads."""

import json

from tests.foundation.web_process import probe_output

# Sends a text message through autobahn's server protocol (as daphne's does, on a
# transport kept in memory) and counts click's `style` calls, before and after the
# ASGI application is imported, as each daphne imports it.
PROBE = """
import json
import click
from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet.testing import StringTransport

styled = []
style = click.style
click.style = lambda *args, **kwargs: styled.append(1) or style(*args, **kwargs)

def send(text):
    protocol = WebSocketServerProtocol()
    protocol.factory = WebSocketServerFactory()
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.dataReceived(
        b"GET / HTTP/1.1\\r\\nHost: x\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n"
    )
    transport.clear()
    before = len(styled)
    protocol.sendMessage(text.encode(), False)
    frame = transport.value()
    return len(styled) - before, frame[2:].decode() if frame[1] < 126 else None

text = '{"v": 7, "type": "acted"}'
without = send(text)
import poker_room.asgi
after = send(text)
print(json.dumps({"without": without, "after": after}))
"""


def test_a_web_process_sends_frames_without_colouring_autobahns_debug_lines():
    found = json.loads(probe_output(PROBE).splitlines()[-1])
    text = '{"v": 7, "type": "acted"}'
    # Before: autobahn coloured its debug arguments for the frame (the probe can fail).
    assert found["without"][0] > 0
    assert found["without"][1] == text
    # After the application's import: the same frame, written without a `style` call.
    assert found["after"] == [0, text]
