"""The CPU daphne's WebSocket framing (autobahn) spends on each text frame it sends, with
its debug arguments coloured (autobahn's default beside click) and plain (the web
processes' setting, poker_room/framing.py).

A server protocol is connected to a transport kept in memory (no socket, no event loop),
and sends a table message's text frame over and over: this process's CPU per frame, the
median of `--rounds` rounds of `--frames` frames, the two settings taking turns.

    python bench/framing.py [--frames 20000] [--rounds 7]
"""

import argparse
import statistics
import time

import autobahn.util
from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from twisted.internet.testing import StringTransport

HANDSHAKE = (
    b"GET / HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
# An `acted` and a `turn` of the table's stream, as one frame carries a command's messages.
TEXT = (
    b'[{"v": 41, "type": "acted", "hand": 1207, "seat": 3, "action": "call", "amount": 100},'
    b'{"v": 42, "type": "turn", "hand": 1207, "seat": 4, "turn": 9, '
    b'"deadline": "2026-12-07T12:00:00.000000+00:00", "time_bank_seconds": 30, '
    b'"to_match": 100, "pot_total": 350}]'
)


def microseconds_per_frame(frames: int) -> float:
    protocol = WebSocketServerProtocol()
    protocol.factory = WebSocketServerFactory()
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.dataReceived(HANDSHAKE)
    transport.clear()
    start = time.process_time()
    for _ in range(frames):
        protocol.sendMessage(TEXT, False)
        transport.clear()
    return (time.process_time() - start) / frames * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    coloured = autobahn.util._HAS_CLICK
    figures: dict[str, list[float]] = {"coloured": [], "plain": []}
    for _ in range(args.rounds):
        for setting, flag in (("coloured", coloured), ("plain", False)):
            autobahn.util._HAS_CLICK = flag
            figures[setting].append(microseconds_per_frame(args.frames))
    print(f"CPU per text frame sent ({len(TEXT)} bytes), median of {args.rounds} rounds:")
    for setting, values in figures.items():
        print(f"  {setting:9s} {statistics.median(values):6.2f} us")


if __name__ == "__main__":
    main()
