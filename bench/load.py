"""Load test of a running room: N tables x K bots at human pace for a while, over the real APIs.

Start the room in another terminal, then, with the room's DATABASE_URL:

    TABLE_SOCKETS_PER_ADDRESS=100000 make run
    python bench/load.py --tables 50 --players-per-table 6 --duration 90

Every bot connects from 127.0.0.1, each as a player of its own: a room left at the
default of 64 table sockets per address (README, "Limits per viewer") closes the rest
with 4429, which the bots take as "try again later" until they
give up. Each bot's own user stays under the per-user limits.

The bots (tables.bots) think 1-3 s before each action (`--think`), let 2 % of their turns
time out (`--timeout-share`), and now and then leave between hands and come back after a
pause (`--leave-share`, `--away`). They arrive over the `--warmup`, then the run measures
for `--duration` seconds and winds down: decisions/s, act -> ack latency on the actor's
socket, act -> `acted` latency on the other players' sockets, timeout lateness (the
turn's deadline to the `timed_out` event), errors by code, gaps and resyncs, failed
connects, and the CPU each group of room processes used per decision (from /proc: the
room found by its web process's port, or `--room-pid`) beside the generator's own.
`--fast` plays as the bots always did (act at once, `--hands` per table, short timers).

It needs the room's database settings (the players, their sessions and the tables are
made there directly: no password hash or log-in per player). `--procs N` shards the
tables over N processes when one cannot keep up. Bounded on purpose: loopback rooms
only, at most MAX_TABLES tables of up to 10 bots, MAX_HANDS hands each, MAX_SECONDS.
"""

import argparse
import asyncio
import ipaddress
import json
import os
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MAX_TABLES = 600
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


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--url", default="ws://127.0.0.1:8000")
    add("--tables", type=int, default=12)
    add("--players-per-table", type=int, default=6)
    add("--duration", type=float, default=90.0, help="Seconds measured (human pace).")
    add("--warmup", type=float, default=20.0, help="Seconds over which the bots arrive.")
    add("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"))
    add("--timeout-share", type=float, default=0.02, help="Share of turns left to time out.")
    add("--leave-share", type=float, default=0.02, help="Chance to leave after a hand.")
    add("--away", type=float, nargs=2, default=(5.0, 15.0), metavar=("MIN", "MAX"))
    add("--action-seconds", type=int, default=None, help="Table clock (6 s, --fast 1 s).")
    add("--time-bank-seconds", type=int, default=2)
    add("--pause-ms", type=int, default=None, help="Between hands (2000, --fast 300).")
    add("--fast", action="store_true", help="Act at once and play --hands hands per table.")
    add("--hands", type=int, default=20, help="Hands per table with --fast.")
    add("--misbehave", action="store_true", help="Mix in misbehaving bots.")
    add("--procs", type=int, default=1, help="Processes to shard the tables over.")
    add("--room-pid", type=int, action="append", default=None, help="The room's root process.")
    add("--json", type=Path, default=None, help="Write the figures here too.")
    add("--stall", type=float, default=120.0, help="Seconds without progress ending a table.")
    add("--timeout", type=float, default=MAX_SECONDS, help="Bound on the whole run.")
    add("--prefix", default="loadbot")
    add("--seed", type=int, default=None)
    return parser


def main() -> int:
    parser = arguments()
    args = parser.parse_args()
    if not loopback(args.url):
        parser.error("the load test runs against a room on this machine only (loopback)")
    if not 1 <= args.tables <= MAX_TABLES or not 1 <= args.hands <= MAX_HANDS:
        parser.error(f"--tables 1..{MAX_TABLES}, --hands 1..{MAX_HANDS}")
    if not 2 <= args.players_per_table <= 10:
        parser.error("--players-per-table 2..10")
    if not 0 < args.duration <= MAX_SECONDS or not 0 <= args.warmup <= MAX_SECONDS:
        parser.error(f"--duration and --warmup up to {MAX_SECONDS:.0f} s")
    if not 1 <= args.procs <= (os.cpu_count() or 1) * 4:
        parser.error("--procs 1..4 per core")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
    import django

    django.setup()
    from django.conf import settings

    from tables.bots.cpu import room_root
    from tables.bots.player import Pace
    from tables.bots.runner import run_bots
    from tables.bots.setup import BotTimers

    port = urlsplit(args.url).port or 80
    root = room_root(port)
    room_pids = frozenset(args.room_pid or ([root] if root is not None else []))
    if not room_pids:
        print(f"no room process found serving port {port}: its CPU is not measured")
    fast = args.fast
    timers = BotTimers(
        action_seconds=args.action_seconds or (1 if fast else 6),
        time_bank_seconds=args.time_bank_seconds,
        pause_between_hands_ms=args.pause_ms
        if args.pause_ms is not None
        else 300
        if fast
        else 2000,
    )
    pace = None
    if not fast:
        pace = Pace(
            think=tuple(args.think),
            timeout_share=args.timeout_share,
            leave_share=args.leave_share,
            away=tuple(args.away),
        )
    report = asyncio.run(
        run_bots(
            args.url,
            args.tables,
            args.players_per_table,
            args.hands if fast else None,
            prefix=args.prefix,
            seed=args.seed,
            misbehave=args.misbehave,
            timers=timers,
            stall_seconds=args.stall,
            timeout_seconds=min(args.timeout, MAX_SECONDS),
            pace=pace,
            duration=None if fast else args.duration,
            warmup=0.0 if fast else args.warmup,
            quick=True,
            room_pids=room_pids,
            database=settings.DATABASES["default"]["NAME"],
            procs=args.procs,
        )
    )
    print(report.render())
    print(report.render_load())
    if args.json is not None:
        figures = {"arguments": {k: str(v) for k, v in vars(args).items()}, **report.figures()}
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
