"""Celery tasks of the room as a whole (not of one app): thin wrappers over services."""

from celery import shared_task
from django.utils import timezone

from poker_room.postgres.upkeep import upkeep_run
from poker_room.room_status import CELERY_HEARTBEAT
from tables.models import Heartbeat


@shared_task
def database_upkeep_task() -> list[str]:
    """Vacuum and analyze what autovacuum would have, when the server's is off (by beat,
    every settings.DATABASE_UPKEEP_SECONDS). Returns the tables it vacuumed or analyzed."""
    report = upkeep_run()
    return [*report.vacuumed, *report.analyzed]


@shared_task
def room_heartbeat_task() -> None:
    """Record that a worker ran a task beat sent (every settings.ROOM_HEARTBEAT_SECONDS):
    the room status's `celery` and `beat` checks read it (poker_room/room_status.py)."""
    Heartbeat.objects.update_or_create(name=CELERY_HEARTBEAT, defaults={"at": timezone.now()})
