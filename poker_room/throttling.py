"""DRF throttles that let requests through while their counters' store (Redis) is down.

Throttle counters live in the Redis cache, and money lives in PostgreSQL: a Redis restart
must not make the cashier or the hand histories answer 500. While the cache cannot be
reached, these throttles allow every request and log a warning (at most once every
`WARN_EVERY` seconds per process, so that an outage does not flood the log). Any other
error still propagates.
"""

import logging
import threading
import time
from typing import TYPE_CHECKING

from redis.exceptions import RedisError
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

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


def _warn_cache_down(throttle: SimpleRateThrottle, exc: BaseException) -> None:
    global _last_warning
    with _warning_lock:
        now = time.monotonic()
        if now - _last_warning < WARN_EVERY:
            return
        _last_warning = now
    logger.warning(
        "throttle %s not applied: its cache is unavailable (%s: %s); letting requests "
        "through until it is back",
        type(throttle).__name__,
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
            _warn_cache_down(self, exc)  # type: ignore[arg-type]
            return True


class FailOpenAnonRateThrottle(FailOpenThrottleMixin, AnonRateThrottle):
    pass


class FailOpenUserRateThrottle(FailOpenThrottleMixin, UserRateThrottle):
    pass
