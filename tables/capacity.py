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
`room_busy`, over the WebSocket and over HTTP alike) while the median of the commands
finished in the last `WINDOW` seconds took longer than settings.SEATING_SHED_MS. The
median, not the longest: one slow command (a big settlement, a pause of the collector)
is not a full room. Players already seated play on, come back from sitting out and top
up as before: only new seats bring new work. A process with no recent command takes
seats.

The measure is the process's own. Several web processes each refuse seats when they
are slow; on one machine they share its cores and slow down together.
"""

import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from django.conf import settings

from tables.exceptions import RoomBusy

R = TypeVar("R")

WINDOW = 3.0  # seconds
# Times kept at most: at thousands of commands a second, a window's worth is plenty.
MAX_SAMPLES = 4096
# What a refused player is told to wait, in seconds (Retry-After over HTTP).
RETRY_AFTER = 30


class CommandTimes:
    """How long the commands finished in the last `window` seconds took."""

    def __init__(self, *, window: float = WINDOW, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.clock = clock
        self._samples: deque[tuple[float, float]] = deque(maxlen=MAX_SAMPLES)
        # Noted on the database thread, read on the event loop's or a request's.
        self._lock = threading.Lock()

    def note(self, seconds: float) -> None:
        """One command took `seconds`, its wait for the thread included."""
        with self._lock:
            self._samples.append((self.clock(), seconds))

    def median(self) -> float:
        """The median over the window, in seconds (0 when no command finished in it)."""
        since = self.clock() - self.window
        with self._lock:
            while self._samples and self._samples[0][0] < since:
                self._samples.popleft()
            times = [seconds for _at, seconds in self._samples]
        return statistics.median(times) if times else 0.0

    def clear(self) -> None:
        with self._lock:
            self._samples.clear()


commands = CommandTimes()


async def timed_on_database_thread(call: Callable[..., R], /, **kwargs: Any) -> R:
    """`call(**kwargs)` on the database thread, as `database_sync_to_async` runs it,
    noted in `commands` from now until it is done (raised or not)."""
    queued = time.monotonic()
    try:
        return await database_sync_to_async(call)(**kwargs)
    finally:
        commands.note(time.monotonic() - queued)


def refuse_new_seat_when_busy() -> None:
    """Raise `RoomBusy` while this process's commands are slow (see above)."""
    if commands.median() * 1000 > settings.SEATING_SHED_MS:
        raise RoomBusy(
            "The room is full right now: no new seats are taken for the moment. "
            f"Try again in {RETRY_AFTER} seconds."
        )
