"""Load test of a running room: N tables x K bots playing H hands each, over the real APIs.

Start the room in another terminal (`make run`), then:

    python bench/load.py --tables 12 --players-per-table 6 --hands 20

It runs `tables.bots.run_bots` (so it needs the room's database settings, as `make run`
uses them, to create the bot players and tables) and prints hands and actions per second
and the `act` round-trip latency percentiles. Bounded on purpose: loopback rooms only, at
most MAX_TABLES tables of up to 10 bots, MAX_HANDS hands each, and a time limit.
By default no bot misbehaves (timeouts would measure the timers, not the room).
"""

import argparse
import asyncio
import ipaddress
import os
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MAX_TABLES = 50
MAX_HANDS = 500
MAX_SECONDS = 1800.0


def loopback(url: str) -> bool:
    """True when every address of the URL's host is a loopback address."""
    host = urlsplit(url).hostname or ""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="ws://127.0.0.1:8000")
    parser.add_argument("--tables", type=int, default=12)
    parser.add_argument("--players-per-table", type=int, default=6)
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--misbehave", action="store_true", help="Mix in misbehaving bots.")
    parser.add_argument("--action-seconds", type=int, default=1)
    parser.add_argument("--time-bank-seconds", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--prefix", default="loadbot")
    args = parser.parse_args()
    if not loopback(args.url):
        parser.error("the load test runs against a room on this machine only (loopback)")
    if not 1 <= args.tables <= MAX_TABLES or not 1 <= args.hands <= MAX_HANDS:
        parser.error(f"--tables 1..{MAX_TABLES}, --hands 1..{MAX_HANDS}")
    if not 2 <= args.players_per_table <= 10:
        parser.error("--players-per-table 2..10")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
    import django

    django.setup()
    from tables.bots import run_bots
    from tables.bots.setup import BotTimers

    report = asyncio.run(
        run_bots(
            args.url,
            args.tables,
            args.players_per_table,
            args.hands,
            prefix=args.prefix,
            misbehave=args.misbehave,
            timers=BotTimers(
                action_seconds=args.action_seconds, time_bank_seconds=args.time_bank_seconds
            ),
            timeout_seconds=min(args.timeout, MAX_SECONDS),
        )
    )
    print(report.render())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
