"""The order in which a web process's hops reach its database thread: a seated player's
decision a turn's clock waits for first, then the seated players' other table commands,
then what viewers without a seat ask, then what only shows the table.

Every table command, snapshot and connection check of a web process runs on its one
database thread (tables/capacity.py), and that thread's own queue is first come, first
served. When every player at once sits out and leaves (the end of the load test: a
thousand of them in a few seconds), an `act` sent two seconds into its turn waited five
to eight seconds behind them, and reached its table after the clock had run out: refused
`stale`, the player timed out though they had acted in time. A sit-out, a leave or a
snapshot loses nothing by waiting a few seconds more; a decision loses the hand.

So the hops wait here, on the event loop, and at most `DEPTH` of them are handed to the
thread at once: enough that the thread never idles while the loop is busy handing it the
next, few enough that a hop asked for later but more urgent overtakes all the others
still waiting. Within an urgency the order is first come, first served. A socket's own
commands are carried out one after another, but for its decisions, which go ahead of
its other commands still waiting (tables/consumers.py): a player's `act` must not wait
behind the `sit_out` they clicked a moment before it either.

The seated players' play goes before anything a viewer without a seat asks (issue #46:
four free accounts flooding `snapshot`, `mute` and `auto_top_up` went in turn with the
players' commands). The consumer says which a hop is (`Urgency`): a command is the
seated players' only when its sender holds a seat at the table (a decision or a table
command) and keeps to a player's pace (tables/capacity.py, `PlayerPace`); a viewer's
hops can then hold seated play back by no more than the `DEPTH` hops handed over before
it came. What goes first is also what tables/capacity.py measures.

The one rule this bends: while decisions alone fill the thread, the rest waits. A room
in that state is past its capacity whatever the order, and seats no one meanwhile.
"""

import asyncio
import contextlib
import enum
import heapq
import itertools
from collections.abc import AsyncIterator

# Hops handed to the thread at once (the one it runs and the next, queued in its executor).
DEPTH = 2


class Urgency(enum.IntEnum):
    """What a hop is for, most urgent first. CLOCK and TABLE are the seated players'
    play (`SEATED_PLAY`), what tables/capacity.py measures."""

    CLOCK = 0  # a seated player's decision a turn's clock waits for (act, run it twice)
    # A seated player's other table commands (sit out, leave, top up, ...), their
    # snapshots and the records of their connection (a drop, a reconnect).
    TABLE = 1
    # What a viewer without a seat sends (a sit among it), a player's own settings (mute,
    # auto top-up: no table's), seated play past its player's pace.
    OTHER = 2
    VIEW = 3  # what only shows the table to a viewer without a seat; connection checks


# The hops of the seated players' play.
SEATED_PLAY = frozenset({Urgency.CLOCK, Urgency.TABLE})


class HopOrder:
    """Hands hops to the database thread `depth` at a time, the most urgent waiting first.

    It belongs to one event loop: the first hop on another loop (a test's own) starts it
    afresh, since nothing of the earlier loop can run any more."""

    def __init__(self, *, depth: int = DEPTH) -> None:
        self.depth = depth
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handed = 0  # hops handed to the thread and not yet done
        # (urgency, arrival, future): the future is set when the hop may go.
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    @property
    def waiting(self) -> int:
        """Hops waiting for their turn (those whose socket closed meanwhile included)."""
        return len(self._waiting)

    @contextlib.asynccontextmanager
    async def turn(self, urgency: Urgency) -> AsyncIterator[None]:
        """Wait until a hop of this urgency may go to the thread; it is done on leaving."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._handed, self._waiting = loop, 0, []
        if self._handed < self.depth and not self._waiting:
            self._handed += 1
        else:
            go: asyncio.Future[None] = loop.create_future()
            heapq.heappush(self._waiting, (urgency, next(self._arrivals), go))
            try:
                await go
            except asyncio.CancelledError:
                # Cancelled (its socket closed) after its turn came: pass the turn on. A
                # future cancelled while waiting stays in the heap and is skipped.
                if go.done() and not go.cancelled():
                    self._done(loop)
                raise
        try:
            yield
        finally:
            self._done(loop)

    def _done(self, loop: asyncio.AbstractEventLoop) -> None:
        """A hop handed over on `loop` is done: the most urgent one waiting goes next."""
        if loop is not self._loop:
            return  # of a loop gone by: the count started afresh without it
        self._handed -= 1
        while self._waiting:
            _, _, go = heapq.heappop(self._waiting)
            if not go.done():
                self._handed += 1
                go.set_result(None)
                return


hop_order = HopOrder()
