"""Celery tasks of the cashier: thin wrappers over services (HackSoft)."""

import logging

from celery import shared_task

from cashier.audit import ledger_audit

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
