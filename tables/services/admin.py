"""Admin commands on tables: open (which also forgets the failures that paused a table),
pause, close."""

from django.utils import timezone

from tables.models import Table, TableStatus
from tables.scheduling import schedule_hand_start
from tables.selectors import hand_in_progress
from tables.services.locking import table_command, table_failures_clear, table_lock
from tables.services.recorder import Recorder


@table_command
def table_status_set(*, table_id: int, status: TableStatus) -> Table:
    """Open (deal when two are ready), pause (finish the hand, deal no more) or close
    (no new players and no deals; those seated may still leave) a table."""
    table = table_lock(table_id=table_id)
    if status == TableStatus.OPEN:
        # The admin has looked at what paused it: the table gets a fresh start.
        table_failures_clear(table=table)
    if table.status == status:
        return table
    table.status = status
    table.save(update_fields=["status"])
    recorder = Recorder(table)
    recorder.message({"type": "table_status", "status": status})
    recorder.save()
    if status == TableStatus.OPEN and hand_in_progress(table=table) is None:
        schedule_hand_start(table_id=table.id, at=timezone.now())
    return table
