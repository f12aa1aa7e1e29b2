"""Celery tasks of the tables: thin and idempotent; the services decide (STYLE §12).

Only the room-wide jobs run on Celery. A table's own timed work (turn timeouts, the next
deal) runs from the deadlines in its rows, in the timer loop (tables/timers.py).
"""

import logging
from datetime import UTC, date, datetime, timedelta

from celery import shared_task

from tables.rake import rake_report_build

logger = logging.getLogger(__name__)


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
