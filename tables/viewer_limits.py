"""Limits per viewer on the table WebSocket: how many sockets one viewer holds open, and
how fast they connect and send commands over all of them.

Each table socket has its own token bucket for its frames (tables/consumers.py), but
that bounds neither the sockets one client opens nor what it sends spread over many.
Every connect costs hops to the process's one database thread (the session's user, the
table's existence, a snapshot: tables/capacity.py), so one client opening hundreds of
sockets, or reconnecting in a loop, could fill that thread and slow every table.

A viewer is the user for a signed-in socket, else the client's address (`scope["client"]`:
the peer's address, or the client's as daphne reads it from X-Forwarded-For when started
with `--proxy-headers`, e.g. `python -m poker_room.serve -- --proxy-headers`; the proxy
must then set that header itself rather than pass on the client's), an IPv6 client's
counted under its /64 network (poker_room/addresses.py: it may pick any address of it
at will). Per viewer:

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

The counts are this web process's own, in its memory: the room runs several processes
(poker_room/serve.py), each allowing these numbers. They are used on the event loop only
(the consumers'), so nothing here locks. A viewer with no socket open and a full bucket is
the same as one never seen, and is forgotten (`ViewerLimits._sweep`).
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from poker_room.addresses import address_group

# ("user", id), ("address", "203.0.113.7") or ("address", "2001:db8:1:2::/64"): the two
# kinds never meet.
Viewer = tuple[str, int | str]

# The map of viewers is swept when it has doubled since the last sweep, and not below
# this size: a sweep reads every entry, so it runs once per as many new viewers as it
# reads (a constant cost per viewer), and a small process never sweeps at all.
SWEEP_FROM = 1024


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
    bucket: TokenBucket
    sockets: int = 0


class ViewerLimits:
    """The open sockets and the token bucket of each viewer of this process."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._viewers: dict[Viewer, _ViewerState] = {}
        self._sweep_above = SWEEP_FROM

    def socket_opens(self, address: str | None, *, maybe_signed_in: bool) -> "SocketPlace | None":
        """A socket from `address` asks for a place before its user is known (no database
        work): None if its address is at its cap, or out of tokens; else its place, which
        `SocketPlace.identify` completes once the user is known.

        A socket with no address (a unix socket's, or a test's) is not limited by one.
        `maybe_signed_in`: the socket carries a session (or a user); without one it is a
        spectator's, its address is its viewer and the connect spends that token now."""
        place = SocketPlace(self, address)
        if address is None:
            return place
        viewer: Viewer = ("address", address)
        state = self._state(viewer)
        if state.sockets >= settings.TABLE_SOCKETS_PER_ADDRESS:
            return None
        now = self.clock()
        if maybe_signed_in:
            # The token is the user's to spend, once read; the address must still have
            # one, or a flood of unknown sessions would buy a database hop each.
            if not state.bucket.holds_token(now):
                return None
        elif not state.bucket.take(now):
            return None
        else:
            place.spent = True
        state.sockets += 1
        place.held.append(viewer)
        return place

    def take(self, viewer: Viewer | None) -> bool:
        """Spend one of `viewer`'s tokens (a frame of theirs): False (nothing spent) when
        none is left. No viewer (a spectator without an address): always True."""
        if viewer is None:
            return True
        return self._state(viewer).bucket.take(self.clock())

    def sockets(self, viewer: Viewer) -> int:
        """How many sockets of `viewer` hold a place now."""
        state = self._viewers.get(viewer)
        return 0 if state is None else state.sockets

    def __len__(self) -> int:
        """Viewers remembered (for the tests of forgetting)."""
        return len(self._viewers)

    def _enter(self, viewer: Viewer, cap: int) -> bool:
        """Take a place under `viewer`'s cap and spend a token for the connect; False
        (nothing taken) if either is missing."""
        state = self._state(viewer)
        if state.sockets >= cap or not state.bucket.take(self.clock()):
            return False
        state.sockets += 1
        return True

    def _leave(self, viewer: Viewer) -> None:
        state = self._viewers.get(viewer)
        if state is not None and state.sockets > 0:
            state.sockets -= 1

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
        """Forget every viewer with no socket open and a full bucket: they are as new.
        The next sweep comes when the map has doubled again: the map stays within twice
        the viewers that are active (a socket open or tokens spent lately)."""
        now = self.clock()
        idle = [v for v, s in self._viewers.items() if s.sockets == 0 and s.bucket.full(now)]
        for viewer in idle:
            del self._viewers[viewer]
        self._sweep_above = max(SWEEP_FROM, 2 * len(self._viewers))


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

    def identify(self, user_id: int | None) -> bool:
        """The user is known (None: a spectator): take the user's place and spend the
        connect's token (a spectator's from the address, unless spent already). False:
        refused; what the socket holds is given back with `give_back`."""
        if user_id is None:
            self.viewer = None if self.address is None else ("address", self.address)
            if self.spent or self.viewer is None:
                return True
            self.spent = self.limits.take(self.viewer)
            return self.spent
        self.viewer = ("user", user_id)
        if not self.limits._enter(self.viewer, settings.TABLE_SOCKETS_PER_USER):
            return False
        self.spent = True
        self.held.append(self.viewer)
        return True

    def take(self) -> bool:
        """Spend a token of this socket's viewer for a frame."""
        return self.limits.take(self.viewer)

    def give_back(self) -> None:
        if self.given_back:
            return
        self.given_back = True
        for viewer in self.held:
            self.limits._leave(viewer)


# This process's limits. Read as `viewer_limits.limits` at each connect (never imported
# by name), so that a test can put a fresh one in its place (tests/conftest.py).
limits = ViewerLimits()
