"""`run_timers`: the room's timer loop (turn timeouts and deals, tables/timers.py).

    python manage.py run_timers [--tables-at-once N]

Runs until SIGTERM or Ctrl-C. Any number may run at once: one leads, the others stand
by and take over when it stops (see tables.timers). While Redis is down (nobody sees the
tables) it holds every clock, and gives the turns their time back when Redis returns
(tables/stream_outage.py).
"""

import signal
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from poker_room.collector import tune_collector
from tables.timers import TABLES_AT_ONCE, timers_loop


class Command(BaseCommand):
    help = "Time out turns and deal hands when their deadlines come (the room's timer loop)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--tables-at-once",
            type=int,
            default=TABLES_AT_ONCE,
            choices=range(1, 33),
            metavar="N",
            help=f"Tables a pass serves side by side, 1 to 32 (default {TABLES_AT_ONCE}).",
        )

    def handle(self, *args: object, **options: Any) -> None:
        stopping: list[int] = []

        def stop(signum: int, frame: FrameType | None) -> None:
            stopping.append(signum)

        # Finish the pass under way, then stop (a command cut in the middle would only
        # roll back, but a clean stop releases the leader lock at once).
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        tune_collector(settings.GC_THRESHOLDS)  # poker_room/collector.py
        self.stdout.write("timer loop started")
        timers_loop(stop=lambda: bool(stopping), tables_at_once=options["tables_at_once"])
        self.stdout.write("timer loop stopped")
