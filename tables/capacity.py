"""Load shedding: a web process takes no new seats while its seated players' play fills it.

Every command a table's WebSocket sends runs on the process's one database thread
(Channels' `database_sync_to_async`), one at a time in the order tables/hop_order.py
gives them, as do the sockets' snapshots and connection checks. That thread is what a
new seat adds work to: when the seated players' play keeps it busy, the next command
waits behind the others, and seating more players makes every table slower for
everyone: at 500 tables of six on the two-core machine, with every seat taken, hardly
any act reached the room before its clock ran out (README, "Speed"). A room at capacity
should serve the players it has and tell the next ones so.

What is measured (`SeatedPlay`): the CPU time the database thread spent on the seated
players' play over the last `WINDOW` seconds, as a share of one core. The seated
players' play is what goes first on the thread (hop_order's `SEATED_PLAY`): the
decisions and the table commands of a player seated at the table they send them to,
their snapshots and the records of their connection, each player counted up to a
player's pace (`PlayerPace`: `PACE_BURST` hops at once, `PACE_PER_SECOND` a second; a
person at a table sends a command every few seconds). The consumer says which hops those
are (`play_urgency`); `on_database_thread` times them on the thread (`time.thread_time`).

Why that, and not the share of the window in which the thread had work (its occupancy,
which the room shed on until issue #46):

* A viewer filled the occupancy. Spectators' snapshots, new sockets' connection checks
  and the commands of viewers without a seat (`mute`, `auto_top_up`, a `sit`, an `act`
  at a table one does not play) all went to the thread and counted: four free accounts
  with four sockets each, sending those in a loop within their budgets, or one
  anonymous client with sixteen sockets on a busy machine, made every web process refuse
  every new seat. Those now go after the seated play and count for nothing (a hop of
  theirs holds seated play back by at most the two handed to the thread before it came,
  hop_order's `DEPTH`); a seated player flooding counts as one player at a player's pace
  (past it their hops go with the viewers'); spectators' snapshots come from a cached
  form, one read a table and version (tables/snapshot_cache.py).
* Other programs moved the occupancy. It is wall-clock time: a hop that waits for a core
  another program holds takes longer, and so do PostgreSQL's answers and the GIL's return
  from the event loop, each waiting for a core too; 9 to 18 CPU-bound processes on the
  machine made a room of a few tables refuse seats. A thread's CPU time is what it ran,
  however long it waited to run: it follows the work the seated players ask for, not
  who else is on the cores. The queueing delay of decisions (how long an `act` waits in
  hop_order) does not do that either: every hop ahead of it takes longer when the cores
  are taken, and a room half full would read as full under a neighbour's load.

What the room saturates on is the machine's cores (README, "Speed": "the two cores are
the wall"), its processes and PostgreSQL taking turns on them; the thread's CPU on
seated play is the part of that work a new seat adds to, measured where a web process
can measure it. It leaves the waiting out: for PostgreSQL (whose CPU is the room's too),
for the GIL, for a core. So its thresholds are lower than an occupancy's were. On the
two-core development machine the room was full (README, "Speed", session 31: 500
tables, 1,212 players seated, a web process's thread occupied 80 % of the time, the
room and the load generator using 1.42 of the two cores) at 63 decisions a second a web
process, each costing it 5.86 ms of CPU; of a web process's CPU, the seated play on
its database thread is 37 % (this change's 50-table load test: 5.6 s of 15.1 s, about
one hop of 4.2 ms a decision on that day's slower machine). So the full room's thread
spent about 0.14 of a core on seated play, and the 50-table room 0.05 (0.21 for a few
seconds as its 300 players left at once). New seats are refused (`room_busy`, over the
WebSocket and over HTTP alike) while it spent more than settings.SEATING_SHED_CPU (0.15)
of a core; between settings.SEATING_SLOW_CPU (0.09, as 0.5 was to 0.8) and that, the
process is filling up (below). A machine whose room waits less for each core's worth of
work (PostgreSQL on cores of its own, cores to spare) carries more: raise the two
there, to where the load test (bench/load.py) shows the tail of the latency on others'
sockets growing.

The trade, chosen: while another program holds the cores, the seated players are served
more slowly and the room still seats whoever asks, as a neighbour's load is not a full
room. Nor is a thread stuck waiting (a table's lock held by a frozen process, up to
TABLE_LOCK_TIMEOUT_MS): it spends no CPU, and seats are refused for the players' load,
not for a fault. Players already seated play on, come back from sitting out and top up
as before: only new seats bring new work. With SEATING_OPEN off a process takes no new
seat at all (draining it before a restart).

Between the two thresholds the process takes one new seat every
settings.SEATING_SLOW_INTERVAL seconds (1) and refuses the rest (`SeatAdmission`). A seat
brings its work only seconds after it is taken, once its table deals and its player
starts to act, and the measure is an average over the window besides. A room that seated
every player who asked until the measure said full had seated many more meanwhile, and
kept them (seated players are never refused); and each moment the measure dipped below
the threshold, as players left, let in a crowd of the refused asking again (at 500
tables of six, 3,000 players arriving in a minute, the tail on other players' sockets
reached 2 s and 500 acts came after their clock ran out). Slowed, the room nears its
capacity at a pace the measure can follow. The seat of each interval goes to the first
sit that asks for it, whether or not that sit then succeeds, and the others are refused
as the full room refuses them: a sit without a key before the database thread, one with
a key once the key is looked up, before the table's lock
(`tables.services.seating.seat_take_unless_busy`): a key that moved chips already is a
retry, answered as the first time.

The measure is the process's own. Several web processes each refuse seats when they
are full; on one machine they share its cores and fill up together.
"""

import contextlib
import dataclasses
import enum
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from django.conf import settings

from tables.exceptions import RoomBusy
from tables.hop_order import SEATED_PLAY, Urgency, hop_order
from tables.viewer_limits import TokenBucket

logger = logging.getLogger(__name__)

R = TypeVar("R")

WINDOW = 3.0  # seconds
# What a refused player is told to wait, in seconds (Retry-After over HTTP).
RETRY_AFTER = 30
# A player's pace: the hops of one seated player that count as seated play (and go
# first), at once and a second. A person at a table sends a command every few seconds,
# a bot of the load test at human pace no more; past it, theirs go with the viewers'.
PACE_BURST = 20
PACE_PER_SECOND = 4.0
# Players remembered before the first sweep of those back at a full pace (see
# `PlayerPace._sweep`).
PACE_SWEEP_FROM = 1024


class SeatedPlay:
    """The CPU time the database thread spent on seated play over the last `window`
    seconds: each hop's, noted when it is done (from the thread itself)."""

    def __init__(self, *, window: float = WINDOW, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.clock = clock
        self._hops: deque[tuple[float, float]] = deque()  # (done at, CPU seconds)
        # Noted on the database thread; read on the event loop and on HTTP's threads.
        self._lock = threading.Lock()

    def add(self, cpu: float) -> None:
        """A hop of seated play is done now, having run `cpu` seconds on the thread."""
        with self._lock:
            now = self.clock()
            self._hops.append((now, cpu))
            self._forget(now)

    def share(self) -> float:
        """The CPU seconds of seated play in the window, a second of it: a core's share."""
        with self._lock:
            self._forget(self.clock())
            return sum(cpu for _, cpu in self._hops) / self.window

    def _forget(self, now: float) -> None:
        since = now - self.window
        while self._hops and self._hops[0][0] < since:
            self._hops.popleft()


seated_play = SeatedPlay()


class PlayerPace:
    """How many hops of each seated player count as seated play now: a token bucket a
    user (`PACE_BURST`, refilled at `PACE_PER_SECOND`), this process's. Used on the event
    loop only."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._buckets: dict[int, TokenBucket] = {}
        self._sweep_above = PACE_SWEEP_FROM

    def take(self, user_id: int) -> bool:
        """One more hop of this player's counts (False: they are past a player's pace)."""
        bucket = self._buckets.get(user_id)
        if bucket is None:
            if len(self._buckets) >= self._sweep_above:
                self._sweep()
            bucket = self._buckets[user_id] = TokenBucket(capacity=PACE_BURST, rate=PACE_PER_SECOND)
        return bucket.take(self.clock())

    def _sweep(self) -> None:
        """Forget the players back at a full bucket (as new); the next sweep comes when
        the map has doubled again (tables/viewer_limits.py sweeps its viewers alike)."""
        now = self.clock()
        for user_id in [u for u, bucket in self._buckets.items() if bucket.full(now)]:
            del self._buckets[user_id]
        self._sweep_above = max(PACE_SWEEP_FROM, 2 * len(self._buckets))


player_pace = PlayerPace()


def play_urgency(*, user_id: int, decision: bool) -> Urgency:
    """The urgency of a hop of a player seated at the table it is for: a decision's or
    the rest of their play's (`SEATED_PLAY`, measured), or, past a player's pace, a
    viewer's (`OTHER`, not measured)."""
    if not player_pace.take(user_id):
        return Urgency.OTHER
    return Urgency.CLOCK if decision else Urgency.TABLE


@contextlib.asynccontextmanager
async def in_turn(urgency: Urgency = Urgency.VIEW) -> AsyncIterator[None]:
    """Wait for a hop's turn to the database thread by `urgency` (tables/hop_order.py);
    the hop awaited inside is done on leaving. Not measured: for hops that are no
    seated play (a socket's user read as it connects)."""
    async with hop_order.turn(urgency):
        yield


async def on_database_thread(
    call: Callable[..., R], /, *args: Any, urgency: Urgency = Urgency.VIEW, **kwargs: Any
) -> R:
    """`call(*args, **kwargs)` on the database thread, as `database_sync_to_async` runs
    it, in its turn by `urgency` (tables/hop_order.py); seated play's CPU there, raised
    or not, is noted in `seated_play`."""
    if urgency in SEATED_PLAY:
        call = _timed(call, seated_play)  # the same measure at the end, whatever happens
    async with hop_order.turn(urgency):
        return await database_sync_to_async(call)(*args, **kwargs)


def _timed(call: Callable[..., R], measure: SeatedPlay) -> Callable[..., R]:
    def timed(*args: Any, **kwargs: Any) -> R:
        start = time.thread_time()  # this thread's CPU: none while it waits
        try:
            return call(*args, **kwargs)
        finally:
            measure.add(time.thread_time() - start)

    return timed


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
    """How a process takes new seats, by its seated play's CPU."""

    OPEN = "open"
    SLOWED = "slowed"  # one every SEATING_SLOW_INTERVAL seconds
    CLOSED = "closed"


def seating_now() -> tuple[Seating, float]:
    """How this process takes new seats now, and the measure that decided it (a core's
    share, `SeatedPlay.share`)."""
    share = seated_play.share()
    if not settings.SEATING_OPEN or share > settings.SEATING_SHED_CPU:
        seating = Seating.CLOSED
    elif share > settings.SEATING_SLOW_CPU:
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
        "new seats %s: seated play took %.0f%% of a core on the database thread over the "
        "last %g s%s",
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
