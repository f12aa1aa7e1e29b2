"""What /healthz checks: whether THIS process can serve (liveness and readiness).

A load balancer asks every web process, every few seconds, whether to send it players.
The answer is about the process alone: its database and its Redis are reachable from it
(200), or not (503, naming which). What is wrong with the room as a whole (a paused
table, an overdue turn, the worker, beat, the timer loop) is not: a load balancer that
took every process out for one paused table would take the cashier out with it. Those
alarms are the room status's, for staff and auditors (poker_room/room_status.py,
`/api/status/`).

Answering within a second, whatever the services do
    The old checks borrowed a connection from the process's pool: with PostgreSQL down
    each waited DB_POOL_TIMEOUT (10 s) in turn, and /healthz answered after ~41 s. Now
    each dependency has a probe that runs its check in a thread of its own, off the
    request, on a connection of its own that cannot queue behind the pool: a new
    PostgreSQL connection (connect_timeout 2 s, libpq's least; statement_timeout 1 s)
    and a new Redis connection (0.5 s timeouts). A request waits at most `ANSWER_WITHIN`
    (0.5 s) for the probes; one that has not answered by then is reported as failing
    ("no answer within 0.5 s") unless the probe's last answer is under `RECENT_ENOUGH`
    (5 s) old, which then stands in (a loaded machine that takes more than half a second
    to open a session must not make a load balancer flap); the run keeps going for the
    next request to read. A hung server (accepting connections and saying nothing) costs
    a request half a second, never the driver's timeout, and is reported within seconds.
    A fresh connection rather than a kept one: it proves what the pool needs to replace
    a connection, and it cannot be left half-dead. (A server that stops answering
    mid-query leaves its probe waiting until the connection dies; meanwhile every
    request reports it, as it should.)

    A PostgreSQL that refuses new sessions (max_connections reached) makes it 503 too:
    the process could not replace a pooled connection that dies.

Cheap under a flood
    A probe's answer is kept for HEALTH_REPORT_MAX_AGE_SECONDS (1 s), and at most one
    check of each dependency runs at a time: a flood costs the database one session a
    second per process. Requests are counted per client address in memory first
    (`healthz_refusal`) and answered 429 past HEALTHZ_PER_MINUTE (60), and under daphne
    all of it happens on the event loop, before the queue of requests for Django
    (poker_room/healthz_front.py): a flood from one address costs a dictionary look-up
    per request, less than any other URL of the site. No Celery broadcast: 40 looping
    clients of the old /healthz, each running a 1 s ping, slowed a player's wallet read
    tenfold. The limit is each web process's own: it bounds what /healthz makes the
    process do (its probes, its logs); stopping a flood of connections is the proxy's job.

Logging an outage once
    `OutageLog` logs a failing check once when it starts failing (with the traceback of
    its error), then one line at most every `REMIND_EVERY` seconds while it fails, and
    once when it passes again: not a traceback chain per request. The room status logs
    its checks the same way.

The details name an error's type only: its message can hold a server's address or a
path, and /healthz is public; the server log has the whole error.
"""

import asyncio
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

import redis
from django.conf import settings

from poker_room.postgres.sessions import session_of_its_own
from poker_room.throttling import AddressWindowLimit

logger = logging.getLogger(__name__)

ANSWER_WITHIN = 0.5  # seconds a request waits for the probes
DATABASE_CONNECT_TIMEOUT = 2  # seconds; libpq (and psycopg) take 2 for anything less
DATABASE_STATEMENT_TIMEOUT_MS = 1000
HEALTHZ_SESSION = "poker_room healthz"  # its application_name in pg_stat_activity
REDIS_TIMEOUT = 0.5  # seconds, to connect and for the answer
REMIND_EVERY = 60.0  # seconds between the one-line reminders of a check still failing
POLL_EVERY = 0.01  # seconds between looks at a probe under way, on the event loop
RECENT_ENOUGH = 5.0  # seconds a probe's last answer stands in for a late one
THROTTLED = {
    "detail": "Too many health checks from your address; try again in a minute.",
    "code": "throttled",
}


class Check(TypedDict):
    ok: bool
    detail: str


class Unhealthy(Exception):
    """A check that ran and found something wrong (its message is the detail)."""


class OutageLog:
    """Log each check's outage once with the traceback of its error (the first error
    that has one), remind of it in one line at most every `remind_every` seconds, and
    log its end. Thread-safe; one per process."""

    def __init__(self, *, remind_every: float = REMIND_EVERY) -> None:
        self.remind_every = remind_every
        # check -> (when it started failing, when it was last logged, whether a
        # traceback was), monotonic seconds
        self._failing: dict[str, tuple[float, float, bool]] = {}
        self._lock = threading.Lock()

    def failed(self, check: str, detail: str, exc: BaseException | None = None) -> None:
        now = time.monotonic()
        traceback = exc is not None and not isinstance(exc, Unhealthy)
        with self._lock:
            known = self._failing.get(check)
            since, traced = (now, False) if known is None else (known[0], known[2])
            new_traceback = traceback and not traced
            if known is not None and not new_traceback and now - known[1] < self.remind_every:
                return
            self._failing[check] = (since, now, traced or traceback)
        if new_traceback:
            logger.error("health check %s failing: %s", check, detail, exc_info=exc)
        elif known is None:
            logger.warning("health check %s failing: %s", check, detail)
        else:
            logger.warning(
                "health check %s still failing after %.0f s: %s", check, now - since, detail
            )

    def passed(self, check: str) -> None:
        with self._lock:
            failing = self._failing.pop(check, None)
        if failing is not None:
            logger.info(
                "health check %s passes again after %.0f s", check, time.monotonic() - failing[0]
            )


outages = OutageLog()


def check_run(name: str, check: Callable[[], str]) -> Check:
    """Run one check: its detail, or its failure's (an unexpected error by its type only),
    logged as an outage under `name` (the log's, e.g. "healthz database")."""
    try:
        detail = check()
    except Unhealthy as exc:
        outages.failed(name, str(exc), exc)
        return {"ok": False, "detail": str(exc)}
    except Exception as exc:
        outages.failed(name, f"{type(exc).__name__}: {exc}", exc)
        return {"ok": False, "detail": f"{type(exc).__name__} (see the server log)"}
    outages.passed(name)
    return {"ok": True, "detail": detail}


def database_reachable() -> str:
    """A new session of the room's database answers a query, within the timeouts.

    Made as the pool's connections are (the settings' database), but never taken from
    the pool: it neither waits for a free connection nor takes one from a request."""
    with session_of_its_own(HEALTHZ_SESSION, connect_timeout=DATABASE_CONNECT_TIMEOUT) as own:
        own.execute(f"SET statement_timeout = {DATABASE_STATEMENT_TIMEOUT_MS}")
        own.execute("SELECT 1")
    return "reachable"


def redis_reachable() -> str:
    """Redis (the cache, the channel layer, the tables' feeds, the broker) answers a ping."""
    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
    )
    try:
        client.ping()
    finally:
        client.close()
    return "reachable"


class _Run:
    """One run of a probe's check: set `done` once `answer` is in."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: Check = {"ok": False, "detail": "not run yet"}


class Probe:
    """One dependency's check, run in a thread of its own; its answer is kept for a while.

    At most one run at a time: a request that finds the last answer too old starts one
    (or joins the one under way) and waits for it until its deadline."""

    def __init__(self, name: str, check: Callable[[], str]) -> None:
        self.name = name
        self.check = check
        self._lock = threading.Lock()
        self._last: _Run | None = None
        self._answered_at = 0.0
        self._running: _Run | None = None

    def start(self, *, max_age: float) -> _Run:
        """The last run if it answered less than `max_age` seconds ago, else the run
        under way (started now if none is)."""
        with self._lock:
            if self._last is not None and time.monotonic() - self._answered_at < max_age:
                return self._last
            if self._running is None:
                self._running = _Run()
                threading.Thread(
                    target=self._run, args=(self._running,), name=f"probe-{self.name}", daemon=True
                ).start()
            return self._running

    def answer(self, run: _Run, *, deadline: float) -> Check:
        """`run`'s answer, if it comes before `deadline` (monotonic seconds)."""
        if run.done.wait(max(0.0, deadline - time.monotonic())):
            return run.answer
        return self._late()

    async def answer_async(self, run: _Run, *, deadline: float) -> Check:
        """The same, waited for on the event loop: polled, so that no thread waits."""
        while not run.done.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return self._late()
            await asyncio.sleep(min(POLL_EVERY, left))
        return run.answer

    def _late(self) -> Check:
        """The answer when the run under way is late: the last one while it is recent
        (a slow machine is not a down service), else a failure."""
        with self._lock:
            last, age = self._last, time.monotonic() - self._answered_at
        if last is not None and age < RECENT_ENOUGH:
            detail = f"{last.answer['detail']} ({age:.0f} s ago; a new check is under way)"
            return {"ok": last.answer["ok"], "detail": detail}
        detail = f"no answer within {ANSWER_WITHIN} s"
        outages.failed(f"healthz {self.name}", detail)
        return {"ok": False, "detail": detail}

    def _run(self, run: _Run) -> None:
        run.answer = check_run(f"healthz {self.name}", self.check)
        with self._lock:
            self._last = run
            self._answered_at = time.monotonic()
            self._running = None
        run.done.set()


PROBES = [Probe("database", database_reachable), Probe("redis", redis_reachable)]


def _probes_started() -> tuple[float, list[tuple[Probe, _Run]]]:
    deadline = time.monotonic() + ANSWER_WITHIN
    max_age = settings.HEALTH_REPORT_MAX_AGE_SECONDS
    return deadline, [(probe, probe.start(max_age=max_age)) for probe in PROBES]


def process_readiness() -> dict[str, Check]:
    """Whether this process can serve: each dependency's check, within `ANSWER_WITHIN`."""
    deadline, runs = _probes_started()
    return {probe.name: probe.answer(run, deadline=deadline) for probe, run in runs}


async def process_readiness_async() -> dict[str, Check]:
    """The same, on the event loop (poker_room/healthz_front.py)."""
    deadline, runs = _probes_started()
    return {probe.name: await probe.answer_async(run, deadline=deadline) for probe, run in runs}


@dataclass(frozen=True)
class HealthzAnswer:
    status: int
    body: dict[str, object]
    headers: dict[str, str] = field(default_factory=dict)


_limit: AddressWindowLimit | None = None
_limit_lock = threading.Lock()


def healthz_refusal(address: str) -> HealthzAnswer | None:
    """Count a request of `address` (REMOTE_ADDR: daphne's peer, or the client's from
    X-Forwarded-For with --proxy-headers): None if it is allowed, else its 429."""
    global _limit
    per_minute = settings.HEALTHZ_PER_MINUTE
    with _limit_lock:
        if _limit is None or _limit.limit != per_minute:  # new, or a test changed the setting
            _limit = AddressWindowLimit(limit=per_minute, window=60.0)
        limit = _limit
    retry_after = limit.retry_after(address)
    if retry_after is None:
        return None
    return HealthzAnswer(429, THROTTLED, {"Retry-After": str(math.ceil(retry_after))})


def healthz_verdict(checks: dict[str, Check]) -> HealthzAnswer:
    """200 if every check passed, else 503 naming the failing ones."""
    failing = [name for name, check in checks.items() if not check["ok"]]
    status = "unavailable" if failing else "ok"
    return HealthzAnswer(
        503 if failing else 200, {"status": status, "failing": failing, "checks": checks}
    )
