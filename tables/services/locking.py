"""Taking a table's lock (the one writer per table, STYLE §4), and the guard every table
command runs in.

`table_command` replaces `@transaction.atomic` on every public table service and task
entry point. Besides the transaction, it keeps one broken table from hurting the room:

* A refusal (`TableError`, `CashierError`) is the command working as designed: it
  changes nothing, and neither counts as a failure nor clears one.
* A database, Redis or broker outage is not the table's fault either: pausing every
  table during a restart of Redis would stop the room for no reason. It is re-raised
  untouched.
* Any other exception is a bug that the same command will most likely hit again (a
  hand the engine cannot move on, say). It is logged with the table id and counted on
  the table, in a fresh transaction once the failing one rolled back; at
  `FAILURES_BEFORE_PAUSE` in a row the table is paused with a reason that the admin and
  /healthz show. A command that moves the table on clears the count (not the reason:
  an admin re-opens the table, see `table_failures_clear`).

Only the outermost command records: a command called inside another transaction (a
test's, or another command's) cannot write past its caller's rollback.
"""

import functools
import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

import redis.exceptions
from django.db import DatabaseError, InterfaceError, OperationalError, transaction
from kombu.exceptions import OperationalError as BrokerError

from cashier.exceptions import CashierError
from tables.exceptions import TableError, TableNotFound
from tables.models import Table, TableStatus
from tables.services.recorder import Recorder

logger = logging.getLogger(__name__)

FAILURES_BEFORE_PAUSE = 2
REFUSALS: tuple[type[Exception], ...] = (TableError, CashierError)
# Outages of what the room runs on (they end by themselves; the table is not broken).
OUTAGES: tuple[type[Exception], ...] = (
    OperationalError,
    InterfaceError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    BrokerError,
    OSError,
)

P = ParamSpec("P")
R = TypeVar("R")

# The tables locked by the command running in this context, with their stream version
# when locked (see `table_lock`).
_locked: ContextVar[list[tuple[Table, int]] | None] = ContextVar("tables_locked", default=None)


def table_lock(*, table_id: int) -> Table:
    """Lock and return the table row; the caller must be inside a transaction."""
    try:
        table = (
            Table.objects.select_for_update(no_key=True, of=("self",))
            .select_related("stake_level")
            .get(pk=table_id)
        )
    except (Table.DoesNotExist, ValueError, TypeError):
        raise TableNotFound(f"There is no table {table_id}.") from None
    locked = _locked.get()
    if locked is not None:
        locked.append((table, table.event_seq))
    return table


def table_command(func: Callable[P, R]) -> Callable[P, R]:
    """Run a table command (keyword `table_id`) in one transaction, guarded as above."""

    @functools.wraps(func)
    def command(*args: P.args, **kwargs: P.kwargs) -> R:
        table_id = kwargs.get("table_id")
        outermost = not transaction.get_connection().in_atomic_block
        locked: list[tuple[Table, int]] = []
        token = _locked.set(locked)
        try:
            with transaction.atomic():
                result = func(*args, **kwargs)
                # A command that moved the table on (its stream advanced) clears the count;
                # one that found nothing to do (a stale timeout, a deal with a hand in
                # progress) proves nothing. Free when nothing failed: read with the lock.
                moved = [t.pk for t, seq in locked if t.failure_count and t.event_seq != seq]
                if moved:
                    Table.objects.filter(pk__in=moved).update(failure_count=0)
        except REFUSALS:
            raise
        except OUTAGES:
            raise
        except Exception as exc:
            logger.exception("table %s: %s failed", table_id, func.__qualname__)
            if outermost and isinstance(table_id, int):
                table_failure_record(table_id=table_id, command=func.__qualname__, error=exc)
            raise
        finally:
            _locked.reset(token)
        return result

    return command


def table_failure_record(*, table_id: int, command: str, error: Exception) -> None:
    """Count a failed command on the table; pause the table at the second in a row.

    Runs in its own transaction (the failing one has rolled back). Never raises: the
    caller re-raises the original error, which is the one worth seeing.
    """
    try:
        with transaction.atomic():
            table = Table.objects.select_for_update(no_key=True).filter(pk=table_id).first()
            if table is None:
                return
            table.failure_count += 1
            fields = ["failure_count"]
            if table.failure_count >= FAILURES_BEFORE_PAUSE and not table.paused_reason:
                table.paused_reason = (
                    f"{command} failed {table.failure_count} times in a row, last with "
                    f"{type(error).__name__}: {error}"
                )[:500]
                fields.append("paused_reason")
                if table.status == TableStatus.OPEN:
                    table.status = TableStatus.PAUSED
                    fields.append("status")
                    recorder = Recorder(table)
                    recorder.message({"type": "table_status", "status": TableStatus.PAUSED})
                    recorder.save()
                logger.error("table %s paused: %s", table_id, table.paused_reason)
            table.save(update_fields=fields)
    except (DatabaseError, *OUTAGES):
        logger.exception("table %s: the failure of %s could not be recorded", table_id, command)


def table_failures_clear(*, table: Table) -> None:
    """Forget the table's failures (an admin re-opened it); the caller holds the lock."""
    if table.failure_count or table.paused_reason:
        table.failure_count = 0
        table.paused_reason = ""
        table.save(update_fields=["failure_count", "paused_reason"])
