"""Scheduling the table's timed work on Celery, after the commit that made it due.

Tasks are sent by name so that services need not import the tasks module (which imports
the services). Each task is idempotent: it re-checks, under the table lock, that what it
was scheduled for is still what is waiting (STYLE §12).
"""

from datetime import datetime
from functools import partial

from django.db import transaction

from poker_room.celery import app

ACTION_TIMEOUT_TASK = "tables.action_timeout"
HAND_START_TASK = "tables.hand_start"


def schedule_turn_timeout(*, table_id: int, hand_id: int, turn: int, at: datetime) -> None:
    transaction.on_commit(
        partial(app.send_task, ACTION_TIMEOUT_TASK, args=(table_id, hand_id, turn), eta=at)
    )


def schedule_hand_start(*, table_id: int, at: datetime) -> None:
    transaction.on_commit(partial(app.send_task, HAND_START_TASK, args=(table_id,), eta=at))
