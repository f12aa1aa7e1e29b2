"""Celery tasks of the tables: thin and idempotent; the services decide (STYLE §12)."""

import logging
from datetime import timedelta

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from tables.models import Hand, HandStatus, Table, TableStatus
from tables.scheduling import ACTION_TIMEOUT_TASK, HAND_START_TASK
from tables.services.hands import hand_start_if_ready
from tables.services.locking import table_lock
from tables.services.play import turn_timeout

logger = logging.getLogger(__name__)


@shared_task(name=ACTION_TIMEOUT_TASK)
def action_timeout_task(table_id: int, hand_id: int, turn: int) -> bool:
    return turn_timeout(table_id=table_id, hand_id=hand_id, turn=turn)


@shared_task(name=HAND_START_TASK)
def hand_start_task(table_id: int) -> int | None:
    with transaction.atomic():
        hand = hand_start_if_ready(table=table_lock(table_id=table_id))
    return hand.id if hand else None


@shared_task(name="tables.sweep")
def sweep_task() -> dict[str, int]:
    """Run what a lost task would have run, so that no table ever hangs.

    Turns whose deadline passed a while ago get their timeout; open tables with no hand
    and the pause over get a deal attempt.
    """
    now = timezone.now()
    overdue = Hand.objects.filter(
        status=HandStatus.IN_PROGRESS, turn_deadline__lt=now - timedelta(seconds=2)
    ).values_list("table_id", "id", "turn_version")
    timeouts = sum(
        turn_timeout(table_id=table_id, hand_id=hand_id, turn=turn)
        for table_id, hand_id, turn in overdue
    )
    idle = (
        Table.objects.filter(status=TableStatus.OPEN)
        .exclude(hands__status=HandStatus.IN_PROGRESS)
        .filter(seat_set__isnull=False)
        .distinct()
        .values_list("id", flat=True)
    )
    started = sum(hand_start_task(table_id) is not None for table_id in idle)
    if timeouts or started:
        logger.warning("sweep: %d overdue turns timed out, %d hands started", timeouts, started)
    return {"timeouts": timeouts, "started": started}
