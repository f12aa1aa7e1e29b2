"""Celery tasks of the tables: thin and idempotent; the services decide (STYLE §12).

Every task works table by table and isolates each one: a table whose command fails is
logged with its id (and counted, see `tables.services.command.table_command`) and the
task goes on with the next table, so one broken table never stops the room's safety net.
"""

import logging
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar

from celery import shared_task
from celery.signals import worker_ready
from django.utils import timezone

from tables.models import Hand, HandStatus, Heartbeat, Table, TableStatus
from tables.rake import rake_report_build
from tables.scheduling import ACTION_TIMEOUT_TASK, HAND_START_TASK, schedule_turn_timeout
from tables.services.command import OUTAGES, REFUSALS, TableCommand, table_command
from tables.services.hands import hand_start_if_ready
from tables.services.play import turn_timeout

logger = logging.getLogger(__name__)

SWEEP_TASK = "tables.sweep"
# How long after its deadline a turn counts as lost rather than about to be timed out
# by its own task (a margin for clocks and a busy worker; both would be harmless).
SWEEP_GRACE = timedelta(seconds=1)
SWEEP_HEARTBEAT = "sweep"

R = TypeVar("R")


def _isolated(what: str, table_id: int, run: Callable[[], R]) -> R | None:
    """Run one table's command; log what went wrong with the table id and carry on."""
    try:
        return run()
    except REFUSALS as exc:
        logger.info("table %s: %s refused: %s", table_id, what, exc)
    except OUTAGES as exc:
        logger.warning("table %s: %s not run: %s: %s", table_id, what, type(exc).__name__, exc)
    except Exception:
        # table_command has logged it with its traceback and counted it on the table.
        logger.warning("table %s: %s failed; going on with the other tables", table_id, what)
    return None


@table_command
def hand_start_due(cmd: TableCommand) -> Hand | None:
    """Deal the table's next hand if it may be dealt now (the hand-start task)."""
    return hand_start_if_ready(cmd)


@shared_task(name=ACTION_TIMEOUT_TASK)
def action_timeout_task(table_id: int, hand_id: int, turn: int) -> bool:
    def run() -> bool:
        return turn_timeout(table_id=table_id, hand_id=hand_id, turn=turn)

    return bool(_isolated("turn timeout", table_id, run))


@shared_task(name=HAND_START_TASK)
def hand_start_task(table_id: int) -> int | None:
    hand = _isolated("hand start", table_id, lambda: hand_start_due(table_id=table_id))
    return hand.id if hand else None


@shared_task(name=SWEEP_TASK)
def sweep_task(startup: bool = False) -> dict[str, int]:
    """Run what a lost task would have run, so that no table ever hangs.

    Turns whose deadline passed a while ago get their timeout; open tables with no hand
    and the pause over get a deal attempt. Tables paused by failures are left to the
    admin. With `startup` (a worker that just started: the tasks a killed worker held
    are lost with it) every turn still to come gets its timeout scheduled again too.
    Records its run for /healthz, which reports a beat that stopped sending it.
    """
    now = timezone.now()
    if not startup:  # a worker's own startup sweep says nothing about beat
        Heartbeat.objects.update_or_create(name=SWEEP_HEARTBEAT, defaults={"at": now})
    in_progress = Hand.objects.filter(
        status=HandStatus.IN_PROGRESS, turn_deadline__isnull=False, table__paused_reason=""
    )
    overdue = in_progress.filter(turn_deadline__lt=now - SWEEP_GRACE)
    timeouts = failed = 0
    for table_id, hand_id, turn in overdue.values_list("table_id", "id", "turn_version"):
        acted = _isolated(
            "sweep timeout",
            table_id,
            lambda t=table_id, h=hand_id, n=turn: turn_timeout(table_id=t, hand_id=h, turn=n),
        )
        timeouts += acted is True
        failed += acted is None
    rescheduled = 0
    if startup:
        pending = in_progress.filter(turn_deadline__gte=now - SWEEP_GRACE)
        for table_id, hand_id, turn, deadline in pending.values_list(
            "table_id", "id", "turn_version", "turn_deadline"
        ):
            schedule_turn_timeout(table_id=table_id, hand_id=hand_id, turn=turn, at=deadline)
            rescheduled += 1
    idle = (
        Table.objects.filter(status=TableStatus.OPEN, paused_reason="")
        .exclude(hands__status=HandStatus.IN_PROGRESS)
        .filter(seat_set__isnull=False)
        .distinct()
        .values_list("id", flat=True)
    )
    started = 0
    for table_id in idle:
        hand = _isolated("sweep deal", table_id, lambda t=table_id: hand_start_due(table_id=t))
        started += hand is not None
    if timeouts or started or failed or rescheduled:
        logger.warning(
            "sweep: %d overdue turns timed out, %d hands started, %d tables failed, "
            "%d pending turns rescheduled",
            timeouts,
            started,
            failed,
            rescheduled,
        )
    return {"timeouts": timeouts, "started": started, "failed": failed, "rescheduled": rescheduled}


@worker_ready.connect
def _recover_after_start(sender: object = None, **kwargs: object) -> None:
    """A worker that starts asks for a startup sweep: if it replaces one that was killed,
    the turn timeouts that one held (Redis gives them back only after the broker's
    visibility timeout, an hour) are scheduled again now, and overdue ones run at once."""
    from poker_room.celery import app

    app.send_task(SWEEP_TASK, kwargs={"startup": True})


@shared_task
def rake_report_daily_task(day: str | None = None) -> int:
    """(Re)build the rake report of `day` (ISO date; by default yesterday, UTC), daily by
    beat. Idempotent: a rebuild replaces the day's rows. Returns the day's rake."""
    if day is None:
        when = datetime.now(tz=UTC).date() - timedelta(days=1)
    else:
        when = date.fromisoformat(day)
    report = rake_report_build(day=when)
    logger.info("rake report of %s: %s hands, %s cents", when, report.hands, report.rake)
    return report.rake
