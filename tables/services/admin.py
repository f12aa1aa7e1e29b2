"""Admin commands on tables: open (which also forgets the failures that paused a table),
pause, close."""

from tables.messages import TableStatusChanged
from tables.models import Table, TableStatus
from tables.services.command import TableCommand, table_command, table_failures_clear
from tables.services.hands import hand_start_mark_due


@table_command
def table_status_set(cmd: TableCommand, *, status: TableStatus) -> Table:
    """Open (deal when two are ready), pause (finish the hand, deal no more) or close
    (no new players and no deals; those seated may still leave) a table."""
    table = cmd.table
    if status == TableStatus.OPEN:
        # The admin has looked at what paused it: the table gets a fresh start.
        table_failures_clear(cmd)
    if table.status == status:
        return table
    table.status = status
    cmd.save_table("status")
    cmd.emit(TableStatusChanged(status=status))
    if status == TableStatus.OPEN:
        hand_start_mark_due(cmd)
    return table
