"""Celery tasks of the room as a whole (not of one app): thin wrappers over services."""

from celery import shared_task

from poker_room.postgres.upkeep import upkeep_run


@shared_task
def database_upkeep_task() -> list[str]:
    """Vacuum and analyze what autovacuum would have, when the server's is off (by beat,
    every settings.DATABASE_UPKEEP_SECONDS). Returns the tables it vacuumed or analyzed."""
    report = upkeep_run()
    return [*report.vacuumed, *report.analyzed]
