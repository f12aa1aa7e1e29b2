"""A table's stream to the web processes: Redis pub/sub, one subscription per table per process.

A command's messages (tables/events.py) are published once, after the commit, to the
table's Redis channel. Each web process subscribes once to each table it has viewers of,
reads each message once, decodes it once, and puts it in the inbox of every viewer's
consumer there (`TableFeed`), which sends each viewer its form.

It replaced the channel layer's group for the table stream: channels-redis keeps a group
as a sorted set scanned by every send, pushes a copy per process, and receiving one
costs four Redis round trips per process (a cleaning script, a blocking pop, a backup
entry and its removal) plus a lock-and-wait dance per consumer: under load about a fifth
of a web process's CPU (py-spy), against one read on a connection kept open here. A
process that dies leaves nothing behind (its subscriptions end with its connection),
so the table stream needs no group expiry. The channel layer still carries the rest
(a player's presence across processes, consumers/channel_layer.py). The same connection
reads the room's other channels a process listens to (`TableFeed.listen`: the notices
that a user's sessions may have ended, tables/session_watch.py).

Delivery is at most once, as the channel layer's was: a viewer that sees a gap in the
numbers asks for a snapshot. While Redis is down the reader waits with backoff, then
subscribes again to every table it serves; what was published meanwhile is lost (the
viewers see the gap at the next message, or resync at once). A connection that says
nothing for `SILENCE_LIMIT` seconds, not even a pong to the reader's idle pings, is
taken for lost in the same way. Messages of different processes may arrive out
of order; the consumer puts them back in order.

Redis keeps one pub/sub namespace for all its databases, so channel names carry the
room (poker_room/pubsub.py): two rooms (or a test run and a room) on one Redis stay
apart, and each message names its table and is checked against it before any viewer
sees it. They carry the form of the messages too (`WIRE_FORMAT`): while a room's
processes are upgraded one by one, a process never reads messages it cannot decode; it
misses those of the others, and its viewers see the gaps and resync from the database.
"""

import asyncio
import contextlib
import logging
import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
import redis.asyncio
from django.conf import settings

from poker_room.channel_layer import (
    RECEIVE_RETRY_FIRST,
    RECEIVE_RETRY_MAX,
    REDIS_DOWN_ERRORS,
    raise_if_cancelling,
)
from poker_room.pubsub import PUBLISH_TIMEOUT, publisher, room_channel

logger = logging.getLogger(__name__)

# A viewer's inbox holds at most this many unread commands' messages; beyond, the newest
# are dropped (their viewer, stuck for that long, resyncs when it is back).
INBOX_SIZE = 1000
# The reader wakes at least this often (seconds) to check its connection's health: after
# a wake with nothing heard it sends a PING, and a connection that has said nothing at
# all (no message, no pong) for SILENCE_LIMIT is taken for lost. A connection can die
# without a word (a host or a network gone, no RST): only TCP's retransmissions would
# find that, a quarter of an hour later, while every table of the process stayed silent.
READ_WAKE = 5.0
SILENCE_LIMIT = 15.0

Inbox = asyncio.Queue  # of group messages: {"type": "table.messages", "messages": [...]}


# The form of the feed's messages (tables.events.TableMessage.to_wire): a new one when a
# process of the old could not read them. 2: each form as the JSON text sent.
WIRE_FORMAT = 2


def feed_channel(table_id: int) -> str:
    """The Redis pub/sub channel of a table's stream (see the module's note on names)."""
    return room_channel(f"table.{table_id}.wire{WIRE_FORMAT}")


def publish(table_id: int, wires: Sequence[dict[str, Any]]) -> None:
    """Publish one command's messages (`TableMessage.to_wire`) to the table's viewers."""
    payload = msgpack.packb({"table": table_id, "messages": list(wires)}, use_bin_type=True)
    publisher().publish(feed_channel(table_id), payload)


def group_message(payload: bytes, table_id: int) -> dict[str, Any]:
    """A published payload as the consumer's `table.messages` handler takes it, checked
    and decoded here (once for all the viewers); ValueError if it is not one of the
    table's."""
    from tables.events import messages_from_group  # here: tables.events publishes through us

    try:
        body = msgpack.unpackb(payload, raw=False)
        if not isinstance(body, dict) or body.get("table") != table_id:
            raise ValueError("not a message of this table")
        message = {"type": "table.messages", "messages": body["messages"]}
        messages_from_group(message)
    except (ValueError, TypeError, KeyError, AttributeError, msgpack.UnpackException) as exc:
        raise ValueError(f"unreadable: {exc!r}") from None
    return message


# The message an inbox gets when its table's feed may have lost messages (Redis went
# away and is back): its consumer sends the viewer a fresh snapshot at once.
RESYNC: dict[str, Any] = {"type": "table.resync"}


class TableFeed:
    """This process's subscriptions (on one event loop) and the inboxes of its viewers."""

    def __init__(self) -> None:
        # Weakly: a consumer that ends without its disconnect (cancelled) takes its inbox
        # with it, rather than leaving it here to fill for ever.
        self._inboxes: defaultdict[str, weakref.WeakSet[Inbox]] = defaultdict(weakref.WeakSet)
        # Set once Redis has confirmed the subscription to the table (channel name), on
        # the connection being read; cleared when that connection fails.
        self._confirmed: dict[str, asyncio.Event] = {}
        self._tables: dict[str, int] = {}  # channel name -> table id
        # Channels other than tables' (`listen`): what they carry goes to their callback.
        self._listeners: dict[str, Callable[[bytes | None], None]] = {}
        self._redis: redis.asyncio.Redis | None = None
        self._pubsub: Any = None
        self._reader: asyncio.Task | None = None
        # Held while (un)subscribing or replacing the pub/sub: redis-py's pub/sub takes
        # its connection on its first command, and commands sent at once before it has
        # one each take a connection of their own, of which the reader reads only the
        # last. The tables subscribed on the others were confirmed, or not, and went
        # silent for good (issue #15's 50-table run: a table whose viewers on one process
        # heard nothing from the start).
        self._subscribing = asyncio.Lock()

    async def join(self, table_id: int, inbox: Inbox) -> None:
        """Deliver the table's messages to `inbox` from now on (raises when Redis is down
        or does not confirm in time: the viewer cannot follow the table then)."""
        channel = feed_channel(table_id)
        first = channel not in self._inboxes
        self._inboxes[channel].add(inbox)
        self._tables[channel] = table_id
        try:
            if first:
                self._confirmed[channel] = asyncio.Event()
                async with self._subscribing:
                    await self._connected().subscribe(channel)
            self._start_reader()
            # Once Redis has confirmed, nothing published to the table is missed: the
            # viewer's snapshot, read after this, and the stream then meet.
            await asyncio.wait_for(self._confirmed[channel].wait(), PUBLISH_TIMEOUT)
        except BaseException:
            self._drop(channel, inbox)
            raise

    async def listen(self, channel: str, callback: Callable[[bytes | None], None]) -> None:
        """Hand what is published to `channel` (a room's channel that is not a table's) to
        `callback` from now on, in the reader's task, and None each time some of it may
        have been lost (the connection was replaced). Raises as `join` does (then nothing
        listens: ask again later)."""
        if channel in self._listeners:
            return
        self._listeners[channel] = callback
        self._confirmed[channel] = asyncio.Event()
        try:
            async with self._subscribing:
                await self._connected().subscribe(channel)
            self._start_reader()
            await asyncio.wait_for(self._confirmed[channel].wait(), PUBLISH_TIMEOUT)
        except BaseException:
            del self._listeners[channel], self._confirmed[channel]
            raise

    async def leave(self, table_id: int, inbox: Inbox) -> None:
        channel = feed_channel(table_id)
        if self._drop(channel, inbox) and self._pubsub is not None:
            # Redis down: the reader subscribes again only to the tables still watched.
            with contextlib.suppress(*REDIS_DOWN_ERRORS):
                async with self._subscribing:
                    await self._pubsub.unsubscribe(channel)

    def _drop(self, channel: str, inbox: Inbox) -> bool:
        """Forget the inbox; True when it was the table's last one here."""
        inboxes = self._inboxes.get(channel)
        if inboxes is None:
            return False
        inboxes.discard(inbox)
        if inboxes:
            return False
        del self._inboxes[channel]
        del self._confirmed[channel]
        del self._tables[channel]
        return True

    def _start_reader(self) -> None:
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read_forever())

    def _connected(self) -> Any:
        if self._pubsub is None:
            self._pubsub = self._new_pubsub()
        return self._pubsub

    def _new_pubsub(self) -> Any:
        if self._redis is None:
            self._redis = redis.asyncio.Redis.from_url(
                settings.REDIS_URL, socket_connect_timeout=PUBLISH_TIMEOUT
            )
        return self._redis.pubsub()

    async def _read_forever(self) -> None:
        loop = asyncio.get_running_loop()
        failures = 0
        heard = loop.time()  # when the connection last said anything
        while True:
            try:
                if failures:
                    await asyncio.sleep(
                        min(RECEIVE_RETRY_MAX, RECEIVE_RETRY_FIRST * 2 ** (failures - 1))
                    )
                    await self._resubscribe()
                    logger.info("table feed: Redis is back; %d tables", len(self._inboxes))
                    failures = 0
                    heard = loop.time()
                elif getattr(self._pubsub, "connection", None) is None:
                    # Not connected yet: a fresh process's first viewers arrive together,
                    # and the reader, started by one of them, ran while another's subscribe
                    # was still connecting (redis-py sets the pub/sub's connection once it
                    # is connected). Read then, it raised "pubsub connection not set",
                    # taken for a lost connection: a warning, and every viewer resynced
                    # (issue #46). The subscribe holds the lock until it is sent.
                    async with self._subscribing:
                        heard = loop.time()
                message = await self._pubsub.get_message(timeout=READ_WAKE)
                if message is not None:
                    heard = loop.time()
                elif loop.time() - heard >= SILENCE_LIMIT:
                    raise ConnectionError(f"nothing heard from Redis for {SILENCE_LIMIT:g} s")
                else:
                    async with self._subscribing:  # one writer at a time (see __init__)
                        await self._pubsub.ping()
            except Exception as exc:  # Redis down, or anything else: never stop reading
                raise_if_cancelling()
                if not failures:
                    logger.warning("table feed: reading failed (%r); connecting again", exc)
                    self._connection_lost()
                failures += 1
                continue
            if message is None or message["channel"] is None:  # idle, or a pong
                continue
            channel = message["channel"].decode()
            if message["type"] == "message":
                self._deliver(channel, message["data"])
            elif message["type"] == "subscribe" and channel in self._confirmed:
                self._confirmed[channel].set()

    def _connection_lost(self) -> None:
        """Whatever was published from now until the resubscription is lost: no viewer
        may join as if subscribed, and every viewer resyncs once it is back."""
        for event in self._confirmed.values():
            event.clear()

    async def _resubscribe(self) -> None:
        """A new connection, subscribed to every table still watched here; its viewers
        resync (messages may have been lost meanwhile)."""
        async with self._subscribing:
            old, new = self._pubsub, self._new_pubsub()
            if self._inboxes or self._listeners:
                await new.subscribe(*self._inboxes, *self._listeners)
            else:
                await new.ping()  # connect (a pub/sub without a connection cannot be read)
            self._pubsub = new
        if old is not None:
            with contextlib.suppress(Exception):
                await old.aclose()
        for inboxes in list(self._inboxes.values()):
            for inbox in list(inboxes):
                with contextlib.suppress(asyncio.QueueFull):
                    inbox.put_nowait(RESYNC)
        for channel in list(self._listeners):
            self._hand_over(channel, None)

    def _hand_over(self, channel: str, payload: bytes | None) -> None:
        """To a listener's callback (`listen`): a fault of its own is logged, never the
        reader's (which would take it for a lost connection, or stop)."""
        try:
            self._listeners[channel](payload)
        except Exception:
            logger.exception("table feed: the listener of %s failed", channel)

    def _deliver(self, channel: str, payload: bytes) -> None:
        if channel in self._listeners:
            self._hand_over(channel, payload)
            return
        inboxes = self._inboxes.get(channel)
        if not inboxes:
            return  # left meanwhile
        try:
            message = group_message(payload, self._tables[channel])
        except ValueError as exc:  # not ours, or corrupt: nothing a viewer could use
            logger.error("table feed: dropped a message on %s: %s", channel, exc)
            return
        for inbox in list(inboxes):
            try:
                inbox.put_nowait(message)
            except asyncio.QueueFull:
                logger.warning("table feed: a viewer of %s is %d behind", channel, INBOX_SIZE)


_feeds: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, TableFeed]" = (
    weakref.WeakKeyDictionary()
)


def table_feed() -> TableFeed:
    """The feed of the running event loop (daphne has one; a test may run several)."""
    loop = asyncio.get_running_loop()
    feed = _feeds.get(loop)
    if feed is None:
        feed = _feeds[loop] = TableFeed()
    return feed


def new_inbox() -> Inbox:
    return asyncio.Queue(maxsize=INBOX_SIZE)
