"""Celery tasks of the cashier: thin wrappers over services (HackSoft)."""

import datetime
import logging

from celery import shared_task

from cashier.audit import ledger_audit
from cashier.rake import rake_report_build

logger = logging.getLogger(__name__)

LOGGED_DISCREPANCIES = 20


@shared_task
def ledger_audit_task() -> bool:
    """Run the ledger audit (hourly, by beat); log an error on any discrepancy."""
    report = ledger_audit()
    if report.ok:
        logger.info("%s", report.summary())
    else:
        shown = "\n".join(str(d) for d in report.discrepancies[:LOGGED_DISCREPANCIES])
        logger.error("%s\n%s", report.summary(), shown)
    return report.ok


@shared_task
def rake_report_daily_task(day: str | None = None) -> int:
    """(Re)build the rake report of `day` (ISO date; by default yesterday, UTC), daily by
    beat. Idempotent: a rebuild replaces the day's rows. Returns the day's rake."""
    if day is None:
        when = datetime.datetime.now(tz=datetime.UTC).date() - datetime.timedelta(days=1)
    else:
        when = datetime.date.fromisoformat(day)
    report = rake_report_build(day=when)
    logger.info("rake report of %s: %s hands, %s cents", when, report.hands, report.rake)
    return report.rake
