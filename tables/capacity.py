"""Load shedding: a web process takes no new seats while its database thread is full.

Every command a table's WebSocket sends runs on the process's one database thread
(Channels' `database_sync_to_async`), one at a time in the order they came, as do the
sockets' snapshots and connection checks; each waits there for PostgreSQL. That thread
is the process's capacity: when it is occupied nearly all the time, the next command
waits behind the others, and the waits grow without bound as the occupancy nears one
(and when the machine's CPU is short, every hop on it takes longer, which shows the
same way). Seating more players then makes every table slower for everyone: at 500
tables of six on the two-core machine, with every seat taken, hardly any act reached
the room before its clock ran out (README, "Speed"). A room at capacity should serve the
players it has and tell the next ones so.

So the consumers time their hops to that thread from the hand-off until done
(`on_database_thread`), and `refuse_new_seat_when_busy` refuses a `sit` (`RoomBusy`,
code `room_busy`, over the WebSocket and over HTTP alike) while the thread was occupied
(something handed to it and not yet done) for more than settings.SEATING_SHED_OCCUPANCY
(0.8) of the last `WINDOW` seconds. A thread stuck for the whole window counts as fully
occupied. Occupancy rather than how long commands take: an arrival of players sitting
down (heavy commands, a few a second) is not a full room, a thread that has work queued
all the time is, however cheap each piece. Players already seated play on, come back
from sitting out and top up as before: only new seats bring new work. With
SEATING_OPEN off a process takes no new seat at all (draining it before a restart).

The measure is the process's own. Several web processes each refuse seats when they
are full; on one machine they share its cores and fill up together.
"""

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
# Hops kept at most: at thousands a second, a window's worth is plenty.
MAX_SAMPLES = 4096
# What a refused player is told to wait, in seconds (Retry-After over HTTP).
RETRY_AFTER = 30


class Occupancy:
    """When the hops to the database thread ran (handed over until done) over the last
    `window` seconds, and when the ones still running were handed over."""

    def __init__(self, *, window: float = WINDOW, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.clock = clock
        self._done: deque[tuple[float, float]] = deque(maxlen=MAX_SAMPLES)
        self._running: Counter[float] = Counter()
        # Noted on the event loop; read there and on HTTP requests' threads.
        self._lock = threading.Lock()

    def begin(self) -> float:
        """A hop is handed to the thread now; returns its start, for `end`."""
        start = self.clock()
        with self._lock:
            self._running[start] += 1
        return start

    def end(self, start: float) -> None:
        """The hop handed over at `start` is done."""
        now = self.clock()
        with self._lock:
            self._running[start] -= 1
            if not self._running[start]:
                del self._running[start]
            self._done.append((start, now))

    def share(self) -> float:
        """The share of the window in which some hop was handed over and not yet done."""
        now = self.clock()
        since = now - self.window
        with self._lock:
            while self._done and self._done[0][1] < since:
                self._done.popleft()
            spans = [*self._done, *((start, now) for start in self._running)]
        occupied = 0.0
        reached = since  # the spans are merged from the oldest start on
        for start, end in sorted(spans):
            if end > reached:
                occupied += end - max(start, reached)
                reached = end
        return occupied / self.window

    def clear(self) -> None:
        with self._lock:
            self._done.clear()
            self._running.clear()


database_thread = Occupancy()


async def on_database_thread(call: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
    """`call(*args, **kwargs)` on the database thread, as `database_sync_to_async` runs
    it, noted in `database_thread` from now until it is done (raised or not)."""
    start = database_thread.begin()
    try:
        return await database_sync_to_async(call)(*args, **kwargs)
    finally:
        database_thread.end(start)


def refuse_new_seat_when_busy() -> None:
    """Raise `RoomBusy` while this process takes no new seats (see above)."""
    if not settings.SEATING_OPEN or database_thread.share() > settings.SEATING_SHED_OCCUPANCY:
        raise RoomBusy(
            "The room is full right now: no new seats are taken for the moment. "
            f"Try again in {RETRY_AFTER} seconds."
        )
