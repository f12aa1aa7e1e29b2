"""Limits per viewer on the table WebSocket: how many sockets one viewer holds open, and
how fast they connect and send commands over all of them, over all the room's web
processes (shared in Redis).

Each table socket has its own token bucket for its frames (tables/consumers.py), but
that bounds neither the sockets one client opens nor what it sends spread over many.
Every connect costs hops to a web process's one database thread (the session's user,
the table's existence: tables/capacity.py), so one client opening hundreds of sockets,
or reconnecting in a loop, could fill that thread and slow every table.

A viewer is the user for a signed-in socket, else the client's address (`scope["client"]`:
the peer's address, or the client's as daphne reads it from X-Forwarded-For when started
with `--proxy-headers`, e.g. `python -m poker_room.serve -- --proxy-headers`; the proxy
must then set that header itself rather than pass on the client's), an IPv6 client's
counted under its /64 network (poker_room/addresses.py: it may pick any address of it
at will). Per viewer, over every web process of the room:

* open sockets are capped: settings.TABLE_SOCKETS_PER_USER (16) a user and
  settings.TABLE_SOCKETS_PER_ADDRESS (64) an address, higher because an address is shared
  by everyone behind one NAT. A signed-in socket holds a place under both caps.
* one token bucket, shared by the viewer's sockets, is spent by each connect and each
  frame: a burst of settings.TABLE_VIEWER_BURST (40), refilled at
  settings.TABLE_VIEWER_PER_SECOND (20) a second.

The address's cap is asked before the user is read from the database, and so is its
bucket for a socket that can only be a spectator's (it carries no session): an address
over its cap, or a spectator out of tokens, costs no database hop. A socket that may be
signed in is let on to the user's read only while its address's bucket holds a token, so
a client presenting session cookies that name no session (read, then found anonymous,
spending the address's token) cannot buy a database hop per connect either.

Shared, not each process's own (issue #46: over two web processes a user held 32 sockets
under a cap of 16, and sent 37 frames a second against 20). In Redis, under the room's
key prefix (`keys`), by scripts that each do their part in one round trip:

* A viewer's sockets are a sorted set, a member a socket (its process's token and an id
  of its own) scored by when its lease ends, `LEASE` seconds on. A connect drops the
  expired members, counts the rest, and if under the cap adds its own and spends (or,
  for an address before its user's read, only finds) a token of the viewer's bucket,
  all or nothing (`_ENTER`). A close removes its member before its disconnect goes on
  (a socket cancelled as its process stops leaves it to its lease). Each process renews
  its sockets' leases every `LEASE / 3` seconds (`_renew_leases`, which also puts back
  any that Redis lost in a restart), so the sockets of a process killed outright count
  for at most `LEASE` more.
* A viewer's bucket is a hash (its tokens, and when it was last refilled, by Redis's own
  clock, one for all the processes) that only the scripts change, refilling it as they
  go. A frame spends a token its process has leased from it (`_LEASE`: up to
  `LEASE_TOKENS` at once, fewer when fewer are there; a connect may spend one too): a
  viewer costs a round trip every few frames, not one a frame. The room is short of
  CPU, not of Redis: a round trip costs a web process about 200 us of CPU, a frame's
  own check under 1 us (bench/viewer_budget.py). Every frame any process lets through
  spent a token of the one bucket, so over all processes a viewer sends at most the
  rate a second, and the burst at once (and the few tokens each process still held
  leased from before), the bound of one bucket; the batches only cost a viewer the few
  tokens their other processes hold unspent. A process finding the
  bucket empty refuses that viewer's frames without asking again until Redis said a
  lease's worth could be there: a viewer flooding costs a round trip or two a lease.

While Redis cannot be reached each process counts on its own, in its memory, as the room
did before (a viewer may then hold N times as many sockets over N processes): an outage
closes no socket. It logs that at most every `WARN_EVERY` seconds, and asks Redis again
`RETRY_AFTER` seconds after a failure. The in-memory counts are kept beside the shared
ones all along, on the event loop only (the consumers'), so nothing here locks; a
viewer with no socket open, nothing leased and a full bucket is the same as one never
seen, and is forgotten (`ViewerLimits._sweep`).
"""

import asyncio
import logging
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio
from django.conf import settings
from redis.exceptions import RedisError

from poker_room.addresses import address_group

logger = logging.getLogger(__name__)

# ("user", id), ("address", "203.0.113.7") or ("address", "2001:db8:1:2::/64"): the two
# kinds never meet.
Viewer = tuple[str, int | str]

# The map of viewers is swept when it has doubled since the last sweep, and not below
# this size: a sweep reads every entry, so it runs once per as many new viewers as it
# reads (a constant cost per viewer), and a small process never sweeps at all.
SWEEP_FROM = 1024
# How long a socket's place in Redis lasts unless its process renews it (seconds).
LEASE = 60.0
# Tokens a process leases from a viewer's bucket at once, at most: a Redis round trip
# costs a web process about 200 us of CPU (redis-py's asyncio client, bench/viewer_budget.py),
# a frame's own check under 1 us; a viewer on two processes may find 8 of their 40
# stranded on the other.
LEASE_TOKENS = 8
# Redis's answer is awaited this long at most (seconds) before the process counts alone.
REDIS_TIMEOUT = 1.0
RETRY_AFTER = 5.0
WARN_EVERY = 30.0
# A viewer whose bucket never refills (a rate of 0) is not asked again for this long.
NEVER = 3600.0

REDIS_ERRORS = (RedisError, OSError, asyncio.TimeoutError)

# Refill a bucket (KEYS[2] for _ENTER, KEYS[1] for _LEASE) by Redis's clock and save it,
# to expire once it would be full again (a full bucket is the same as none).
_BUCKET = """
local function now_seconds()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function refilled(key, now, capacity, rate)
  local b = redis.call('HMGET', key, 't', 'at')
  local tokens, at = tonumber(b[1]), tonumber(b[2])
  if tokens == nil or at == nil then return capacity end
  return math.min(capacity, tokens + math.max(0, now - at) * rate)
end
local function save(key, tokens, now, capacity, rate)
  redis.call('HSET', key, 't', string.format('%.6f', tokens), 'at', string.format('%.6f', now))
  local ttl = 3600000
  if rate > 0 then ttl = math.ceil((capacity - tokens) / rate * 1000) + 1000 end
  redis.call('PEXPIRE', key, ttl)
end
"""
# A socket enters: KEYS = (its viewer's sockets, its viewer's bucket); ARGV = (cap,
# member, lease seconds, capacity, rate, '1' to spend a token, '0' to find one, '-' for
# none: its process holds one leased). 1: in; -1: over the cap; 0: no token. Nothing
# changes unless in.
_ENTER = (
    _BUCKET
    + """
local now = now_seconds()
local capacity, rate = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return -1 end
if ARGV[6] ~= '-' then
  local tokens = refilled(KEYS[2], now, capacity, rate)
  if tokens < 1 then return 0 end
  if ARGV[6] == '1' then
    save(KEYS[2], tokens - 1, now, capacity, rate)
  end
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[3])) + 1)
return 1
"""
)
# Lease tokens: KEYS = (the bucket,); ARGV = (capacity, rate, most). Returns the tokens
# granted and, when none, the milliseconds until a lease's worth can be there (asked
# sooner, a flooding viewer would cost a round trip a token).
_LEASE = (
    _BUCKET
    + """
local now = now_seconds()
local capacity, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local tokens = refilled(KEYS[1], now, capacity, rate)
local granted = math.min(tonumber(ARGV[3]), math.floor(tokens))
save(KEYS[1], tokens - granted, now, capacity, rate)
local wait = 0
if granted == 0 then
  local batch = math.min(tonumber(ARGV[3]), capacity)
  if rate > 0 then wait = math.ceil((batch - tokens) / rate * 1000) else wait = -1 end
end
return {granted, wait}
"""
)
# Renew leases: KEYS = the sockets' sets; ARGV = (lease seconds, a member for each key).
_RENEW = """
local t = redis.call('TIME')
local until_ = tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, until_, ARGV[i + 1])
  redis.call('EXPIRE', key, math.ceil(tonumber(ARGV[1])) + 1)
end
return #KEYS
"""
# Sockets in a set whose lease has not ended: KEYS = (the set,).
_COUNT = """
local t = redis.call('TIME')
return redis.call('ZCOUNT', KEYS[1], '(' .. (tonumber(t[1]) + tonumber(t[2]) / 1000000), '+inf')
"""
RENEW_BATCH = 500  # leases renewed by one script call


def client_address(scope: dict[str, Any]) -> str | None:
    """The client's address (daphne's peer, or X-Forwarded-For's with --proxy-headers),
    as a limit per address counts it (an IPv6 client's /64); None when the server has
    none (a unix socket, a test's communicator)."""
    client = scope.get("client")
    return address_group(str(client[0])) if client else None


@dataclass
class TokenBucket:
    """`capacity` commands at once, refilled at `rate` a second (times in seconds)."""

    capacity: float
    rate: float
    tokens: float = field(init=False)
    updated: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.tokens = self.capacity

    def _refill(self, now: float) -> None:
        if self.updated is not None:
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def take(self, now: float) -> bool:
        """Spend one token at time `now`; False (nothing spent) when none is left."""
        self._refill(now)
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def holds_token(self, now: float) -> bool:
        """Whether `take` would succeed at `now` (nothing is spent)."""
        self._refill(now)
        return self.tokens >= 1

    def full(self, now: float) -> bool:
        """Whether the bucket is back at its capacity at `now` (as a new one would be)."""
        self._refill(now)
        return self.tokens >= self.capacity


@dataclass
class _ViewerState:
    bucket: TokenBucket  # this process's own, while Redis is away
    sockets: int = 0  # open here
    leased: int = 0  # tokens leased from the shared bucket, unspent
    dry_until: float = 0.0  # the shared bucket holds no token before then


class ViewerLimits:
    """The room's limits per viewer, as this process applies them (see above)."""

    def __init__(self, *, namespace: str = "", clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.namespace = namespace
        # The room's keys (the test settings give each suite its own prefix; a test, a
        # namespace of its own).
        self.prefix = f"{settings.CACHES['default'].get('KEY_PREFIX', '')}:viewers{namespace}"
        self.process = uuid.uuid4().hex  # this process's sockets' members
        self._viewers: dict[Viewer, _ViewerState] = {}
        self._sweep_above = SWEEP_FROM
        self._places: set[SocketPlace] = set()  # holding places in Redis, here
        # Tasks of this process's own (the loop keeps only a weak reference to a task):
        # places given back on their way to Redis, a renewal of the leases under way.
        self._tasks: set[asyncio.Task[None]] = set()
        self._renewal: asyncio.TimerHandle | None = None  # the next renewal's
        self._redis: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Redis] = (
            weakref.WeakKeyDictionary()
        )
        self._redis_away_until = 0.0
        self._warned_at = -WARN_EVERY

    # -- what the consumers ask ------------------------------------------------------

    async def socket_opens(
        self, address: str | None, *, maybe_signed_in: bool
    ) -> "SocketPlace | None":
        """A socket from `address` asks for a place before its user is known (no database
        work): None if its address is at its cap, or out of tokens; else its place, which
        `SocketPlace.identify` completes once the user is known.

        A socket with no address (a unix socket's, or a test's) is not limited by one.
        `maybe_signed_in`: the socket carries a session (or a user); without one it is a
        spectator's, its address is its viewer and the connect spends that token now
        (else the token is the user's to spend, once read; the address must still hold
        one, or a flood of unknown sessions would buy a database hop each)."""
        place = SocketPlace(self, address)
        if address is None:
            return place
        viewer: Viewer = ("address", address)
        spend = not maybe_signed_in
        if not await self._enter(place, viewer, settings.TABLE_SOCKETS_PER_ADDRESS, spend):
            return None
        place.spent = spend
        return place

    def take_here(self, viewer: Viewer | None) -> bool | None:
        """Spend one of `viewer`'s tokens (a frame of theirs) if this process can tell
        alone: True (a leased token spent), False (none can be there yet), None (ask
        Redis: `take`). No viewer (a spectator without an address): always True."""
        if viewer is None:
            return True
        state = self._state(viewer)
        if state.leased:
            state.leased -= 1
            return True
        now = self.clock()
        if now < self._redis_away_until:
            return state.bucket.take(now)
        if now < state.dry_until:
            return False
        return None

    async def take(self, viewer: Viewer | None) -> bool:
        """Spend one of `viewer`'s tokens: False (nothing spent) when none is left."""
        if viewer is None:
            return True
        here = self.take_here(viewer)
        if here is not None:
            return here
        state = self._state(viewer)
        leased = await self._lease(viewer)
        if leased is None:  # Redis away: this process's own bucket
            return state.bucket.take(self.clock())
        granted, wait = leased
        if not granted:
            state.dry_until = self.clock() + (NEVER if wait < 0 else wait / 1000)
            return False
        state.leased += granted - 1
        return True

    def sockets(self, viewer: Viewer) -> int:
        """How many sockets of `viewer` hold a place in this process now."""
        state = self._viewers.get(viewer)
        return 0 if state is None else state.sockets

    async def sockets_everywhere(self, viewer: Viewer) -> int:
        """How many sockets of `viewer` hold a place in the room now (Redis's count)."""
        return int(await self._scripts().count(keys=[self._key(viewer, "sockets")]))

    def __len__(self) -> int:
        """Viewers remembered (for the tests of forgetting)."""
        return len(self._viewers)

    # -- places ------------------------------------------------------------------------

    async def _enter(self, place: "SocketPlace", viewer: Viewer, cap: int, spend: bool) -> bool:
        """Take a place under `viewer`'s cap for `place` and spend (`spend`) or find a
        token of theirs, in Redis or, while it is away, here; False (nothing taken) if
        either is missing."""
        state = self._state(viewer)
        now = self.clock()
        # A token this process leased already is the viewer's as much as one in Redis:
        # spent (taken now, given back if the socket is refused) or found here.
        leased = state.leased >= 1
        if leased and spend:
            state.leased -= 1
        entered: bool | None = None
        if now >= self._redis_away_until:
            token = "-" if leased else "1" if spend else "0"
            entered = await self._redis_enter(place, viewer, cap, token)
        if entered is None:  # Redis away: this process's own count and bucket
            entered = state.sockets < cap and (
                leased or (state.bucket.take(now) if spend else state.bucket.holds_token(now))
            )
        if not entered:
            if leased and spend:
                state.leased += 1
            return False
        state.sockets += 1
        place.held.append(viewer)
        if place not in self._places:
            self._places.add(place)
            self._renew_later()
        return True

    async def _redis_enter(
        self, place: "SocketPlace", viewer: Viewer, cap: int, token: str
    ) -> bool | None:
        """The script's answer (True: in), or None when Redis cannot be reached. `token`:
        "1" spend one of the bucket's, "0" find one there, "-" none needed."""
        script = self._scripts().enter
        args = [cap, place.member, LEASE, *self._bucket_size(), token]
        keys = [self._key(viewer, "sockets"), self._key(viewer, "tokens")]
        try:
            async with asyncio.timeout(REDIS_TIMEOUT):
                return int(await script(keys=keys, args=args)) == 1
        except REDIS_ERRORS as exc:
            self._redis_failed(exc)
            return None

    def _leave(self, place: "SocketPlace") -> None:
        """`place`'s sockets are closed: give back its places here (in Redis, `_remove`)."""
        for viewer in place.held:
            state = self._viewers.get(viewer)
            if state is not None and state.sockets > 0:
                state.sockets -= 1
        self._places.discard(place)
        if not self._places and self._renewal is not None:
            self._renewal.cancel()
            self._renewal = None

    async def _remove(self, place: "SocketPlace") -> None:
        """Give `place`'s places back in Redis (when it cannot be reached, its lease ends
        by itself)."""
        if not place.held or self.clock() < self._redis_away_until:
            return
        try:
            async with asyncio.timeout(REDIS_TIMEOUT):
                pipe = self._scripts().client.pipeline(transaction=False)
                for viewer in place.held:
                    pipe.zrem(self._key(viewer, "sockets"), place.member)
                await pipe.execute()
        except REDIS_ERRORS as exc:
            self._redis_failed(exc)

    def _in_a_task(self, work: Any) -> None:
        """Run the coroutine `work` in a task of its own, kept until done."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _renew_later(self) -> None:
        """Renew the leases LEASE / 3 seconds from now, unless a renewal is due already
        (a timer, not a task waiting: a loop that closes leaves nothing running behind)."""
        loop = asyncio.get_running_loop()
        if self._renewal is None or self._renewal.cancelled():
            self._renewal = loop.call_later(LEASE / 3, self._renew_due)

    def _renew_due(self) -> None:
        self._renewal = None
        if self._places:
            self._in_a_task(self._renew_leases())

    async def _renew_leases(self) -> None:
        """Renew the leases of the places this process holds in Redis (putting back any it
        lost), then the next renewal is due in LEASE / 3 seconds while any is held."""
        held = [(self._key(v, "sockets"), p.member) for p in self._places for v in p.held]
        try:
            async with asyncio.timeout(REDIS_TIMEOUT * 5):
                script = self._scripts().renew
                for start in range(0, len(held), RENEW_BATCH):
                    batch = held[start : start + RENEW_BATCH]
                    await script(
                        keys=[key for key, _ in batch],
                        args=[LEASE, *(member for _, member in batch)],
                    )
        except REDIS_ERRORS as exc:
            self._redis_failed(exc)
        if self._places:
            self._renew_later()

    # -- tokens ------------------------------------------------------------------------

    async def _lease(self, viewer: Viewer) -> tuple[int, int] | None:
        """(tokens granted, milliseconds until one can be there, -1: never) from the
        viewer's shared bucket, or None when Redis cannot be reached."""
        script = self._scripts().lease
        try:
            async with asyncio.timeout(REDIS_TIMEOUT):
                granted, wait = await script(
                    keys=[self._key(viewer, "tokens")],
                    args=[*self._bucket_size(), LEASE_TOKENS],
                )
        except REDIS_ERRORS as exc:
            self._redis_failed(exc)
            return None
        return int(granted), int(wait)

    @staticmethod
    def _bucket_size() -> tuple[float, float]:
        return settings.TABLE_VIEWER_BURST, settings.TABLE_VIEWER_PER_SECOND

    # -- Redis -------------------------------------------------------------------------

    def _key(self, viewer: Viewer, what: str) -> str:
        kind, name = viewer
        return f"{self.prefix}:{kind}:{name}:{what}"

    def _scripts(self) -> "_Redis":
        loop = asyncio.get_running_loop()
        scripts = self._redis.get(loop)
        if scripts is None:
            scripts = self._redis[loop] = _Redis()
        return scripts

    def _redis_failed(self, exc: BaseException) -> None:
        now = self.clock()
        self._redis_away_until = now + RETRY_AFTER
        if now - self._warned_at >= WARN_EVERY:
            self._warned_at = now
            logger.warning(
                "limits per viewer: Redis unavailable (%r); each web process counts its "
                "own sockets and tokens until it is back",
                exc,
            )

    # -- this process's memory -----------------------------------------------------------

    def _state(self, viewer: Viewer) -> _ViewerState:
        state = self._viewers.get(viewer)
        if state is None:
            if len(self._viewers) >= self._sweep_above:
                self._sweep()
            state = _ViewerState(
                bucket=TokenBucket(
                    capacity=settings.TABLE_VIEWER_BURST, rate=settings.TABLE_VIEWER_PER_SECOND
                )
            )
            self._viewers[viewer] = state
        return state

    def _sweep(self) -> None:
        """Forget every viewer with no socket open, nothing leased and a full bucket:
        they are as new (what the shared bucket holds for them stays in Redis). The next
        sweep comes when the map has doubled again: the map stays within twice the
        viewers that are active (a socket open or tokens spent lately)."""
        now = self.clock()
        idle = [
            viewer
            for viewer, s in self._viewers.items()
            if s.sockets == 0 and not s.leased and s.dry_until <= now and s.bucket.full(now)
        ]
        for viewer in idle:
            del self._viewers[viewer]
        self._sweep_above = max(SWEEP_FROM, 2 * len(self._viewers))


class _Redis:
    """A Redis client of one event loop, and the scripts registered with it."""

    def __init__(self) -> None:
        self.client = redis.asyncio.Redis.from_url(
            settings.REDIS_URL, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
        )
        self.enter = self.client.register_script(_ENTER)
        self.lease = self.client.register_script(_LEASE)
        self.renew = self.client.register_script(_RENEW)
        self.count = self.client.register_script(_COUNT)


@dataclass(eq=False)
class SocketPlace:
    """One socket's places (its address's, then its user's) and the viewer whose bucket
    its frames spend. Given back once, however often `give_back` is called: a connect
    that failed halfway and the disconnect after it may both ask."""

    limits: ViewerLimits  # the one it was taken from, whatever replaces the process's since
    address: str | None
    held: list[Viewer] = field(default_factory=list)
    viewer: Viewer | None = None
    spent: bool = False  # the connect's token is spent
    given_back: bool = False
    member: str = ""  # its members' name in Redis's sets of sockets

    def __post_init__(self) -> None:
        self.member = f"{self.limits.process}:{uuid.uuid4().hex}"

    async def identify(self, user_id: int | None) -> bool:
        """The user is known (None: a spectator): take the user's place and spend the
        connect's token (a spectator's from the address, unless spent already). False:
        refused; what the socket holds is given back with `give_back`."""
        if user_id is None:
            self.viewer = None if self.address is None else ("address", self.address)
            if self.spent or self.viewer is None:
                return True
            self.spent = await self.limits.take(self.viewer)
            return self.spent
        self.viewer = ("user", user_id)
        if not await self.limits._enter(self, self.viewer, settings.TABLE_SOCKETS_PER_USER, True):
            return False
        self.spent = True
        return True

    def take_here(self) -> bool | None:
        """Spend a token of this socket's viewer for a frame, if this process can tell
        alone (None: `take`)."""
        return self.limits.take_here(self.viewer)

    async def take(self) -> bool:
        """Spend a token of this socket's viewer for a frame."""
        return await self.limits.take(self.viewer)

    def give_back(self) -> None:
        """Give the places back in this process only: for a socket cancelled without its
        disconnect (its process stopping); in Redis, its lease ends them."""
        self._given_back_here()

    async def release(self) -> None:
        """Give the places back, here and in Redis (the disconnect's, awaited)."""
        if self._given_back_here():
            await self.limits._remove(self)

    def _given_back_here(self) -> bool:
        """Give the places back in this process: True the first time only."""
        if self.given_back:
            return False
        self.given_back = True
        self.limits._leave(self)
        return True


# This process's limits. Read as `viewer_limits.limits` at each connect (never imported
# by name), so that a test can put a fresh one in its place (tests/conftest.py).
limits = ViewerLimits()
