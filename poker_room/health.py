"""What /healthz checks: the services the room depends on, and whether its tables play.

* `database`, `redis`: reachable (and the database's detail warns when PostgreSQL runs
  with autovacuum off).
* `celery`: a worker answers a ping.
* `timers`: the timer loop (`manage.py run_timers`, tables/timers.py) ran lately: its
  leader records a heartbeat every 2 s; without one no turn times out and no hand is
  dealt.
* `tables`: no table is paused because its commands kept failing (the admin says why).
* `turns`: no hand's turn deadline passed more than `OVERDUE_TURN` ago (a frozen hand,
  or a timer loop that runs but cannot keep up).

The table checks name the tables (id and name) but never a failure's message, which
only the admin shows. An unexpected error reports its type only: its message can hold a
server's address or a path, and /healthz is public; the server log has the whole error.
A process reuses its last report for `HEALTH_REPORT_MAX_AGE_SECONDS`, so a flood of
requests costs the database and the workers one round of checks per interval.
"""

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TypedDict

import redis
from django.conf import settings
from django.db import connection
from django.utils import timezone

from poker_room.celery import app as celery_app

logger = logging.getLogger(__name__)

# The timer loop beats every 2 s (tables.timers.HEARTBEAT_EVERY); room for a busy machine
# and for a standby loop to take over from a dead leader.
TIMERS_MAX_AGE_SECONDS = 15
OVERDUE_TURN = timedelta(seconds=60)
NAMED_AT_MOST = 10
AUTOVACUUM_OFF = (
    "autovacuum is off: turn it on in postgresql.conf (the room's upkeep task stands in)"
)


class Check(TypedDict):
    ok: bool
    detail: str


class Unhealthy(Exception):
    """A check that ran and found something wrong (its message is the detail)."""


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('autovacuum'), current_setting('track_counts')")
        autovacuum, track_counts = cursor.fetchone()
    warning = vacuum_warning(autovacuum=autovacuum, track_counts=track_counts)
    return "reachable" if warning is None else f"reachable; {warning}"


def vacuum_warning(*, autovacuum: str, track_counts: str) -> str | None:
    """What to tell an operator whose PostgreSQL will not vacuum and analyze by itself.

    Not a failure: the room plays. But with either setting off the planner has no
    statistics and dead rows pile up in the tables every command updates: queries slow
    down and can pick plans that cost the room many times more (README, "Speed"). With
    autovacuum off the room's own upkeep (poker_room/postgres/upkeep.py) stands in, once a
    minute from Celery beat; with track_counts off it cannot tell what is due either."""
    if track_counts != "on":
        return (
            "track_counts is off, and neither autovacuum nor the room's upkeep task can "
            "tell what is due without it: turn it on"
        )
    if autovacuum != "on":
        return AUTOVACUUM_OFF
    return None


def _redis() -> str:
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    try:
        client.ping()
    finally:
        client.close()
    return "reachable"


def _celery() -> str:
    replies = celery_app.control.ping(timeout=1.0)
    if not replies:
        raise RuntimeError("no Celery worker answered a ping within 1 s")
    return f"{len(replies)} worker(s) answered"


def _timers() -> str:
    from tables.models import Heartbeat
    from tables.timers import HEARTBEAT

    max_age = getattr(settings, "HEALTH_TIMERS_MAX_AGE_SECONDS", TIMERS_MAX_AGE_SECONDS)
    beat = Heartbeat.objects.filter(name=HEARTBEAT).first()
    if beat is None:
        raise Unhealthy("the timer loop has never run: is `manage.py run_timers` running?")
    age = (timezone.now() - beat.at).total_seconds()
    if age > max_age:
        raise Unhealthy(
            f"the timer loop last ran {age:.0f} s ago (more than {max_age} s): "
            "is `manage.py run_timers` running?"
        )
    return f"the timer loop ran {age:.0f} s ago"


def _named(items: list[str]) -> str:
    more = len(items) - NAMED_AT_MOST
    return ", ".join(items[:NAMED_AT_MOST]) + (f" and {more} more" if more > 0 else "")


def _tables() -> str:
    from tables.models import Table

    paused = list(Table.objects.exclude(paused_reason="").order_by("id").values_list("id", "name"))
    if paused:
        names = [f"{name} (id {pk})" for pk, name in paused]
        raise Unhealthy(f"paused after failing commands (see the admin): {_named(names)}")
    return "no table is paused by failures"


def _turns() -> str:
    from tables.models import Hand, HandStatus

    now = timezone.now()
    overdue = list(
        Hand.objects.filter(status=HandStatus.IN_PROGRESS, turn_deadline__lt=now - OVERDUE_TURN)
        .order_by("turn_deadline")
        .values_list("id", "table_id", "table__name", "turn_deadline")
    )
    if overdue:
        names = [
            f"{table} (id {table_id}) hand {hand_id}, {(now - deadline).total_seconds():.0f} s"
            for hand_id, table_id, table, deadline in overdue
        ]
        raise Unhealthy(f"turns overdue by more than {OVERDUE_TURN.seconds} s: {_named(names)}")
    return f"no turn is overdue by more than {OVERDUE_TURN.seconds} s"


CHECKS: dict[str, Callable[[], str]] = {
    "database": _database,
    "redis": _redis,
    "celery": _celery,
    "timers": _timers,
    "tables": _tables,
    "turns": _turns,
}


def health_report() -> dict[str, Check]:
    """Run every check; a failing one reports its error instead of raising."""
    report: dict[str, Check] = {}
    for name, check in CHECKS.items():
        try:
            report[name] = {"ok": True, "detail": check()}
        except Unhealthy as exc:
            report[name] = {"ok": False, "detail": str(exc)}
        except Exception as exc:
            logger.warning("health check %s failed", name, exc_info=True)
            report[name] = {"ok": False, "detail": f"{type(exc).__name__} (see the server log)"}
    return report


_recent: tuple[float, dict[str, Check]] | None = None
_recent_lock = threading.Lock()


def health_report_recent() -> dict[str, Check]:
    """The last report of this process if it is younger than the setting, else a new one
    (one thread runs the checks; the others wait for its report)."""
    global _recent
    max_age = settings.HEALTH_REPORT_MAX_AGE_SECONDS
    with _recent_lock:
        if _recent is None or time.monotonic() - _recent[0] >= max_age:
            _recent = (time.monotonic(), health_report())
        return _recent[1]
