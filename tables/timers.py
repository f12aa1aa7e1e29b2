"""The timer loop: turn timeouts and hand starts run from deadlines kept in the database.

Every deadline of a table already lives in its rows: a hand in progress has its turn's
`turn_deadline`, and a table due a deal has `next_hand_at` (set when a hand ends, to the
end of the pause, or to "now" by a command that may make a deal possible: a player sits
down, comes back, tops up; an admin opens the table). One loop (`timers_loop`, run by
`manage.py run_timers`) selects what is due through two partial indexes (the hands in
progress, the tables due a deal), runs each item through the same idempotent table
command a player's request would race with (`turn_timeout`, `hand_start_due`), then
sleeps until the earliest deadline it saw, at most `WAKE_AT_LEAST_EVERY`, so that a
deadline another process sets is seen soon.
Nothing is held in a process's memory: a killed loop loses nothing, and the next one
(or the restarted one) finds every deadline where it was.

Each table is isolated (`isolated`): a table whose command fails is logged and the pass
goes on with the next one; `table_command` counts the failure, pauses the table at the
second in a row, and paused tables are left out of the selection. A table whose lock a
stuck transaction holds is refused `table_busy` after the lock timeout; the loop then
leaves it out of its passes for `BUSY_REST`, or every pass, which waits for all of its
tables, would take that long and every table's timeouts with it. A pass serves
`TABLES_AT_ONCE` tables side by side, on threads: each command locks only its own table,
and most of its time is spent waiting on PostgreSQL, which the threads overlap (only
the Python part is serialised by the GIL). One at a time, a pass fell behind from about
fifty tables timing out every second on the loaded two-core machine (bench/timers.py).

Several loops at once are correct without any coordination: two passes may pick the
same turn, and the table's row lock and its `turn_version` make the second a no-op
(`turn_timeout` re-checks both under the lock). They would only be wasteful, each item
costing every loop a locked command, so the loops elect a leader (`Leadership`): a loop
takes a session-level PostgreSQL advisory lock (`pg_try_advisory_lock`, re-entrant,
held until the session ends, confirmed with each heartbeat) on a connection of its own,
outside Django's pool (a pooled session would outlive a `close()` and keep the lock from
every loop). Only its holder runs passes; the others stand by and try again every
`STANDBY_RETRY`. A leader that dies (or loses that connection) releases the lock with
its session, and a standby takes over. A leader lock rather than `FOR UPDATE SKIP
LOCKED` because a command's transaction is durable: the row lock cannot be held from the
selection into the command, so skipping locked rows would not keep two loops off the
same item.

No LISTEN/NOTIFY wake-up: every turn's deadline is at least `action_seconds` (usually
many) ahead when it is set, so a loop that looks every `WAKE_AT_LEAST_EVERY` has seen it
long before it is due; only a deal made possible by a command (someone sits down) can
wait up to that long, which nobody notices between hands.

The leader records a heartbeat (`Heartbeat` "timers") every `HEARTBEAT_EVERY`; the room
status (/api/status/) reports a loop that stopped.

While the tables' stream is down (Redis unreachable: no viewer sees anything), the leader
runs no pass: no turn times out, no hand is dealt. When it is back, every turn that was
running gets a fresh clock first (`timers_resume`), the turns of a table not resumed yet
kept out of the pass. The outage is kept in the database, not in the loop: see
tables/stream_outage.py (`StreamWatch`).
"""

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

import psycopg
from django.db import DatabaseError, connection
from django.utils import timezone

from poker_room.postgres.sessions import session_of_its_own
from tables import rows
from tables.exceptions import TableBusy
from tables.models import Heartbeat, StreamOutage
from tables.services.command import OUTAGES, REFUSALS
from tables.services.hands import hand_start_due
from tables.services.play import turn_timeout
from tables.services.turn_resume import turn_resume
from tables.stream_outage import StreamWatch, stream_outage_end, stream_turns_to_resume

logger = logging.getLogger(__name__)

HEARTBEAT = "timers"
HEARTBEAT_EVERY = timedelta(seconds=2)
WAKE_AT_LEAST_EVERY = timedelta(milliseconds=250)
STANDBY_RETRY = timedelta(seconds=1)
# Tables served side by side in a pass, by default (threads, each with its database
# connection; `run_timers --tables-at-once`).
TABLES_AT_ONCE = 4
# After an error of the loop's own queries (the database restarting, say).
ERROR_RETRY = timedelta(seconds=1)
# How long a table refused `table_busy` is left out of the passes before it is tried again.
BUSY_REST = timedelta(seconds=10)
# The advisory lock of the leader: any fixed 64-bit number no other part of the room uses.
LEADER_LOCK = 0x7461626C_74696D72  # "tabltimr"
LEADER_SESSION = "poker_room timers leader"

R = TypeVar("R")


def isolated(what: str, table_id: int, run: Callable[[], R]) -> tuple[bool, R | None]:
    """Run one table's command: (True, its result), or (False, None) when it raised,
    logged with the table id, so that the caller carries on with the next table. A
    `TableBusy` is raised on, for the pass to note the table."""
    try:
        return True, run()
    except TableBusy:
        logger.warning("table %s: %s not run: the table is busy", table_id, what)
        raise
    except REFUSALS as exc:
        logger.info("table %s: %s refused: %s", table_id, what, exc)
    except OUTAGES as exc:
        logger.warning("table %s: %s not run: %s: %s", table_id, what, type(exc).__name__, exc)
    except Exception:
        # table_command has logged it with its traceback and counted it on the table.
        logger.warning("table %s: %s failed; going on with the other tables", table_id, what)
    return False, None


@dataclass(frozen=True)
class Pass:
    """What one pass did, and when the next item it saw falls due (None: none seen)."""

    timeouts: int
    deals: int
    failed: int
    next_due: datetime | None
    # Tables refused `table_busy` (their lock held past the lock timeout).
    busy: frozenset[int] = frozenset()

    @property
    def moved(self) -> bool:
        """Whether a table moved on (which may have made more due at once)."""
        return bool(self.timeouts or self.deals)


def _timeout(table_id: int, hand_id: int, turn: int) -> tuple[bool, bool]:
    def run() -> bool:
        return turn_timeout(table_id=table_id, hand_id=hand_id, turn=turn)

    ok, acted = isolated("turn timeout", table_id, run)
    return ok, acted is True


def _deal(table_id: int) -> tuple[bool, bool]:
    ok, hand = isolated("hand start", table_id, lambda: hand_start_due(table_id=table_id))
    return ok, hand is not None


def _resume(table_id: int, hand_id: int, since: datetime, back_at: datetime) -> tuple[bool, bool]:
    def run() -> bool:
        return turn_resume(table_id=table_id, hand_id=hand_id, since=since, back_at=back_at)

    ok, resumed = isolated("turn resume", table_id, run)
    return ok, resumed is True


Job = tuple[int, Callable[[], tuple[bool, bool]]]


def _jobs_run(jobs: list[Job], workers: Executor | None) -> list[tuple[bool, bool] | None]:
    return list(workers.map(_job_run, jobs) if workers else map(_job_run, jobs))


def _job_run(job: Job) -> tuple[bool, bool] | None:
    """Run one job (its table, its call): (ran, moved), or None when its table was busy.
    A connection that met a database error is not trusted with the next."""
    try:
        return job[1]()
    except TableBusy:
        return None
    finally:
        if connection.errors_occurred:
            connection.close()


def timers_run_due(
    *,
    now: datetime,
    horizon: timedelta = WAKE_AT_LEAST_EVERY,
    workers: Executor | None = None,
    resting: Collection[int] = (),
) -> Pass:
    """Run every turn timeout and hand start due at `now`, each table isolated (on the
    `workers` threads side by side when given), except at the `resting` tables (refused
    busy lately); note the earliest deadline falling within `horizon` after `now`.

    Paused tables are left alone: a table paused by failures is the admin's; a paused
    table (status) still plays out its hand but deals no more.
    """
    until = now + horizon
    # The hands in progress alone, one a table, through `hand_one_in_progress_per_table`
    # (the deadline is not indexed, so that an action's update of its hand is made in
    # place). Not joined to the tables for the paused ones: the planner could then lead
    # with the tables and scan the hands once per table (98 ms a pass at 200 tables, when
    # the deadlines had an index). The few tables paused by failures are left out after.
    turns, deals = rows.timers_due(until)
    if turns:
        broken = rows.tables_failing({turn.table_id for turn in turns})
        turns = [turn for turn in turns if turn.table_id not in broken]
    later: list[datetime] = []
    timeout_jobs: list[Job] = []
    deal_jobs: list[Job] = []
    for table_id, hand_id, turn, deadline in turns:
        if table_id in resting:
            continue
        if deadline > now:
            later.append(deadline)
        else:
            timeout_jobs.append((table_id, functools.partial(_timeout, table_id, hand_id, turn)))
    for table_id, due in deals:
        if table_id in resting:
            continue
        if due > now:
            later.append(due)
        else:
            deal_jobs.append((table_id, functools.partial(_deal, table_id)))
    jobs = timeout_jobs + deal_jobs
    results = _jobs_run(jobs, workers)
    busy = frozenset(job[0] for job, result in zip(jobs, results, strict=True) if result is None)
    outcomes = [result or (False, False) for result in results]
    moved = [moved for _ok, moved in outcomes]
    return Pass(
        timeouts=sum(moved[: len(timeout_jobs)]),
        deals=sum(moved[len(timeout_jobs) :]),
        failed=sum(not ok for ok, _moved in outcomes),
        next_due=min(later, default=None),
        busy=busy,
    )


@dataclass(frozen=True)
class Resumed:
    """What a round of resumes did: the turns given their time back, the tables whose
    resume did not run (`pending`: their turns are kept out of the pass), and of those
    the ones to rest (`resting`: refused busy, or failed)."""

    resumed: int
    pending: frozenset[int]
    resting: frozenset[int]


def timers_resume(
    *, outage: StreamOutage, workers: Executor | None = None, resting: Collection[int] = ()
) -> Resumed:
    """Give every turn that was running during `outage`, the stream back now, a fresh
    clock (`turn_resume`), each table isolated (on the `workers` threads side by side
    when given), except at the `resting` tables; end the outage once none is left.
    Run again until it ends: a turn already given its time back is left alone."""
    turns = stream_turns_to_resume(outage)
    since, back_at = outage.started_at, outage.back_at
    jobs: list[Job] = [
        (table_id, functools.partial(_resume, table_id, hand_id, since, back_at))
        for table_id, hand_id in turns
        if table_id not in resting
    ]
    results = _jobs_run(jobs, workers)
    stopped = frozenset(
        job[0] for job, result in zip(jobs, results, strict=True) if result is None or not result[0]
    )
    pending = stopped | {table_id for table_id, _hand in turns if table_id in resting}
    if not pending:
        stream_outage_end(outage, now=timezone.now())
    return Resumed(
        resumed=sum(bool(result and result[1]) for result in results),
        pending=frozenset(pending),
        resting=stopped,
    )


class Leadership:
    """The leader lock of one loop, on a database session of its own (see above)."""

    def __init__(self) -> None:
        self._session: psycopg.Connection | None = None

    def holds(self) -> bool:
        """Whether this loop holds (or has just taken) the lock. Raises an outage of the
        database; the next call opens a new session."""
        if self._session is None or self._session.closed:
            self._session = session_of_its_own(LEADER_SESSION)
        try:
            row = self._session.execute("SELECT pg_try_advisory_lock(%s)", [LEADER_LOCK]).fetchone()
        except psycopg.Error:
            self.release()
            raise
        return bool(row and row[0])

    def release(self) -> None:
        """End the session, and with it the lock (if it held it)."""
        if self._session is not None:
            self._session.close()
            self._session = None


def timers_heartbeat(*, now: datetime) -> None:
    """Record that the loop ran at `now` (one UPDATE; the row is created the first time)."""
    if not Heartbeat.objects.filter(name=HEARTBEAT).update(at=now):
        Heartbeat.objects.update_or_create(name=HEARTBEAT, defaults={"at": now})


def timers_loop(
    *, stop: Callable[[], bool] = lambda: False, tables_at_once: int = TABLES_AT_ONCE
) -> None:
    """Lead or stand by, and while leading run passes (serving `tables_at_once` tables
    side by side), until `stop()` says so."""
    leadership = Leadership()
    try:
        with timers_workers(tables_at_once) as workers:
            _loop(leadership, workers, stop)
    finally:
        leadership.release()


@contextlib.contextmanager
def timers_workers(count: int) -> Iterator[Executor]:
    """`count` threads to serve tables side by side; each closes its database connection
    when they stop (the pool would otherwise keep every thread's session open)."""
    with ThreadPoolExecutor(count, thread_name_prefix="timers") as workers:
        try:
            yield workers
        finally:
            # One task a thread: each waits at the barrier until all have one.
            everyone = threading.Barrier(count)

            def close(_: int) -> None:
                everyone.wait()
                connection.close()

            list(workers.map(close, range(count)))


def _loop(leadership: Leadership, workers: Executor, stop: Callable[[], bool]) -> None:
    # When this loop last found it held the lock (monotonic seconds; None: not leading).
    # A leader confirms it, and beats, every HEARTBEAT_EVERY only: it holds the lock as
    # long as its session lives, and a pass run just after losing it would be harmless.
    confirmed: float | None = None
    # Tables refused busy, and when (monotonic seconds) each is tried again.
    resting: dict[int, float] = {}
    stream = StreamWatch()
    while not stop():
        try:
            if confirmed is None or time.monotonic() - confirmed >= HEARTBEAT_EVERY.total_seconds():
                if not leadership.holds():
                    if confirmed is not None:
                        logger.warning("timers: another process leads now; standing by")
                    confirmed = None
                    time.sleep(STANDBY_RETRY.total_seconds())
                    continue
                if confirmed is None:
                    logger.info("timers: leading")
                confirmed = time.monotonic()
                timers_heartbeat(now=timezone.now())
            now = timezone.now()
            seen = stream.check(now=now)
            if seen.down:  # nobody would see a timeout or a deal: hold them (see above)
                time.sleep(WAKE_AT_LEAST_EVERY.total_seconds())
                continue
            clock = time.monotonic()
            resting = {table: until for table, until in resting.items() if until > clock}
            held: frozenset[int] = frozenset()
            if seen.outage is not None:
                resumed = timers_resume(outage=seen.outage, workers=workers, resting=resting)
                held = resumed.pending
                for table in resumed.resting:
                    resting[table] = clock + BUSY_REST.total_seconds()
            done = timers_run_due(now=now, workers=workers, resting=resting.keys() | held)
            for table in done.busy:
                resting[table] = clock + BUSY_REST.total_seconds()
        except (DatabaseError, psycopg.Error, *OUTAGES) as exc:
            # The loop's own queries failed (the database is away, say): start again on
            # a fresh connection (the leader lock's is renewed when it failed).
            logger.warning("timers: pass failed: %s: %s", type(exc).__name__, exc)
            connection.close()
            confirmed = None
            time.sleep(ERROR_RETRY.total_seconds())
            continue
        if done.moved:
            continue  # what it ran may have made more due (a hand ending: the next deal)
        wake = now + WAKE_AT_LEAST_EVERY
        if done.next_due is not None:
            wake = min(wake, done.next_due)
        time.sleep(max(0.0, (wake - timezone.now()).total_seconds()))
