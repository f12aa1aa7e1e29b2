"""Throttles of the hand-history API: per-user scopes with their own rates.

The rates are `REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["hand_history"]` and
``["hand_export"]``; a settings module that does not name them (the test settings) gets
the plain ``"user"`` rate. Like the default throttles they let requests through while
Redis (their counters' store) is down (poker_room.throttling).
"""

from poker_room.throttling import FailOpenUserRateThrottle


class ScopedUserThrottle(FailOpenUserRateThrottle):
    def get_rate(self) -> str | None:
        return self.THROTTLE_RATES.get(self.scope) or self.THROTTLE_RATES.get("user")


class HandHistoryThrottle(ScopedUserThrottle):
    scope = "hand_history"


class HandExportThrottle(ScopedUserThrottle):
    scope = "hand_export"
