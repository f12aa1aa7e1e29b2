"""`run_timers`: the room's timer loop (turn timeouts and deals, tables/timers.py).

    python manage.py run_timers

Runs until SIGTERM or Ctrl-C. Any number may run at once: one leads, the others stand
by and take over when it stops (see tables.timers).
"""

import signal
from types import FrameType

from django.core.management.base import BaseCommand

from tables.timers import timers_loop


class Command(BaseCommand):
    help = "Time out turns and deal hands when their deadlines come (the room's timer loop)."

    def handle(self, *args: object, **options: object) -> None:
        stopping: list[int] = []

        def stop(signum: int, frame: FrameType | None) -> None:
            stopping.append(signum)

        # Finish the pass under way, then stop (a command cut in the middle would only
        # roll back, but a clean stop releases the leader lock at once).
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        self.stdout.write("timer loop started")
        timers_loop(stop=lambda: bool(stopping))
        self.stdout.write("timer loop stopped")
