"""Scheduling the table's timed work on Celery, after the commit that made it due.

Tasks are sent by name so that services need not import the tasks module (which imports
the services). Each task is idempotent: it re-checks, under the table lock, that what it
was scheduled for is still what is waiting (STYLE §12).
"""

from datetime import datetime

from django.db import transaction

from poker_room.celery import app

ACTION_TIMEOUT_TASK = "tables.action_timeout"
HAND_START_TASK = "tables.hand_start"


def schedule_turn_timeout(*, table_id: int, hand_id: int, turn: int, at: datetime) -> None:
    _send_on_commit(ACTION_TIMEOUT_TASK, args=(table_id, hand_id, turn), eta=at)


def schedule_hand_start(*, table_id: int, at: datetime) -> None:
    _send_on_commit(HAND_START_TASK, args=(table_id,), eta=at)


def _send_on_commit(name: str, *, args: tuple[int, ...], eta: datetime) -> None:
    # Robust: the command has committed, so a broker that is down must not turn its
    # answer into a 500 (Django logs the error). The sweep re-arms what was not sent.
    # A function, not a partial: Django names a failing robust callback by __qualname__.
    def send() -> None:
        app.send_task(name, args=args, eta=eta)

    transaction.on_commit(send, robust=True)
