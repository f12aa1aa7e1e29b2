"""Load shedding: a web process takes no new seats while its table commands are slow.

Every command a table's WebSocket sends runs on the process's one database thread
(Channels' `database_sync_to_async`), in the order the commands came, and waits there
for PostgreSQL. When the room is past what its machine can do, commands wait for that
thread behind one another, and for the CPU: a command that takes a few milliseconds on
a room with room to spare takes hundreds. Seating more players then makes every table
slower for everyone: at 500 tables of six on the two-core machine, with every seat
taken, hardly any act reached the room before its clock ran out (README, "Speed"). A
room at capacity should serve the players it has and tell the next ones so.

So the consumers time each command from the moment they hand it to that thread until it
is done (`timed_on_database_thread`): its wait for the thread, then its run, PostgreSQL's
answers included. `refuse_new_seat_when_busy` refuses a `sit` (`RoomBusy`, code
`room_busy`, over the WebSocket and over HTTP alike) while the process is busy: the
median of the commands finished in the last `WINDOW` seconds took longer than
settings.SEATING_SHED_MS, or a command has been running for longer than `WINDOW` (a
thread stuck that long finishes nothing, and an empty window is no sign of health). The
median, not the longest, and only over SEATING_SHED_MIN_COMMANDS commands or more (10;
with 0 and a negative SEATING_SHED_MS no new seat is taken at all): one slow command
(a big settlement, a pause of the collector, a quiet process's first) is not a full
room, nor is a process that serves a few commands a second. Players already seated play
on, come back from sitting out and top up as before: only new seats bring new work.

The measure is the process's own. Several web processes each refuse seats when they
are slow; on one machine they share its cores and slow down together.
"""

import statistics
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from django.conf import settings

from tables.exceptions import RoomBusy

R = TypeVar("R")

WINDOW = 3.0  # seconds
# Commands finished in the window below which a process is not busy, by default
# (settings.SEATING_SHED_MIN_COMMANDS).
MIN_SAMPLES = 10
# Times kept at most: at thousands of commands a second, a window's worth is plenty.
MAX_SAMPLES = 4096
# What a refused player is told to wait, in seconds (Retry-After over HTTP).
RETRY_AFTER = 30


class CommandTimes:
    """How long the commands finished in the last `window` seconds took, and when the
    ones still running started."""

    def __init__(self, *, window: float = WINDOW, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.clock = clock
        self._samples: deque[tuple[float, float]] = deque(maxlen=MAX_SAMPLES)
        self._running: Counter[float] = Counter()
        # Noted on the event loop; read there and on HTTP requests' threads.
        self._lock = threading.Lock()

    def begin(self) -> float:
        """A command is handed to the thread now; returns its start, for `end`."""
        start = self.clock()
        with self._lock:
            self._running[start] += 1
        return start

    def end(self, start: float) -> None:
        """The command handed over at `start` is done."""
        now = self.clock()
        with self._lock:
            self._running[start] -= 1
            if not self._running[start]:
                del self._running[start]
            self._samples.append((now, now - start))

    def busy(self, threshold: float, min_samples: int = MIN_SAMPLES) -> bool:
        """Whether the median over the window (of `min_samples` or more; 0 for none) is
        above `threshold` seconds, or a command has been running for longer than the
        window."""
        now = self.clock()
        with self._lock:
            while self._samples and self._samples[0][0] < now - self.window:
                self._samples.popleft()
            times = [seconds for _at, seconds in self._samples]
            oldest = min(self._running, default=now)
        if now - oldest > self.window:
            return True
        median = statistics.median(times) if times else 0.0
        return len(times) >= min_samples and median > threshold

    def clear(self) -> None:
        with self._lock:
            self._samples.clear()
            self._running.clear()


commands = CommandTimes()


async def timed_on_database_thread(call: Callable[..., R], /, **kwargs: Any) -> R:
    """`call(**kwargs)` on the database thread, as `database_sync_to_async` runs it,
    timed in `commands` from now until it is done (raised or not)."""
    start = commands.begin()
    try:
        return await database_sync_to_async(call)(**kwargs)
    finally:
        commands.end(start)


def refuse_new_seat_when_busy() -> None:
    """Raise `RoomBusy` while this process is busy (see above)."""
    if commands.busy(settings.SEATING_SHED_MS / 1000, settings.SEATING_SHED_MIN_COMMANDS):
        raise RoomBusy(
            "The room is full right now: no new seats are taken for the moment. "
            f"Try again in {RETRY_AFTER} seconds."
        )
