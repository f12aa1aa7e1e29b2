"""The tables' stream down: the timer loop holds every clock until it is back (issue 46).

Every message of a table reaches its viewers through Redis (tables/events.py publishes,
tables/feed.py delivers). While Redis is away nobody sees anything of any table, yet the
timer loop went on timing out the turns players could not see (and at the second in a
row, sitting them out). So before each pass the loop (tables/timers.py) asks the Redis
the stream goes through (`stream_probe`: a PING on settings.REDIS_URL, given up after
`PROBE_TIMEOUT`), at most every `PROBE_EVERY`, through a `StreamWatch`:

* Down: the outage is recorded (`StreamOutage`, from when the loop last found Redis
  answering, or now) and no pass runs: no turn times out and no hand is dealt (its
  players could not see it). Players' commands go on meanwhile (their web process
  answers them); what is lost is the stream of what they did.
* Back: the time is recorded (`back_at`); every turn that was running is given a fresh
  clock and announced again (`tables.services.turn_resume`, whose docstring gives the
  rule and why), and the outage ends once each has been. The turns of a table whose
  resume has not run yet (busy, failing) are kept out of the passes until it has. The
  viewers: their web process's feed subscribes again and sends each a fresh snapshot
  (`table_resync`), which carries the new deadline; one whose feed was back before the
  resume gets it on the stream, as the resume's `turn` (or `run_twice_ask`) message.
* Nothing is kept only in memory but when Redis last answered: a loop that restarts,
  or a standby that takes over, during the outage finds it in the database (one open at
  most: `stream_outage_one_open`), and runs the resumes again (they are idempotent).

What the loop trusts is its own probe: the Redis it asks is the one every publish goes
to, and a Redis that the web processes cannot reach but the loop can (a network split)
is not seen. A publish that fails is logged by the process that made it, in a few lines
an outage (tables/events.py `PublishFailures`).
"""

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import redis
from django.conf import settings
from django.db.models import DateTimeField, ExpressionWrapper, F, Value

from tables.models import Hand, HandStatus, StreamOutage
from tables.services.turn_resume import RESYNC_ALLOWANCE

logger = logging.getLogger(__name__)

# The probe gives up after this long (seconds): a Redis that does not answer a PING in a
# second cannot carry the stream either.
PROBE_TIMEOUT = 1.0
# The loop asks at most this often; in between it goes by the last answer.
PROBE_EVERY = timedelta(milliseconds=250)

_probes: dict[str, redis.Redis] = {}


def stream_probe() -> str | None:
    """Ask the Redis the tables' stream goes through: None when it answers, else why not."""
    url = settings.REDIS_URL
    client = _probes.get(url)
    if client is None:
        client = _probes[url] = redis.Redis.from_url(
            url, socket_timeout=PROBE_TIMEOUT, socket_connect_timeout=PROBE_TIMEOUT
        )
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        return str(exc) or type(exc).__name__
    return None


@dataclass(frozen=True)
class Stream:
    """What the stream is, for a pass: `down` (run nothing), or up with an `outage`
    still to resume (its turns given their time back first), or up (None: run as usual).
    """

    down: bool
    outage: StreamOutage | None = None


def stream_outage_open() -> StreamOutage | None:
    """The outage not ended yet, if any."""
    return StreamOutage.objects.filter(ended_at__isnull=True).first()


def stream_turns_to_resume(outage: StreamOutage) -> list[tuple[int, int]]:
    """(table id, hand id) of each hand in progress whose turn may be owed its time back:
    its deadline came after the outage began and falls short of a fresh clock from when
    the stream was back (`turn_resume` decides, under the table's lock). The tables
    paused by failures are left to the admin, as the timer loop leaves them."""
    if outage.back_at is None:
        raise ValueError("an outage is resumed once the stream is back")
    longest = (F("table__action_seconds") + F("table__time_bank_seconds")) * Value(
        timedelta(seconds=1)
    )
    fresh = ExpressionWrapper(
        Value(outage.back_at + RESYNC_ALLOWANCE) + longest, output_field=DateTimeField()
    )
    return list(
        Hand.objects.filter(
            status=HandStatus.IN_PROGRESS,
            turn_deadline__gt=outage.started_at,
            turn_deadline__lt=fresh,
            table__paused_reason="",
        )
        .order_by("turn_deadline")
        .values_list("table_id", "id")
    )


def stream_outage_end(outage: StreamOutage, *, now: datetime) -> None:
    """Every turn has its time back: the outage is over."""
    outage.ended_at = now
    outage.save(update_fields=["ended_at"])
    lasted = (now - outage.started_at).total_seconds()
    logger.warning("timers: every turn running has its time back; the outage lasted %.0f s", lasted)


class StreamWatch:
    """The timer loop's view of the tables' stream: it probes Redis, records the outage
    and when the stream is back, and says what a pass may do (see the module's note)."""

    def __init__(self) -> None:
        self._probed_at: float | None = None  # monotonic seconds
        self._error: str | None = None
        # When Redis last answered: where an outage it finds begins.
        self._answered_at: datetime | None = None
        self._told: int | None = None  # the outage this process has logged as down
        self._up = False  # the last check found Redis answering and no outage open

    def check(self, *, now: datetime) -> Stream:
        """Probe Redis (unless it was just now), record what changed, and say what the
        pass may do. Raises a database error as the pass's own queries would."""
        clock = time.monotonic()
        if self._probed_at is not None and clock - self._probed_at < PROBE_EVERY.total_seconds():
            if self._up:
                return Stream(down=False)  # the usual case, between probes: no query
        else:
            self._error = stream_probe()
            self._probed_at = clock
            if self._error is None:
                self._answered_at = now
        self._up = False
        outage = stream_outage_open()
        if self._error is not None:
            return Stream(down=True, outage=self._down(outage, now=now))
        if outage is None:
            self._up = True
            return Stream(down=False)
        if outage.back_at is None:
            outage.back_at = now
            outage.save(update_fields=["back_at"])
            logger.warning(
                "timers: the tables' stream is back after %.0f s; every turn running gets "
                "a fresh clock",
                (now - outage.started_at).total_seconds(),
            )
        return Stream(down=False, outage=outage)

    def _down(self, outage: StreamOutage | None, *, now: datetime) -> StreamOutage:
        if outage is None:
            # It went between the last answer and now: from the last answer, unless that
            # is long past (the loop was standing by, or its database away), when it
            # cannot tell.
            since = now - PROBE_EVERY - timedelta(seconds=PROBE_TIMEOUT)
            started = max(self._answered_at, since) if self._answered_at else now
            outage = StreamOutage.objects.create(started_at=started)
        elif outage.back_at is not None:
            # Gone again before every turn was resumed: one outage, back when it is back.
            outage.back_at = None
            outage.save(update_fields=["back_at"])
        if self._told != outage.pk:
            self._told = outage.pk
            logger.warning(
                "timers: the tables' stream is down since %s (Redis: %s): no turn times out "
                "and no hand is dealt until it is back",
                outage.started_at.isoformat(timespec="seconds"),
                self._error,
            )
        return outage
