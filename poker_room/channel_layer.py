"""The channel layer: channels-redis, with group entries that expire unless refreshed.

channels-redis keeps a group as a Redis sorted set of channel names scored by the time
they were added, and drops entries older than `group_expiry` when a message is sent to
the group. When a web process dies, its consumers never leave their tables' groups; with
the default expiry (24 hours) every table message is then pushed to the dead channels
until they are full and logged as "over capacity" for a day.

This layer keeps the expiry short (`group_expiry` in the settings, minutes) and, so
that live consumers are not dropped with the dead, remembers the groups this process's
channels joined and re-adds them every `group_refresh_interval` seconds from a task on
the event loop that added them (daphne's). Consumers need no change: they call
`group_add` on connect and `group_discard` on disconnect as before. A process that
dies stops refreshing, and its channels leave their groups within `group_expiry`.

Memberships added from a short-lived event loop (`async_to_sync` in a sync consumer or
a test) are refreshed while some loop of this process still runs the refresher.

Redis restarts: `receive` does not raise when Redis goes away (which closed every table
socket with 1011); it waits with backoff until Redis answers again, re-adds the channel
to its groups at once (a restarted Redis may have lost them), and goes on receiving. The
client sees a gap in the stream at the next message and resyncs from a snapshot.

A burst of connections (a hundred players arriving at once on one process) used to find
redis-py's pool of 100 connections all taken, and its pool then fails the command at
once (`MaxConnectionsError`): their `group_add` failed and the sockets were refused.
The pool here is a `BlockingConnectionPool` of the same size: a command waits up to
`POOL_WAIT_SECONDS` for a free connection instead.

Cancellation: on Python 3.11 a cancel that lands while redis-py reads a reply under
`asyncio.timeout` can come out as redis's `TimeoutError`, which redis-py's own retry or
our wait-for-Redis loop would then swallow. channels-redis receives in a loop of blocking
pops that never ends without a message, so a consumer's receive task cancelled that way
lived for ever, and the event loop shutting down (a test's, daphne's) waited for it for
ever. Every pop and every retry here checks whether the task is being cancelled and
stops if so; a message popped meanwhile stays in channels-redis's backup queue.
"""

import asyncio
import logging
import time
from collections import defaultdict
from typing import Any

from channels_redis.core import RedisChannelLayer
from redis.asyncio import BlockingConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

# What Redis being down, restarting or loading its data looks like from here.
REDIS_DOWN_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)
# Seconds between attempts while Redis is down: doubling from the first to the last.
RECEIVE_RETRY_FIRST = 0.5
RECEIVE_RETRY_MAX = 5.0
# Connections each process may open to Redis (redis-py's default), and how long a command
# waits for one of them when all are busy.
POOL_MAX_CONNECTIONS = 100
POOL_WAIT_SECONDS = 10.0


def raise_if_cancelling() -> None:
    """Stop retrying when this task is being cancelled (the consumer disconnected, the
    loop is closing): redis-py may report the cancelled read as a connection error, and
    a retry loop that swallowed it would keep the task alive, and its loop's shutdown
    waiting for it, for ever."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class RefreshingRedisChannelLayer(RedisChannelLayer):
    def __init__(self, *args: Any, group_refresh_interval: float | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if group_refresh_interval is None:
            group_refresh_interval = self.group_expiry / 4
        if not 0 < group_refresh_interval < self.group_expiry:
            raise ValueError("group_refresh_interval must be above 0 and below group_expiry")
        self.group_refresh_interval = group_refresh_interval
        # group -> channels of this process in it
        self.memberships: defaultdict[str, set[str]] = defaultdict(set)
        self._refreshers: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}

    def create_pool(self, index: int) -> BlockingConnectionPool:
        """The pool of host `index`: a command waits for a free connection (see above)."""
        host = dict(self.hosts[index])
        return BlockingConnectionPool.from_url(
            host.pop("address"),
            max_connections=POOL_MAX_CONNECTIONS,
            timeout=POOL_WAIT_SECONDS,
            **host,
        )

    async def group_add(self, group: str, channel: str) -> None:
        await super().group_add(group, channel)
        self.memberships[group].add(channel)
        self._ensure_refresher()

    async def group_discard(self, group: str, channel: str) -> None:
        members = self.memberships.get(group)
        if members is not None:
            members.discard(channel)
            if not members:
                del self.memberships[group]
        await super().group_discard(group, channel)

    async def receive(self, channel: str) -> dict[str, Any]:
        failures = 0
        while True:
            if failures:
                await asyncio.sleep(
                    min(RECEIVE_RETRY_MAX, RECEIVE_RETRY_FIRST * 2 ** (failures - 1))
                )
                try:
                    # Back: rejoin this channel's groups before waiting for their messages.
                    await self.groups_refresh(channel=channel)
                except REDIS_DOWN_ERRORS:
                    raise_if_cancelling()
                    failures += 1
                    continue
                logger.info("channel layer: Redis is back for %s", channel)
            try:
                return await super().receive(channel)
            except REDIS_DOWN_ERRORS as exc:
                raise_if_cancelling()
                if not failures:
                    logger.warning(
                        "channel layer: Redis unavailable (%r); %s waits for it", exc, channel
                    )
                failures += 1

    async def _brpop_with_clean(self, index: int, channel: str, timeout: int) -> Any:
        # channels-redis's one blocking pop (a private method, pinned with the package):
        # the place where its receive loop can be told that a cancel was swallowed.
        try:
            result = await super()._brpop_with_clean(index, channel, timeout)
        except REDIS_DOWN_ERRORS:
            raise_if_cancelling()
            raise
        raise_if_cancelling()
        return result

    async def flush(self) -> None:
        self.memberships.clear()
        await super().flush()

    async def close_pools(self) -> None:
        """Close the connections of every event loop, each on its own loop.

        A process can have more than one loop that used the layer: its own (daphne's, a
        test's) and others still running (sync code's `async_to_sync`). channels-redis
        closed every loop's connections from the calling loop, and a connection closed
        from a loop not its own raises. The connections of a loop that is neither this
        one nor running cannot be closed from here; they are left.
        """
        await self.wait_received()
        current = asyncio.get_running_loop()
        for loop, layer in list(self._layers.items()):
            if loop is current:
                await layer.flush()
            elif loop.is_running():
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(layer.flush(), loop))

    def _ensure_refresher(self) -> None:
        loop = asyncio.get_running_loop()
        for other, task in list(self._refreshers.items()):
            if task.done() or other.is_closed():
                del self._refreshers[other]
        if self._refreshers:
            return  # one refresher per process is enough; it re-adds every membership
        self._refreshers[loop] = loop.create_task(self._refresh_forever())

    async def _refresh_forever(self) -> None:
        while True:
            await asyncio.sleep(self.group_refresh_interval)
            try:
                await self.groups_refresh()
            except Exception as exc:  # Redis down: try again at the next tick
                raise_if_cancelling()
                logger.warning("channel layer: group refresh failed: %r", exc)
            raise_if_cancelling()

    async def group_live_size(self, group: str) -> int:
        """How many channels, of any process, are in `group` and not expired (a dead
        process's channels count until `group_expiry` drops them)."""
        connection = self.connection(self.consistent_hash(group))
        since = time.time() - self.group_expiry
        return int(await connection.zcount(self._group_key(group), since, "+inf"))

    async def groups_refresh(self, *, channel: str | None = None) -> None:
        """Re-add this process's channels (or this one) to their groups: they stay there
        for group_expiry from now."""
        now = time.time()
        for group, members in list(self.memberships.items()):
            channels = members if channel is None else members & {channel}
            if not channels:
                continue
            group_key = self._group_key(group)
            connection = self.connection(self.consistent_hash(group))
            await connection.zadd(group_key, dict.fromkeys(list(channels), now))
            await connection.expire(group_key, self.group_expiry)
