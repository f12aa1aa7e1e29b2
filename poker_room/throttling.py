"""Limits per client: DRF throttles and the sign-up limit in the cache (Redis), letting
requests through while it is down, and /healthz's limit in the process's memory.

Throttle counters live in the Redis cache, and money lives in PostgreSQL: a Redis restart
must not make the cashier or the hand histories answer 500. While the cache cannot be
reached, these throttles allow every request and log a warning (at most once every
`WARN_EVERY` seconds per process, so that an outage does not flood the log). Any other
error still propagates. `CacheWindowLimit` counts events (sign-ups) per key the same way.

`AddressWindowLimit` is for /healthz, which reports whether Redis is reachable and must
answer within a second whatever Redis does: it counts in this process's memory (no round
trip, nothing to time out), so each web process allows its own number.
"""

import logging
import threading
import time
from typing import TYPE_CHECKING

from django.core.cache import cache
from redis.exceptions import RedisError
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from poker_room.addresses import address_group

if TYPE_CHECKING:  # rest_framework.views imports the throttles: no cycle at run time
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

# What the cache raises when Redis is down, unreachable or too slow (redis-py's errors;
# a socket error from below it).
CACHE_DOWN_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError)
WARN_EVERY = 30.0

_last_warning = 0.0
_warning_lock = threading.Lock()


def _warn_cache_down(throttle: object, exc: BaseException) -> None:
    global _last_warning
    with _warning_lock:
        now = time.monotonic()
        if now - _last_warning < WARN_EVERY:
            return
        _last_warning = now
    logger.warning(
        "throttle %s not applied: its cache is unavailable (%s: %s); letting requests "
        "through until it is back",
        getattr(throttle, "scope", None) or type(throttle).__name__,
        type(exc).__name__,
        exc,
    )


class FailOpenThrottleMixin:
    """Allow the request when the throttle's cache raises a connection error. An
    anonymous client is counted under its address as poker_room.addresses groups it (an
    IPv6 client's /64)."""

    def get_ident(self, request: "Request") -> str:
        return address_group(super().get_ident(request))  # type: ignore[misc]

    def allow_request(self, request: "Request", view: "APIView") -> bool:
        try:
            return super().allow_request(request, view)  # type: ignore[misc]
        except CACHE_DOWN_ERRORS as exc:
            _warn_cache_down(self, exc)
            return True


class FailOpenAnonRateThrottle(FailOpenThrottleMixin, AnonRateThrottle):
    pass


class FailOpenUserRateThrottle(FailOpenThrottleMixin, UserRateThrottle):
    pass


class CacheWindowLimit:
    """At most `limit` events per key in a window of `window` seconds that starts at the
    key's first event, counted in the cache (Redis): shared by every process. While the
    cache cannot be reached the limit is not applied (with a warning, as the throttles)."""

    def __init__(self, *, scope: str, limit: int, window: int) -> None:
        self.scope = scope
        self.limit = limit
        self.window = window

    def _key(self, key: str) -> str:
        return f"limit:{self.scope}:{key}"

    def reached(self, key: str) -> bool:
        """Whether `key` used up its events of the current window."""
        try:
            return (cache.get(self._key(key)) or 0) >= self.limit
        except CACHE_DOWN_ERRORS as exc:
            _warn_cache_down(self, exc)
            return False

    def record(self, key: str) -> None:
        """Count one event of `key` (add() starts the window only if no count exists;
        incr() is atomic in Redis)."""
        name = self._key(key)
        try:
            cache.add(name, 0, timeout=self.window)
            try:
                cache.incr(name)
            except ValueError:  # the window ended between add() and incr()
                cache.set(name, 1, timeout=self.window)
        except CACHE_DOWN_ERRORS as exc:
            _warn_cache_down(self, exc)


class AddressWindowLimit:
    """At most `limit` requests per client address (an IPv6 client's /64) in each window
    of `window` seconds that starts at the address's first request, counted in this
    process's memory (thread-safe: Django runs sync views in threads).

    At most `most_addresses` are remembered: past that, the addresses whose window ended
    are forgotten, then (a flood from very many addresses) the oldest windows, whose
    addresses start again from zero: memory stays bounded, and each forgotten address
    can at most double its allowance once."""

    def __init__(self, *, limit: int, window: float, most_addresses: int = 10_000) -> None:
        self.limit = limit
        self.window = window
        self.most_addresses = most_addresses
        # address -> (its window's start, requests in it); in the order windows started.
        self._windows: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def retry_after(self, address: str, *, now: float | None = None) -> float | None:
        """Count a request of `address`: None if it is allowed, else the seconds until
        its window ends."""
        now = time.monotonic() if now is None else now
        key = address_group(address)
        with self._lock:
            started, count = self._windows.get(key, (now, 0))
            if now - started >= self.window:
                started, count = now, 0
            if count >= self.limit:
                return self.window - (now - started)
            if count == 0:
                self._windows.pop(key, None)  # a new window goes to the end of the order
                if len(self._windows) >= self.most_addresses:
                    self._forget(now)
            self._windows[key] = (started, count + 1)
            return None

    def _forget(self, now: float) -> None:
        self._windows = {
            key: (started, count)
            for key, (started, count) in self._windows.items()
            if now - started < self.window
        }
        if len(self._windows) >= self.most_addresses:
            for key in list(self._windows)[: len(self._windows) - self.most_addresses // 2]:
                del self._windows[key]
