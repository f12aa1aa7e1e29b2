"""The room's status: what staff and auditors watch, at `/api/status/` (and in the admin).

Unlike /healthz (poker_room/health.py: can THIS process serve?), these checks are about
the room as a whole, and a failing one is an alert for people, not a reason to take a
web process out of service: one paused table must not take the cashier out with it.

* `database`: reachable through the pool (and the detail warns when PostgreSQL runs with
  autovacuum or track_counts off).
* `redis`: reachable from this process.
* `celery`: a worker runs tasks: it ran the heartbeat task lately (below), or failing
  that, answers a ping within `CELERY_PING_TIMEOUT` (5 s: the old 1 s ping was missed on
  a loaded machine). Without Redis, the broker, no ping is tried.
* `beat`: Celery beat sends `poker_room.tasks.room_heartbeat_task` every
  ROOM_HEARTBEAT_SECONDS (10 s), and the worker that runs it records the time (`Heartbeat`
  "celery"). Nothing heard for `BEAT_MAX_AGE` (2 min, room for a busy worker) means beat
  stopped, or the worker cannot run tasks (the `celery` check says which).
* `timers`: the timer loop (`manage.py run_timers`, tables/timers.py) ran lately: its
  leader records a heartbeat every 2 s; without one no turn times out and no hand is
  dealt.
* `tables`: no table is paused because its commands kept failing (the admin says why).
* `turns`: no hand's turn deadline passed more than `OVERDUE_TURN` ago (a frozen hand,
  or a timer loop that runs but cannot keep up).

The table checks name the tables (id and name) but never a failure's message, which only
the admin shows; an unexpected error reports its type only (the server log has it all,
logged once per outage: poker_room.health.OutageLog). A process reuses its last report for
ROOM_STATUS_MAX_AGE_SECONDS (5 s), and one thread runs the checks while the others wait
for its report: a flood of requests costs one round of checks per interval.
"""

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import cached_property
from typing import TypedDict

from django.conf import settings
from django.db import connection
from django.utils import timezone

from poker_room.celery import app as celery_app
from poker_room.health import Check, Unhealthy, check_run, redis_reachable

# The timer loop beats every 2 s (tables.timers.HEARTBEAT_EVERY); room for a busy machine
# and for a standby loop to take over from a dead leader.
TIMERS_MAX_AGE_SECONDS = 15
OVERDUE_TURN = timedelta(seconds=60)
# Celery beat's heartbeat task (poker_room.tasks.room_heartbeat_task), as the worker that
# ran it recorded it.
CELERY_HEARTBEAT = "celery"
BEAT_MAX_AGE = timedelta(minutes=2)
CELERY_PING_TIMEOUT = 5.0
NAMED_AT_MOST = 10
AUTOVACUUM_OFF = (
    "autovacuum is off: turn it on in postgresql.conf (the room's upkeep task stands in)"
)


class RoomStatus(TypedDict):
    status: str  # "ok", or "alert" when a check fails
    failing: list[str]
    checks: dict[str, Check]
    checked_at: datetime


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


def _heartbeat_age(name: str) -> float | None:
    """Seconds since the heartbeat `name` was recorded; None if it never was."""
    from tables.models import Heartbeat

    beat = Heartbeat.objects.filter(name=name).first()
    return None if beat is None else (timezone.now() - beat.at).total_seconds()


def _heard(age: float | None) -> str:
    return "never" if age is None else f"{age:.0f} s ago"


class _Celery:
    """The `celery` and `beat` checks, which read one heartbeat and share a ping."""

    def __init__(self, *, broker_up: bool) -> None:
        self.broker_up = broker_up
        self._pinged: int | None = None

    @cached_property
    def age(self) -> float | None:
        """Seconds since a worker ran beat's heartbeat task (read once, in a check: the
        database may be down)."""
        return _heartbeat_age(CELERY_HEARTBEAT)

    @property
    def fresh(self) -> bool:
        return self.age is not None and self.age <= BEAT_MAX_AGE.total_seconds()

    def workers_answering(self) -> int:
        """Workers that answered a ping (waiting for the first only), asked once."""
        if self._pinged is None:
            replies = celery_app.control.ping(timeout=CELERY_PING_TIMEOUT, limit=1)
            self._pinged = len(replies or [])
        return self._pinged

    def worker(self) -> str:
        if self.fresh:
            return f"a worker ran beat's heartbeat task {_heard(self.age)}"
        if not self.broker_up:
            raise Unhealthy(
                f"no worker ran beat's heartbeat task lately (last: {_heard(self.age)}), "
                "and Redis, the broker, is unreachable"
            )
        if not self.workers_answering():
            raise Unhealthy(
                f"no worker answered a ping within {CELERY_PING_TIMEOUT:.0f} s: "
                "is the Celery worker running?"
            )
        return (
            f"a worker answers pings; beat's heartbeat task last ran {_heard(self.age)} (see beat)"
        )

    def beat(self) -> str:
        if self.fresh:
            return f"beat's heartbeat task ran {_heard(self.age)}"
        limit = BEAT_MAX_AGE.total_seconds()
        raise Unhealthy(
            f"beat's heartbeat task last ran {_heard(self.age)} (it runs every "
            f"{settings.ROOM_HEARTBEAT_SECONDS:.0f} s; alarm after {limit:.0f} s): is "
            "`celery beat` running, and is a worker free to run its tasks?"
        )


def _timers() -> str:
    from tables.timers import HEARTBEAT

    max_age = getattr(settings, "HEALTH_TIMERS_MAX_AGE_SECONDS", TIMERS_MAX_AGE_SECONDS)
    age = _heartbeat_age(HEARTBEAT)
    if age is None:
        raise Unhealthy("the timer loop has never run: is `manage.py run_timers` running?")
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


def room_status() -> RoomStatus:
    """Run every check; a failing one reports its error instead of raising."""
    checks: dict[str, Check] = {}

    def run(name: str, check: Callable[[], str]) -> None:
        checks[name] = check_run(f"status {name}", check)

    run("database", _database)
    run("redis", redis_reachable)
    celery = _Celery(broker_up=checks["redis"]["ok"])
    run("celery", celery.worker)
    run("beat", celery.beat)
    run("timers", _timers)
    run("tables", _tables)
    run("turns", _turns)
    failing = [name for name, check in checks.items() if not check["ok"]]
    return {
        "status": "alert" if failing else "ok",
        "failing": failing,
        "checks": checks,
        "checked_at": timezone.now(),
    }


_recent: tuple[float, RoomStatus] | None = None
_recent_lock = threading.Lock()


def room_status_recent() -> RoomStatus:
    """The last status of this process if it is younger than ROOM_STATUS_MAX_AGE_SECONDS,
    else a new one (one thread runs the checks; the others wait for its report)."""
    global _recent
    max_age = settings.ROOM_STATUS_MAX_AGE_SECONDS
    with _recent_lock:
        if _recent is None or time.monotonic() - _recent[0] >= max_age:
            _recent = (time.monotonic(), room_status())
        return _recent[1]
