"""Spectators' snapshots from a cached form: one database read a table and version in a
web process, however many viewers without a seat ask.

A snapshot is a table's whole state, read in one transaction on the process's one
database thread (tables/capacity.py): every spectator's connect asked for one, and so
did every `snapshot` frame, each a read of its own. A crowd of spectators, or a few
clients asking in a loop within their budgets, kept that thread busy for nothing new
(issue #46). What a viewer without a seat sees is the same for all of them
(`tables.selectors.table_snapshot_public`; a signed-in one adds their own part,
`snapshot_for_viewer`, a few rows of theirs), and it changes only with the table's
stream: this process holds the last one it read for each table it follows, until the
table's feed (tables/feed.py) brings its next message. A viewer who asks meanwhile gets
it as it is (an anonymous one as the JSON text encoded once); viewers who ask while it
is being read wait for that read (single flight).

Why it is never behind the stream: the cache follows the table's feed as one more inbox
(`_Table`, whose `put_nowait` drops the snapshot as the feed delivers a message, on the
event loop, before any consumer can ask again), and only while a consumer of the table
here follows it (`follow`, `unfollow`: a feed left and joined again may have missed
messages). A consumer joins the feed before it asks for a snapshot (tables/consumers.py),
so a cached snapshot at version v reaches it with every message after v still to come
in its inbox. A read during which a message arrived is given to the viewers who asked
before that message (each joined the feed before it, so each gets it) and not kept:
whoever asks after it starts a new read. A resync of the feed (Redis was away: its
messages may be lost) reaches the cache as a message too.

Seated players' snapshots (their cards, their options) are read whole as before.
"""

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from django.db import connection, transaction

from tables.feed import Inbox, table_feed
from tables.models import Table
from tables.selectors import PublicSnapshot, table_snapshot_public

R = TypeVar("R")


def table_read(table_id: int, build: Callable[[Table], R]) -> R:
    """`build(table)` on one moment of the table: its version `v` and everything shown
    at `v` read in one REPEATABLE READ snapshot, or a command committed in between would
    be in the snapshot and again on the stream after it. (Inside a test's transaction
    the isolation is the test's.) On the database thread."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return build(Table.objects.select_related("stake_level").get(pk=table_id))


def public_snapshot_read(table_id: int) -> PublicSnapshot:
    """The table's public snapshot now (on the database thread)."""
    return table_read(table_id, lambda table: table_snapshot_public(table=table))


class _Table(asyncio.Queue[Any]):
    """One table's cached snapshot: an inbox of its feed that keeps nothing, whose every
    message (or resync) drops the snapshot."""

    def __init__(self, table_id: int) -> None:
        super().__init__()
        self.table_id = table_id
        self.followers: weakref.WeakSet[Inbox[Any]] = weakref.WeakSet()  # consumers' inboxes
        self.joined = False  # to the table's feed
        self.moved = 0  # messages seen since joined
        self.snapshot: PublicSnapshot | None = None  # read with nothing moved since
        self.reading: asyncio.Task[PublicSnapshot] | None = None
        self.reading_from = 0  # `moved` when that read began

    def put_nowait(self, item: Any) -> None:
        """The feed's delivery: the table moved on."""
        self.moved += 1
        self.snapshot = None


class SnapshotCache:
    """This process's public snapshots, on one event loop (the feed's)."""

    def __init__(self) -> None:
        self._tables: dict[int, _Table] = {}

    def reads_in_flight(self) -> int:
        """Reads under way (for the tests)."""
        return sum(entry.reading is not None for entry in self._tables.values())

    async def follow(self, table_id: int, inbox: Inbox[Any]) -> None:
        """A consumer with this inbox follows the table's feed (joined it): the cache
        follows it too, from now until the last such consumer here `unfollow`s it."""
        entry = self._tables.get(table_id)
        if entry is None:
            entry = self._tables[table_id] = _Table(table_id)
        entry.followers.add(inbox)
        if not entry.joined:
            # At once: the consumer's own join has had the subscription confirmed.
            await table_feed().join(table_id, entry)
            entry.joined = True

    async def unfollow(self, table_id: int, inbox: Inbox[Any]) -> None:
        """The consumer leaves the table's feed: the cache too, if it was the last (one
        that ended without saying so is gone from `followers` by itself)."""
        entry = self._tables.get(table_id)
        if entry is None:
            return
        entry.followers.discard(inbox)
        if entry.followers:
            return
        del self._tables[table_id]
        if entry.joined:
            entry.joined = False
            await table_feed().leave(table_id, entry)

    async def public(
        self, table_id: int, read: Callable[[], Awaitable[PublicSnapshot]]
    ) -> PublicSnapshot:
        """The table's public snapshot: the one kept if the table has not moved since it
        was read, else the read under way if it has not moved since that began, else a
        new `read()` (kept if the table does not move meanwhile). A table no consumer
        here follows is read each time."""
        entry = self._tables.get(table_id)
        if entry is None or not entry.joined:
            return await read()
        if entry.snapshot is not None:
            return entry.snapshot
        if entry.reading is None or entry.reading_from != entry.moved:
            entry.reading_from = entry.moved
            entry.reading = asyncio.get_running_loop().create_task(self._read(entry, read))
            # A read whose askers all went (their sockets closed) still ends quietly.
            entry.reading.add_done_callback(_retrieve)
        # Shielded: one asker's socket closing does not cancel the others' read.
        return await asyncio.shield(entry.reading)

    async def _read(
        self, entry: _Table, read: Callable[[], Awaitable[PublicSnapshot]]
    ) -> PublicSnapshot:
        moved = entry.moved
        try:
            snapshot = await read()
        finally:
            if entry.reading is asyncio.current_task():
                entry.reading = None
        if entry.moved == moved and entry.joined:
            entry.snapshot = snapshot
        return snapshot


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()  # its askers were told; nobody else need be


_caches: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SnapshotCache]" = (
    weakref.WeakKeyDictionary()
)


def snapshot_cache() -> SnapshotCache:
    """The cache of the running event loop (daphne has one; a test may run several)."""
    loop = asyncio.get_running_loop()
    cache = _caches.get(loop)
    if cache is None:
        cache = _caches[loop] = SnapshotCache()
    return cache
