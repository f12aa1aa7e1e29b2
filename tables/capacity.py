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

So the consumers note their hops to that thread from the hand-off until done
(`on_database_thread`, `occupying`; a session's user read as a socket connects too), and
`refuse_new_seat_when_busy` refuses a `sit` (`RoomBusy`, code `room_busy`, over the
WebSocket and over HTTP alike) while the thread was occupied (something handed to it
and not yet done) for more than settings.SEATING_SHED_OCCUPANCY (0.8) of the last
`WINDOW` seconds. A thread stuck for the whole window counts as fully occupied, so one
table command waiting out a stuck table's lock (up to TABLE_LOCK_TIMEOUT_MS) keeps the
process from seating anyone meanwhile. Occupancy rather than how long commands take:
an arrival of players sitting down (heavy commands, a few a second) is not a full room,
a thread that has work queued all the time is, however cheap each piece. Players
already seated play on, come back from sitting out and top up as before: only new seats
bring new work. With SEATING_OPEN off a process takes no new seat at all (draining it
before a restart).

Between settings.SEATING_SLOW_OCCUPANCY (0.5) and that, the process is filling up: it
takes one new seat every settings.SEATING_SLOW_INTERVAL seconds (1) and refuses the rest
(`SeatAdmission`). A seat brings its work only seconds after it is taken, once its table
deals and its player starts to act, and the measure is an average over the window
besides. A room that seated every player who asked until the measure said full had
seated many more meanwhile, and kept them (seated players are never refused); and each
moment the measure dipped below the threshold, as players left, let in a crowd of the
refused asking again (at 500 tables of six, 3,000 players arriving in a minute, the tail
on other players' sockets reached 2 s and 500 acts came after their clock ran out).
Slowed, the room nears its capacity at a pace the measure can follow. The seat of each
interval goes to the first sit that asks for it, whether or not that sit then succeeds,
and the others are refused as the full room refuses them: a sit without a key before
the database thread, one with a key once the key is looked up, before the table's lock
(`tables.services.seating.seat_take_unless_busy`): a key that moved chips already is
a retry, answered as the first time.

The measure is the process's own. Several web processes each refuse seats when they
are full; on one machine they share its cores and fill up together.
"""

import contextlib
import dataclasses
import enum
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from django.conf import settings

from tables.exceptions import RoomBusy
from tables.hop_order import Urgency, hop_order

logger = logging.getLogger(__name__)

R = TypeVar("R")

WINDOW = 3.0  # seconds
# What a refused player is told to wait, in seconds (Retry-After over HTTP).
RETRY_AFTER = 30


class Occupancy:
    """When the database thread had work (some hop handed over and not yet done) over
    the last `window` seconds: the busy periods of the hops done, merged as they end (a
    saturated thread is one long period, however many hops it ran), and when the hops
    still running were handed over."""

    def __init__(self, *, window: float = WINDOW, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.clock = clock
        # Non-overlapping, in time order: hops end in the order the thread runs them.
        self._periods: deque[tuple[float, float]] = deque()
        self._running: Counter[float] = Counter()
        # Noted on the event loop; read there and on HTTP requests' threads.
        self._lock = threading.Lock()

    def begin(self) -> float:
        """A hop is handed to the thread now; returns its start, for `end`."""
        with self._lock:
            start = self.clock()
            self._running[start] += 1
        return start

    def end(self, start: float) -> None:
        """The hop handed over at `start` is done (an unknown `start` is ignored)."""
        with self._lock:
            if not self._running[start]:  # a Counter's missing key reads 0, unstored
                return
            self._running[start] -= 1
            if not self._running[start]:
                del self._running[start]
            end = self.clock()
            while self._periods and start <= self._periods[-1][1]:
                earlier, later = self._periods.pop()
                start, end = min(start, earlier), max(end, later)
            self._periods.append((start, end))
            since = end - self.window
            while self._periods and self._periods[0][1] < since:
                self._periods.popleft()

    def share(self) -> float:
        """The share of the window in which the thread had work."""
        with self._lock:
            now = self.clock()
            spans = list(self._periods)
            if self._running:
                spans.append((min(self._running), now))
        since = now - self.window
        occupied = 0.0
        reached = since  # the spans are merged from the oldest start on
        for start, end in sorted(spans):
            if end > reached:
                occupied += end - max(start, reached)
                reached = end
        return occupied / self.window


database_thread = Occupancy()


@contextlib.asynccontextmanager
async def occupying(urgency: Urgency = Urgency.VIEW) -> AsyncIterator[None]:
    """Note the hop to the database thread awaited inside in `database_thread`, from now
    (its wait for its turn in `hop_order` included: the thread has work meanwhile)."""
    occupancy = database_thread  # the same one at the end, whatever happens meanwhile
    start = occupancy.begin()
    try:
        async with hop_order.turn(urgency):
            yield
    finally:
        occupancy.end(start)


async def on_database_thread(
    call: Callable[..., R], /, *args: Any, urgency: Urgency = Urgency.VIEW, **kwargs: Any
) -> R:
    """`call(*args, **kwargs)` on the database thread, as `database_sync_to_async` runs
    it, in its turn by `urgency` (tables/hop_order.py), noted in `database_thread` from now
    until it is done (raised or not)."""
    async with occupying(urgency):
        return await database_sync_to_async(call)(*args, **kwargs)


class SeatAdmission:
    """The new seat a slowed process took last: when, and whose sit it was. One every
    `interval` seconds; the sit that took it may ask again (the consumer asks before the
    database thread, the service under the table's lock)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._last: float | None = None
        self._sit: tuple[int, int] | None = None  # (user, table)
        self._lock = threading.Lock()  # sits come from the database thread and HTTP's

    def take(self, interval: float, sit: tuple[int, int]) -> bool:
        """Let `sit` (user, table) in now if a seat may be taken, or it was let in within
        the interval; False (nothing changed) if not."""
        with self._lock:
            now = self.clock()
            if self._last is not None and now - self._last < interval:
                return sit == self._sit
            self._last, self._sit = now, sit
            return True


seat_admission = SeatAdmission()


class Seating(enum.Enum):
    """How a process takes new seats, by its database thread's occupancy."""

    OPEN = "open"
    SLOWED = "slowed"  # one every SEATING_SLOW_INTERVAL seconds
    CLOSED = "closed"


def seating_now() -> tuple[Seating, float]:
    """How this process takes new seats now, and the occupancy that decided it."""
    share = database_thread.share()
    if not settings.SEATING_OPEN or share > settings.SEATING_SHED_OCCUPANCY:
        seating = Seating.CLOSED
    elif share > settings.SEATING_SLOW_OCCUPANCY:
        seating = Seating.SLOWED
    else:
        seating = Seating.OPEN
    _log_change(seating, share)
    return seating, share


# At most one line every this many seconds: near a threshold the state can change at
# every sit.
LOG_EVERY = 10.0


@dataclasses.dataclass
class _Logged:
    seating: Seating = Seating.OPEN
    at: float = -LOG_EVERY
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


_logged = _Logged()


def _log_change(seating: Seating, share: float) -> None:
    """Log when the process starts or stops refusing seats: a room turning players away
    shows in its log, by a line when that changes rather than one a refusal (a change
    inside LOG_EVERY of the last line waits for a sit after it)."""
    with _logged.lock:
        now = time.monotonic()
        if seating is _logged.seating or now - _logged.at < LOG_EVERY:
            return
        _logged.seating, _logged.at = seating, now
    logger.warning(
        "new seats %s: the database thread was occupied %.0f%% of the last %g s%s",
        seating.value,
        share * 100,
        WINDOW,
        "" if settings.SEATING_OPEN else " (SEATING_OPEN is off)",
    )


def refuse_new_seat_when_busy(*, user_id: int, table_id: int) -> None:
    """Raise `RoomBusy` while this process takes no new seats, or none more just now
    (see above), for a sit of this user at this table. Asked twice for one sit (before the
    database thread and in the service), it gives the same answer within the interval: a
    seat let in at the first is not refused at the second."""
    seating, _ = seating_now()
    if seating is Seating.CLOSED:
        raise RoomBusy(
            "The room is full right now: no new seats are taken for the moment. "
            f"Try again in {RETRY_AFTER} seconds."
        )
    if seating is Seating.SLOWED and not seat_admission.take(
        settings.SEATING_SLOW_INTERVAL, (user_id, table_id)
    ):
        raise RoomBusy(
            "The room is nearly full: it takes new players a few at a time. "
            f"Try again in {RETRY_AFTER} seconds."
        )
